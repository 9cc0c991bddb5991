#!/usr/bin/env bash
# GPU benchmarks of cgsolve in one command, on a machine with an NVIDIA GPU (H100/H200, CUDA):
#   build   configure (CUDA, sm_90) and build spmvbench and cgbench into $BUILD_DIR
#   spmv    spmvbench: every GPU format/kernel, rows as given and sorted, against cuSPARSE CSR
#   cg      cgbench: CG per iteration for every GPU kernel against the sample-style
#           cuSPARSE + cuBLAS loop, from water-network scale (n ~ 10^3) to n ~ 10^7
#   plots   figures and summary.md (figures need matplotlib; without it, tables only)
# and prints a short summary last. Results accumulate in $BUILD_DIR/bench-results and are copied
# to $OUT after every phase, so each phase may run as a separate command on the same machine.
#
# Usage: scripts/bench-gpu.sh [phase ...]       (default: build spmv cg plots)
#        scripts/bench-gpu.sh stage             (on this machine: copy ../shared's matrices and
#            EPANET systems into build-bench-data/, an ignored folder to carry to the GPU machine)
# Env:   OUT        where results go (default $BUILD_DIR/bench-out-gpu)
#        BUILD_DIR  default build-bench-gpu; JOBS default nproc
#        CGS_DEPS   bundled header-only dependencies for a machine without them, as made by
#                   scripts/gpu-check.sh bundle (default build-cuda/gpudeps)
#        SIZE       full (default) or quick (a smoke run: small matrices only)
#        RUNS       timed samples per SpMV row (default 50); ITERATIONS CG iterations (default 200)
#        MATRICES, SYSTEMS  real matrices and EPANET systems (default ../shared/data/..., else
#                   build-bench-data/..., else data/matrices and data/systems)
#        PYTHON     default /usr/bin/python3
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD

first_dir() { local d; for d in "$@"; do [[ -d $d ]] && { echo "$d"; return; }; done; echo ""; }

if [[ ${1:-} == stage ]]; then
  mkdir -p build-bench-data
  cp -r ../shared/data/matrices ../shared/data/epanet-systems build-bench-data/
  du -sh build-bench-data
  echo "carry build-bench-data (and build-cuda/gpudeps if the GPU machine lacks the dependencies)"
  exit 0
fi

