#!/usr/bin/env bash
# CPU benchmarks of cgsolve in one command: builds spmvbench and cgbench, runs them on the real
# matrices and on generated ones (serial and OpenMP rows, each against Eigen with the same
# threads), draws the plots, and writes everything into one folder; a short summary comes last.
#
# Usage: scripts/bench-cpu.sh [OUT_DIR]        (default: $OUT, else $BUILD_DIR/bench-out-cpu)
# Env:   BUILD_DIR  build folder (default build-bench)
#        JOBS       build jobs (default 2)
#        THREADS    OpenMP threads for the cpu rows and Eigen (default 0 = every core)
#        SIZE       small (default: a few minutes on 2 cores) or large (adds n ~ 10^6)
#        RUNS       timed samples per SpMV row (default 50); REPEATS CG solves per row (default 3)
#        ITERATIONS CG iterations per solve (default 200)
#        MATRICES   real matrices (default ../shared/data/matrices, else data/matrices)
#        SYSTEMS    EPANET systems (default ../shared/data/epanet-systems, else data/systems)
#        PYTHON     a Python with matplotlib (default /usr/bin/python3: Debian's, not pyenv's)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

BUILD_DIR=${BUILD_DIR:-$ROOT/build-bench}
OUT=${1:-${OUT:-$BUILD_DIR/bench-out-cpu}}
JOBS=${JOBS:-2}
THREADS=${THREADS:-0}
SIZE=${SIZE:-small}
RUNS=${RUNS:-50}
REPEATS=${REPEATS:-3}
ITERATIONS=${ITERATIONS:-200}
PYTHON=${PYTHON:-/usr/bin/python3}
[[ -x $PYTHON ]] || PYTHON=python3
first_dir() { local d; for d in "$@"; do [[ -d $d ]] && { echo "$d"; return; }; done; echo ""; }
MATRICES=${MATRICES:-$(first_dir ../shared/data/matrices data/matrices)}
SYSTEMS=${SYSTEMS:-$(first_dir ../shared/data/epanet-systems data/systems)}
mkdir -p "$OUT"

echo "== build ($BUILD_DIR)"
if ! { cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release &&
        cmake --build "$BUILD_DIR" -j "$JOBS" --target spmvbench cgbench; } > "$OUT/build.log" 2>&1; then
  tail -30 "$OUT/build.log"
  echo "bench-cpu: build failed (see $OUT/build.log)"
  exit 2
fi
BIN=$BUILD_DIR/bench

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

spmv_generated=(gen:waternet:15000 gen:poisson2d:300 gen:poisson3d:40 gen:banded:100000:8
                gen:powerlaw:100000 gen:waternet:200000)
cg_generated=(gen:waternet:1000 gen:waternet:15000 gen:poisson2d:100 gen:poisson2d:300
              gen:poisson3d:40 gen:waternet:100000)
if [[ $SIZE == large ]]; then
  spmv_generated+=(gen:poisson2d:1000 gen:poisson3d:100 gen:powerlaw:1000000 gen:waternet:1000000)
  cg_generated+=(gen:poisson2d:1000 gen:waternet:1000000)
fi

status=0
echo "== spmvbench ($(nproc) cores; log: $OUT/spmvbench.txt)"
"$BIN/spmvbench" ${MATRICES:+"$MATRICES"} "${systems[@]}" "${spmv_generated[@]}" \
  --devices serial,cpu --threads "$THREADS" --sorted both --runs "$RUNS" --cpu-copy-mib 256 \
  --out-dir "$OUT" > "$OUT/spmvbench.txt" 2> "$OUT/spmvbench.log" || status=$?
echo "spmvbench exit $status"

cg_status=0
echo "== cgbench (log: $OUT/cgbench.txt)"
"$BIN/cgbench" ${MATRICES:+"$MATRICES"} "${systems[@]}" "${cg_generated[@]}" \
  --devices serial,cpu --threads "$THREADS" --iterations "$ITERATIONS" --repeats "$REPEATS" \
  --cpu-copy-mib 256 --out-dir "$OUT" > "$OUT/cgbench.txt" 2> "$OUT/cgbench.log" || cg_status=$?
echo "cgbench exit $cg_status"

echo "== plots"
"$PYTHON" scripts/plot_bench.py "$OUT" || true
echo "bench-cpu: results in $OUT (spmvbench.txt and cgbench.txt hold the full tables)"
[[ $status -eq 0 && $cg_status -eq 0 ]]
