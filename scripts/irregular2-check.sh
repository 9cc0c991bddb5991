#!/usr/bin/env bash
# Issue 28, second turn, on a GPU machine in one call (< 8 minutes on a 16-core H100 host):
# builds test_gpu, cgsolve and spmvbench; runs the GPU tests of the HLL HYB tail and the
# balanced kernel (SpMV against the host reference, every loop against the CPU's answer); then
# measures, same process family and machine: cgsolve with default flags against the generic
# loop with cuSPARSE (and stream, and balanced) on gen:powerlaw at 20k/200k/2M rows and data/;
# --format hll on power-law 2M; spmvbench hll and balanced against cuSPARSE CSR on it;
# --format auto's inspection time. Logs under $OUT (or ./irregular2-out), summary last.
# Default and cuSPARSE rows: median of 3 processes on the small matrices; others one process
# (each reports the median SpMV of its 200 iterations).
# Usage: [SKIP_BUILD=1] scripts/irregular2-check.sh [BUILD_DIR]   (SKIP_BUILD: BUILD_DIR is built)
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-gpu}
OUT=${OUT:-$PWD/irregular2-out}
mkdir -p "$OUT"
start=$(date +%s)
summary=()
note() { summary+=("$*"); echo "$*"; }

if [ -z "${SKIP_BUILD:-}" ]; then
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DCGSOLVE_WITH_MPI=OFF -DCGSOLVE_WITH_NCCL=OFF > "$OUT/configure.log" 2>&1 ||
    { note "configure FAILED (see configure.log)"; tail -20 "$OUT/configure.log"; exit 1; }
  cmake --build "$BUILD" -j16 --target cgsolve spmvbench test_gpu > "$OUT/build.log" 2>&1 ||
    { note "build FAILED (see build.log)"; grep -m20 -E 'error' "$OUT/build.log"; exit 1; }
fi
note "build: $(( $(date +%s) - start )) s; tree $(git rev-parse --short HEAD 2>/dev/null)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/device.txt" 2>&1
note "device: $(head -1 "$OUT/device.txt")"

timeout 240 "$BUILD/tests/test_gpu" \
  -tc='*balanced*,*HYB*,*long rows*,GPU SpMV: every kernel*' > "$OUT/test_gpu.log" 2>&1
note "test_gpu (balanced, HYB tail, long rows, every SpMV kernel): rc $? — $(grep -E 'test cases:' "$OUT/test_gpu.log" | tail -1)"

# One cgsolve run: label, args. Prints kernel, loop, us/iteration, SpMV median, inspection.
one() {
  local label=$1; shift
  local json="$OUT/run-$(echo "$label" | tr ' /:' '___').json"
  timeout 120 "$BUILD/app/cgsolve" "$@" --device gpu --precond jacobi --tol 0 --max-iters 200 \
    --quiet --report "$json" > /dev/null 2>> "$OUT/cgsolve-errors.log"
  python3 - "$json" "$label" <<'PY' || echo "$label: failed"
import json, sys
j = json.load(open(sys.argv[1])); t = j['times']; s = j['spmv']; p = j['plan']
print('%-40s %-9s %-10s %9.1f %9.1f %8.3f' % (sys.argv[2], p.get('kernel'), p['loop'],
      t['per_iteration_s'] * 1e6, (s['median_s'] or 0) * 1e6, t['inspect_s']))
PY
}
# The median by us/iteration of `reps` processes.
med() {
  local reps=$1; shift
  for i in $(seq "$reps"); do one "$@"; done | sort -k4 -n | sed -n "$(( (reps + 1) / 2 ))p"
}
{
  printf '%-40s %-9s %-10s %9s %9s %8s\n' run kernel loop "us/iter" "spmv us" "inspect"
  for m in gen:powerlaw:20000 gen:powerlaw:200000 data/matrices/*.mtx data/matrices/*.mtx.gz \
           data/systems/Exnet_EXN_step3.mtx.gz data/systems/Net3_step1.mtx.gz; do
    name=$(basename "$m")
    med 3 "$name default" --matrix "$m"
    med 3 "$name csr/cusparse generic" --matrix "$m" --kernel cusparse --gpu-loop generic
    one "$name csr/stream generic" --matrix "$m" --kernel stream --gpu-loop generic
    one "$name csr/balanced fused" --matrix "$m" --kernel balanced
  done
  m=gen:powerlaw:2000000
  one "powerlaw2M default" --matrix $m
  one "powerlaw2M csr/cusparse generic" --matrix $m --kernel cusparse --gpu-loop generic
  one "powerlaw2M csr/stream generic" --matrix $m --kernel stream --gpu-loop generic
  one "powerlaw2M csr/balanced generic" --matrix $m --kernel balanced --gpu-loop generic
  one "powerlaw2M --format hll (default layout)" --matrix $m --format hll
  one "powerlaw2M --format hll --hll-tail 10" --matrix $m --format hll --hll-tail 10
  one "powerlaw2M --format hll --hll-tail none" --matrix $m --format hll --hll-tail 2147483647
  one "powerlaw2M --format auto" --matrix $m --format auto
} 2>&1 | tee "$OUT/cgsolve.txt"

timeout 150 "$BUILD/bench/spmvbench" gen:powerlaw:2000000 --devices gpu --sorted no --runs 30 \
  --gpu-kernels csr:cusparse,csr:stream,csr:balanced,hll:thread,hll:cusparse,coo:cusparse \
  --out-dir "$OUT/spmvbench" > "$OUT/spmvbench.log" 2>&1
note "spmvbench rc $?:"
python3 - "$OUT/spmvbench/spmv.csv" <<'PY' > "$OUT/spmvbench.txt" 2>&1 || tail -30 "$OUT/spmvbench.log" > "$OUT/spmvbench.txt"
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print('  %-28s %10s us   vs reference %s' % (r.get('backend'), r.get('median_us'), r.get('speedup_vs_ref', '')))
PY

echo; echo "=== summary ($(( $(date +%s) - start )) s) ==="
for line in "${summary[@]}"; do echo "$line"; done
echo "--- cgsolve (us/iteration; SpMV median; inspection s) ---"
cat "$OUT/cgsolve.txt"
echo "--- default / the fastest row of the same matrix (target: <= 1.1) ---"
python3 - "$OUT/cgsolve.txt" <<'PY'
import collections, sys
rows = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) < 6 or f[0] == 'run' or 'hll' in line or 'auto' in line:
        continue
    try:
        us = float(f[-3])
    except ValueError:
        continue
    rows[f[0]][' '.join(f[1:-5])] = us
for m, r in rows.items():
    if 'default' in r:
        best = min(r.values())
        print('  %-28s default %8.1f us  fastest %8.1f us (%s)  ratio %.2f' % (
            m, r['default'], best, min(r, key=r.get), r['default'] / best))
PY
echo "--- spmvbench gen:powerlaw:2000000 ---"
cat "$OUT/spmvbench.txt" 2>/dev/null