BUILD_DIR=${BUILD_DIR:-$ROOT/build-bench-gpu}
OUT=${OUT:-$BUILD_DIR/bench-out-gpu}
RESULTS=$BUILD_DIR/bench-results
JOBS=${JOBS:-$(nproc)}
CGS_DEPS=${CGS_DEPS:-$ROOT/build-cuda/gpudeps}
SIZE=${SIZE:-full}
RUNS=${RUNS:-50}
ITERATIONS=${ITERATIONS:-200}
PYTHON=${PYTHON:-/usr/bin/python3}
[[ -x $PYTHON ]] || PYTHON=python3
MATRICES=${MATRICES:-$(first_dir ../shared/data/matrices build-bench-data/matrices data/matrices)}
SYSTEMS=${SYSTEMS:-$(first_dir ../shared/data/epanet-systems build-bench-data/epanet-systems data/systems)}
PHASES=("$@")
[[ ${#PHASES[@]} -eq 0 ]] && PHASES=(build spmv cg plots)
mkdir -p "$OUT" "$RESULTS"
export CGS_COMMIT=${CGS_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}

STATUS=0
SUMMARY=()
note() { SUMMARY+=("$(printf '%-6s %-5s %5ss  %s' "$1" "$2" "$3" "$4")"); [[ $2 == PASS ]] || STATUS=1; }
now() { date +%s; }
publish() { cp -r "$RESULTS"/. "$OUT"/ 2>/dev/null || true; }

nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm,clocks.max.mem \
  --format=csv > "$RESULTS/machine.txt" 2>&1 || true
nvcc --version 2>/dev/null | tail -1 >> "$RESULTS/machine.txt"

# One matrix per EPANET network: its first Newton trial on file (not the _b / _x vectors).
systems=()
declare -A seen=()
if [[ -n $SYSTEMS ]]; then
  for f in "$SYSTEMS"/*_step*.mtx*; do
    name=$(basename "$f")
    [[ $name =~ _[bx]\.mtx ]] && continue
    network=${name%_step*}
    [[ -n ${seen[$network]:-} ]] && continue
    seen[$network]=1
    systems+=("$f")
  done
fi

# SpMV: both ends of the range; >= 10M nonzeros for the bandwidth target (poisson2d:3000 45M,
# poisson3d:215 69M, banded 34M, waternet:10M 35M, powerlaw:2M 14M).
spmv_generated=(gen:waternet:15000 gen:poisson2d:1000 gen:poisson3d:100 gen:powerlaw:1000000
                gen:waternet:1000000 gen:poisson2d:3000 gen:poisson3d:215 gen:banded:2000000:8
                gen:powerlaw:2000000 gen:waternet:10000000)
# CG: n from 10^3 to 10^7; waternet:15000 is the 8 us target, poisson2d:3000 (n = 9M) the
# minimal-bytes one.
cg_generated=(gen:waternet:1000 gen:waternet:15000 gen:waternet:100000 gen:poisson2d:100
              gen:poisson2d:300 gen:poisson2d:1000 gen:poisson3d:100 gen:waternet:1000000
              gen:poisson2d:3000 gen:poisson3d:215 gen:waternet:10000000)
if [[ $SIZE == quick ]]; then
  spmv_generated=(gen:waternet:15000 gen:poisson2d:1000 gen:poisson3d:100 gen:powerlaw:100000)
  cg_generated=(gen:waternet:1000 gen:waternet:15000 gen:poisson2d:300 gen:poisson2d:1000)
fi

wants() { local p; for p in "${PHASES[@]}"; do [[ $p == "$1" ]] && return 0; done; return 1; }

if wants build; then
  t0=$(now)
  echo "== build ($BUILD_DIR)"
  configure() {
    cmake -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 "$@"
  }
  {
    if ! configure; then
      echo "-- configure failed; retrying with the bundled dependencies in $CGS_DEPS"
      rm -rf "$BUILD_DIR/CMakeCache.txt" "$BUILD_DIR/CMakeFiles"
      configure -DCMAKE_PREFIX_PATH="$CGS_DEPS/usr" -DZLIB_ROOT="$CGS_DEPS/usr"
    fi && cmake --build "$BUILD_DIR" -j "$JOBS" --target spmvbench cgbench
  } > "$RESULTS/build.log" 2>&1
  status=$?
  grep -E "CUDA backends" "$RESULTS/build.log"
  if [[ $status -eq 0 ]] && grep -q "CUDA backends ON" "$RESULTS/build.log"; then
    note build PASS $(($(now) - t0)) "Release, sm_90"
  else
    tail -30 "$RESULTS/build.log"
    note build FAIL $(($(now) - t0)) "see build.log (CUDA must be ON)"
  fi
  publish
fi

BIN=$BUILD_DIR/bench

if wants spmv; then
  t0=$(now)
  echo "== spmvbench (log: spmvbench.txt)"
  "$BIN/spmvbench" ${MATRICES:+"$MATRICES"} "${systems[@]}" "${spmv_generated[@]}" \
    --devices gpu --sorted both --runs "$RUNS" --out-dir "$RESULTS" \
    > "$RESULTS/spmvbench.txt" 2> "$RESULTS/spmvbench.log"
  status=$?
  tail -3 "$RESULTS/spmvbench.log"
  if [[ $status -eq 0 ]]; then note spmv PASS $(($(now) - t0)) "every product checked"
  else note spmv FAIL $(($(now) - t0)) "exit $status (1: a product FAILED its check, 2: bad input, 4: no GPU; see spmvbench.txt)"; fi
  publish
fi

if wants cg; then
  t0=$(now)
  echo "== cgbench (log: cgbench.txt)"
  "$BIN/cgbench" ${MATRICES:+"$MATRICES"} "${systems[@]}" "${cg_generated[@]}" \
    --devices gpu --iterations "$ITERATIONS" --repeats 3 --out-dir "$RESULTS" \
    > "$RESULTS/cgbench.txt" 2> "$RESULTS/cgbench.log"
  status=$?
  tail -3 "$RESULTS/cgbench.log"
  if [[ $status -eq 0 ]]; then note cg PASS $(($(now) - t0)) "every solution checked"
  else note cg FAIL $(($(now) - t0)) "exit $status (1: a solve FAILED its check, 2: bad input, 4: no GPU; see cgbench.txt)"; fi
  publish
fi

if wants plots; then
  t0=$(now)
  echo "== plots and summary"
  "$PYTHON" scripts/plot_bench.py "$RESULTS" > "$RESULTS/plot.log" 2>&1
  status=$?
  if [[ $status -eq 0 ]]; then note plots PASS $(($(now) - t0)) "summary.md$(ls "$RESULTS"/*.png >/dev/null 2>&1 || echo ', no figures: no matplotlib here')"
  else note plots FAIL $(($(now) - t0)) "see plot.log"; fi
  publish
fi

echo
echo "== bench-gpu summary ($(head -2 "$RESULTS/machine.txt" | tail -1)); results in $OUT"
[[ -f $RESULTS/plot.log ]] && grep -E "^(spmv|cg|target)" "$RESULTS/plot.log"
printf '%s\n' "${SUMMARY[@]}"
exit $STATUS
