#!/usr/bin/env bash
# Issue 27 on a GPU machine, in one call: build (sm_90) cgsolve, test_gpu, cgbench and
# batchbench; the cluster-loop tests (and the rest of test_gpu, since auto may now pick it);
# compute-sanitizer on the cluster tests; per-iteration time of the cluster loop beside the
# persistent loop and the cuSPARSE+cuBLAS anchor (cgbench, same process); the batch of 64.
# Usage: OUT=dir scripts/cluster-check.sh [systems dir (default .gpu-data)]
# Env: PHASES="build test sanitize bench batch profile" (default all but profile), BUILD
# (default build-gpu). profile: Nsight Compute's warp-state and source counters of one cluster
# solve (where an iteration's cycles stall).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-gpu-out}
SYSTEMS=${1:-.gpu-data}
BUILD=${BUILD:-build-gpu}
PHASES=${PHASES:-"build test sanitize bench batch"}
FINAL_OUT=$OUT
OUT=$BUILD/logs
mkdir -p "$OUT" "$FINAL_OUT"
trap 'tar czf "$FINAL_OUT/cluster-logs.tgz" -C "$OUT" . 2>/dev/null' EXIT
export PATH=/usr/local/cuda/bin:$PATH
wants() { [[ " $PHASES " == *" $1 "* ]]; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader | tee "$OUT/machine.txt"
BWSN=$SYSTEMS/BWSN_Network_2_step10.mtx.gz

if wants build; then
  t0=$SECONDS
  gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
  { cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 "${gen[@]}" &&
    cmake --build "$BUILD" -j "$(nproc)" --target cgsolve test_gpu cgbench batchbench; } \
    > "$OUT/build.log" 2>&1 || { grep -B3 -A12 "error" "$OUT/build.log" | head -80; exit 1; }
  echo "build: $((SECONDS - t0)) s"
fi
if wants test; then
  t0=$SECONDS
  "$BUILD/tests/test_gpu" -tc='Cluster*' > "$OUT/test_cluster.log" 2>&1
  echo "test_gpu Cluster*: exit $? ($((SECONDS - t0)) s)"; tail -4 "$OUT/test_cluster.log"
  grep -B4 -A14 "ERROR\|FAILED" "$OUT/test_cluster.log" | head -80
  CGS_GPU_TESTS_LIGHT=1 timeout 400 "$BUILD/tests/test_gpu" -tce='Cluster*' > "$OUT/test_gpu_rest.log" 2>&1
  echo "test_gpu, the rest: exit $? ($((SECONDS - t0)) s)"; tail -3 "$OUT/test_gpu_rest.log"
  grep -B4 -A14 "ERROR" "$OUT/test_gpu_rest.log" | head -60
fi
if wants sanitize; then
  for tool in memcheck racecheck synccheck; do
    timeout 200 compute-sanitizer --tool $tool --error-exitcode 86 \
      "$BUILD/tests/test_gpu" -tc='Cluster CG: small*' > "$OUT/sanitize-$tool.log" 2>&1
    echo "compute-sanitizer $tool (cluster loop, small systems): exit $?"
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|test cases" "$OUT/sanitize-$tool.log" | head -3
  done
fi
if wants bench; then
  echo "== cgbench: per CG iteration, persistent vs cluster vs cuSPARSE+cuBLAS (same process)"
  timeout 200 "$BUILD/bench/cgbench" gen:poisson2d:122 "$BWSN" --devices gpu --gpu-kernels csr:scalar \
    --gpu-loops persistent,cluster --precond none --iterations 2000 --repeats 3 --no-auto \
    --out-dir "$OUT/cg-none" > "$OUT/cg-none.txt" 2>&1
  echo "exit $?"; tail -14 "$OUT/cg-none.txt"
  timeout 200 "$BUILD/bench/cgbench" gen:poisson2d:122 "$BWSN" "$SYSTEMS"/Exnet_EXN_step3.mtx.gz \
    --devices gpu --gpu-kernels csr:scalar --gpu-loops persistent,cluster --precond jacobi \
    --iterations 2000 --repeats 3 --no-auto --out-dir "$OUT/cg-jacobi" > "$OUT/cg-jacobi.txt" 2>&1
  echo "exit $?"; tail -16 "$OUT/cg-jacobi.txt"
  echo "== cgsolve plain CG per iteration, gen:poisson2d:122 (report's per_iteration_s)"
  for loop in persistent cluster auto; do
    for i in 1 2 3; do
      "$BUILD/app/cgsolve" --matrix gen:poisson2d:122 --device gpu --precond none --gpu-loop $loop \
        --max-iters 2000 --tol 1e-30 --report "$OUT/r.json" --quiet > /dev/null 2>&1
      python3 -c "import json;j=json.load(open('$OUT/r.json'));print('$loop', j['plan']['loop'], j['result']['iterations'], '%.2f us/iter' % (j['times']['per_iteration_s']*1e6))"
    done
  done | tee "$OUT/periter.txt"
  for m in gen:poisson2d:122 "$BWSN" "$SYSTEMS"/Exnet_EXN_step3.mtx.gz; do
    for pc in none jacobi; do
      for blocks in 1 2 4 8 16; do
        CGSOLVE_CLUSTER_BLOCKS=$blocks "$BUILD/app/cgsolve" --matrix "$m" --device gpu \
          --precond $pc --gpu-loop cluster --max-iters 2000 --tol 1e-30 --report "$OUT/r.json" --quiet > /dev/null 2>&1
        python3 -c "import json;j=json.load(open('$OUT/r.json'));print('$(basename $m) $pc blocks $blocks', j['plan']['loop'], '%.2f us/iter' % (j['times']['per_iteration_s']*1e6))" 2>/dev/null || echo "$(basename $m) $pc blocks $blocks: no fit"
      done
    done
  done | tee -a "$OUT/periter.txt"
  rm -f "$OUT/r.json"
fi
if wants profile; then
  NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  for m in gen:poisson2d:122 "$SYSTEMS"/Exnet_EXN_step3.mtx.gz; do
    for blocks in 1 16; do
      log="$OUT/ncu-$(basename "$m")-$blocks.txt"
      CGSOLVE_CLUSTER_BLOCKS=$blocks timeout 120 "$NCU" --kernel-name regex:cluster_cg_kernel \
        --launch-count 1 --section WarpStateStats --section SchedulerStats --section SourceCounters \
        --section SpeedOfLight "$BUILD/app/cgsolve" --matrix "$m" --device gpu --precond none \
        --gpu-loop cluster --max-iters 500 --tol 1e-30 --quiet > "$log" 2>&1
      echo "== ncu $(basename "$m") blocks $blocks: exit $?"
      grep -E "Duration|Stall|Warp Cycles Per Issued|Issued Warp|No Eligible|Active Warps|Elapsed Cycles" "$log" | head -24
    done
  done
fi
if wants batch; then
  echo "== batchbench: 64 systems at once vs one at a time"
  for blocks in 0 8 16; do
    echo "-- CGSOLVE_CLUSTER_BLOCKS=$blocks (0: the default choice)"
    CGSOLVE_CLUSTER_BLOCKS=$blocks timeout 200 "$BUILD/bench/batchbench" "$BWSN" gen:poisson2d:122 \
      "$SYSTEMS"/Exnet_EXN_step3.mtx.gz --batch 64 --repeats 3 2>&1 | tee -a "$OUT/batch.txt"
  done
fi
