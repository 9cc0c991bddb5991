#!/usr/bin/env bash
# Issue 21 on a GPU machine, in one call: build cgsolve, test_gpu and cgbench (sm_90), run the
# preconditioner GPU tests (and the rest of test_gpu), the study of every preconditioner on
# EPANET's five target systems against CPU serial ic0 (scripts/precond-gpu-study.sh), set-up
# times on large grids, and plain CG per iteration on gen:poisson2d:122. Logs under $OUT.
# Usage: OUT=dir scripts/gpu-precond-check.sh [systems dir (default .gpu-data)]
# Env: PHASES="build test sanitize study ref setup periter" (default all but sanitize), RUNS.
# Everything is logged under $BUILD/logs and packed into $OUT/logs.tgz; the tables are printed.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-gpu-out}
SYSTEMS=${1:-.gpu-data}
BUILD=${BUILD:-build-gpu}
PHASES=${PHASES:-"build test study ref setup periter"}
FINAL_OUT=$OUT
OUT=$BUILD/logs
mkdir -p "$OUT" "$FINAL_OUT"
trap 'tar czf "$FINAL_OUT/logs.tgz" -C "$OUT" . 2>/dev/null; cp "$OUT"/study.txt "$FINAL_OUT"/ 2>/dev/null' EXIT
export PATH=/usr/local/cuda/bin:$PATH
wants() { [[ " $PHASES " == *" $1 "* ]]; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader | tee "$OUT/machine.txt"

if wants build; then
  t0=$SECONDS
  gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
  { cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 "${gen[@]}" &&
    cmake --build "$BUILD" -j "$(nproc)" --target cgsolve test_gpu test_solver cgbench; } \
    > "$OUT/build.log" 2>&1 || { tail -60 "$OUT/build.log"; exit 1; }
  echo "build: $((SECONDS - t0)) s"
fi
if wants test; then
  t0=$SECONDS
  "$BUILD/tests/test_gpu" -tc='GPU preconditioners*' > "$OUT/test_gpu_precond.log" 2>&1
  echo "test_gpu preconditioners: exit $? ($((SECONDS - t0)) s)"; tail -4 "$OUT/test_gpu_precond.log"
  grep -B2 -A12 "ERROR\|FAILED" "$OUT/test_gpu_precond.log" | head -60
  "$BUILD/tests/test_gpu" -tce='GPU preconditioners*' > "$OUT/test_gpu_rest.log" 2>&1
  echo "test_gpu, the rest: exit $?"; tail -3 "$OUT/test_gpu_rest.log"
  grep -B2 -A12 "ERROR" "$OUT/test_gpu_rest.log" | head -40
  "$BUILD/tests/test_solver" -tc='*ic0*,*preconditioner*' > "$OUT/test_solver.log" 2>&1
  echo "test_solver (preconditioners, CPU): exit $?"; tail -2 "$OUT/test_solver.log"
fi
if wants sanitize; then
  # The Release build (kernels carry -lineinfo): memcheck over the preconditioner tests, racecheck
  # over one apply of every program (the operations' kernels).
  for tool in memcheck racecheck; do
    tc='GPU preconditioners*'; [[ $tool == racecheck ]] && tc='GPU preconditioners: one apply*'
    CGS_GPU_TESTS_LIGHT=1 timeout 200 compute-sanitizer --tool $tool --error-exitcode 86 \
      "$BUILD/tests/test_gpu" -tc="$tc" > "$OUT/sanitize-$tool.log" 2>&1
    echo "compute-sanitizer $tool: exit $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|test cases" "$OUT/sanitize-$tool.log"
  done
fi
if wants study; then
  RUNS=${RUNS:-3} scripts/precond-gpu-study.sh "$BUILD" "$SYSTEMS" 2>&1 | tee "$OUT/study.txt"
fi
if wants ref; then
  echo "== cgbench: our ic0 against cuSPARSE IC(0)-PCG (csric02 + SpSV), same process"
  timeout 240 "$BUILD/bench/cgbench" "$SYSTEMS"/*_step*[0-9].mtx.gz --rhs given --devices gpu \
    --gpu-kernels csr:scalar --precond ic0 --cusparse-ic0 --iterations 0 --tol 1e-10 --no-auto \
    --repeats 3 --out-dir "$OUT/ref" > "$OUT/ref.txt" 2>&1
  echo "exit $?"; tail -45 "$OUT/ref.txt"
  timeout 120 "$BUILD/bench/cgbench" gen:poisson2d:1000 --devices gpu --gpu-kernels csr:scalar \
    --precond ic0 --cusparse-ic0 --iterations 0 --tol 1e-10 --no-auto --repeats 1 \
    --out-dir "$OUT/ref-poisson" > "$OUT/ref-poisson.txt" 2>&1
  echo "exit $?"; tail -15 "$OUT/ref-poisson.txt"
fi
if wants setup; then
  echo "== set-up on generated grids (gpu, 10 iterations; setup = reorder + format + precond + upload)"
  MAXITERS=20 RUNS=1 TOL=1e-8 CPU="" PRECONDS="jacobi ic0 ic0:colour fsai:2 cheb:8" GEN="gen:poisson2d:1000 gen:poisson2d:3000" \
    scripts/precond-gpu-study.sh "$BUILD" none 2>&1 | tee "$OUT/setup.txt"
fi
if wants periter; then
  echo "== plain CG per iteration, gen:poisson2d:122"
  for loop in auto persistent graph; do
    for i in 1 2 3; do
      "$BUILD/app/cgsolve" --matrix gen:poisson2d:122 --device gpu --precond none --gpu-loop $loop \
        --max-iters 2000 --tol 1e-30 --report "$OUT/r.json" --quiet > /dev/null 2>&1
      python3 -c "import json;j=json.load(open('$OUT/r.json'));print('$loop', j['plan']['loop'], j['result']['iterations'], '%.2f us/iter' % (j['times']['per_iteration_s']*1e6))"
    done
  done | tee "$OUT/periter.txt"
  rm -f "$OUT/r.json"
fi
