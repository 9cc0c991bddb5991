#!/usr/bin/env bash
# Issue 28 on a GPU machine: the default plan on power-law matrices against the generic loop with
# cuSPARSE's SpMV, same process family, same machine; --format auto's inspection cost; default
# plans on data/ against the best of our kernels and cuSPARSE (generic loop). Medians of 3.
# Usage: scripts/irregular-check.sh BUILD_DIR
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-gpu}
one() {  # label, cgsolve args: prints us/iteration, SpMV median, inspection, kernel, loop
  local label=$1; shift
  for i in 1 2 3; do
    timeout 120 "$BUILD/app/cgsolve" "$@" --device gpu --precond jacobi --tol 0 --max-iters 200 \
      --quiet --report /tmp/irr.json > /dev/null 2>&1
    python3 -c "
import json; j=json.load(open('/tmp/irr.json')); t=j['times']; s=j['spmv']; p=j['plan']
print('%-34s %-10s %-10s %9.1f %9.1f %8.3f' % ('$label', p.get('kernel'), p['loop'], t['per_iteration_s']*1e6,
      (s['median_s'] or 0)*1e6, t['inspect_s']))" 2>/dev/null || echo "$label failed"
  done | sort -k4 -n | sed -n 2p
}
printf '%-34s %-10s %-10s %9s %9s %8s\n' run kernel loop "us/iter" "spmv us" "inspect s"
for m in gen:powerlaw:20000 gen:powerlaw:200000 gen:powerlaw:2000000 data/matrices/bcsstk13.mtx \
         data/matrices/gr_900_900_crg.mtx data/matrices/nos6.mtx data/systems/Exnet_EXN_step3.mtx.gz; do
  name=$(basename "$m")
  one "$name default" --matrix "$m"
  one "$name csr/cusparse generic" --matrix "$m" --kernel cusparse --gpu-loop generic
  one "$name csr/stream generic" --matrix "$m" --kernel stream --gpu-loop generic
  one "$name csr/scalar fused" --matrix "$m" --kernel scalar
  [[ $m == gen:powerlaw:2000000 ]] && one "$name --format auto" --matrix "$m" --format auto
  [[ $m == gen:powerlaw:2000000 ]] && one "$name hll default" --matrix "$m" --format hll
done
