#!/usr/bin/env bash
# The distributed CG on CPU ranks against the single process: time per iteration (median of
# REPEATS runs), the halo's bytes per product, and the waits of the slowest rank split into
# imbalance (waiting for the last rank) and transfer, for every matrix x configuration x CG
# variant x distributed loop. A configuration is RANKSxTHREADS ("single" is cgsolve without
# mpirun, the fused loop with THREADS threads, e.g. single16).
#
#   scripts/distributed-bench.sh                 # this 2-core VM: 1 vs 2 ranks x 1 thread
#   SKIP_BUILD=1 BUILD=build-gpu MATRICES="gen:poisson3d:150" CONFIGS="single16 1x16 2x8 4x4" \
#     REPEATS=5 scripts/distributed-bench.sh     # a 16-core host (BENCHMARKS.md section 15c)
#
# BUILD (default build-cpu) is configured (Release, CPU only, MPI on) when it has no CMake cache,
# and its cgsolve built, unless SKIP_BUILD=1. LOOPS: the distributed loops of classic CG
# (--dist-loop; single-reduction has the plain one only). Every run does a fixed number of
# iterations (ITERS, --tol 0), so the runs compare like for like.
#
# BIND=auto|on|off. on: each rank gets THREADS cores of its own (Open MPI 4.1: --map-by
# slot:PE=THREADS --bind-to core) and its threads one core each (OMP_PROC_BIND=close,
# OMP_PLACES=cores; the single process too). off: ranks share the cores (--oversubscribe
# --bind-to none), as on a machine with fewer cores than ranks x threads. auto (the default):
# on when the machine has the cores, else off. Logs and JSON reports go to OUT; the table is
# printed again, whole, at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build-cpu}
if [[ ${SKIP_BUILD:-0} != 1 ]]; then
  [[ -f $BUILD/CMakeCache.txt ]] ||
    cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCGSOLVE_WITH_CUDA=OFF \
      -DCGSOLVE_WITH_MPI=ON >/dev/null
  cmake --build "$BUILD" --target cgsolve -j "$(nproc)" >/dev/null
fi
CGSOLVE=${CGSOLVE:-$BUILD/app/cgsolve}
MATRICES=${MATRICES:-"gen:poisson2d:1000 gen:poisson3d:100"}
CONFIGS=${CONFIGS:-"single1 1x1 2x1"}
VARIANTS=${VARIANTS:-"classic single-reduction"}
LOOPS=${LOOPS:-"fused plain"}
REPEATS=${REPEATS:-5}
ITERS=${ITERS:-200}
BIND=${BIND:-auto}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
MPIRUN=${MPIRUN:-mpirun}
cores=$(nproc)
table="$OUT/distributed-bench.table"
: >"$table"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

binds() {  # ranks threads -> 0 when the ranks get cores of their own
  case $BIND in
    on) return 0 ;;
    off) return 1 ;;
    auto) (($1 * $2 <= cores)) ;;
    *) echo "BIND must be auto, on or off, got '$BIND'" >&2 && exit 2 ;;
  esac
}

run_one() {  # matrix config variant loop repeat -> JSON report path
  local matrix=$1 config=$2 variant=$3 loop=$4 k=$5
  local report="$OUT/$(echo "$matrix-$config-$variant-$loop-$k" | tr ':/' '__').json"
  local common=(--matrix "$matrix" --tol 0 --max-iters "$ITERS" --quiet --report "$report")
  if [[ $config == single* ]]; then
    local threads=${config#single}
    if binds 1 "$threads"; then
      OMP_NUM_THREADS=$threads OMP_PROC_BIND=close OMP_PLACES=cores "$CGSOLVE" "${common[@]}" \
        --threads "$threads" 2>>"$OUT/stderr.log" || true
    else
      OMP_NUM_THREADS=$threads "$CGSOLVE" "${common[@]}" --threads "$threads" \
        2>>"$OUT/stderr.log" || true
    fi
  else
    local ranks=${config%x*} threads=${config#*x} bind
    if binds "$ranks" "$threads"; then
      bind=(--map-by "slot:PE=$threads" --bind-to core -x OMP_PROC_BIND=close -x OMP_PLACES=cores)
    else
      bind=(--oversubscribe --bind-to none)
    fi
    OMP_NUM_THREADS=$threads OMP_PROC_BIND=close OMP_PLACES=cores \
      "$MPIRUN" -np "$ranks" "${bind[@]}" -x OMP_NUM_THREADS \
      "$CGSOLVE" "${common[@]}" --distributed --threads "$threads" --cg-variant "$variant" \
      --dist-loop "$loop" >/dev/null 2>>"$OUT/stderr.log" || true
  fi
  echo "$report"
}

{
  echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(hostname), $cores cores, $(lscpu | sed -n 's/^Model name: *//p')"
  echo "# $CGSOLVE, $ITERS iterations per run, median of $REPEATS, BIND=$BIND; load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# waits: the slowest rank's per iteration; imb = waiting for the last rank, the rest transfer"
  printf "%-19s %-8s %-16s %-5s %9s %9s %9s %8s %9s %8s %11s\n" matrix config variant loop \
    "us/iter" "SpMV us" "halo wait" "halo imb" "allreduce" "ared imb" "halo B/prod"
} | tee -a "$table"
for matrix in $MATRICES; do
  for config in $CONFIGS; do
    for variant in $VARIANTS; do
      for loop in $LOOPS; do
        [[ $config == single* && ($variant != classic || $loop != "${LOOPS%% *}") ]] && continue
        [[ $variant != classic && $loop != plain ]] && continue  # single-reduction: plain only
        reports=()
        for ((k = 0; k < REPEATS; ++k)); do
          reports+=("$(run_one "$matrix" "$config" "$variant" "$loop" "$k")")
        done
        python3 - "$matrix" "$config" "$variant" "$loop" "${reports[@]}" <<'PY' | tee -a "$table"
import json, os, statistics, sys
matrix, config, variant, loop, paths = *sys.argv[1:5], sys.argv[5:]
runs = [json.load(open(p)) for p in paths if os.path.exists(p)]
single = config.startswith("single")
label = f"{matrix:19s} {config:8s} {('-' if single else variant):16s} {('-' if single else loop):5s}"
if not runs:
    print(f"{label} failed (see stderr.log)")
    sys.exit(0)
med = lambda xs: statistics.median(xs) if xs else float("nan")
per_iter = med([r["times"]["per_iteration_s"] * 1e6 for r in runs])
spmv = wait = wait_imb = allreduce = allreduce_imb = halo = float("nan")
if "distributed" in runs[0]:
    if runs[0]["distributed"].get("loop", "plain") != loop:
        label += "*"  # the loop asked for did not run
    def worst(r, key):  # the slowest rank sets the pace
        d = r["distributed"]
        return max(x["seconds"].get(key, float("nan")) for x in d["per_rank"]) / r["result"]["iterations"] * 1e6
    spmv = med([worst(r, "local_spmv") + worst(r, "halo_spmv") for r in runs])
    wait = med([worst(r, "halo_wait") for r in runs])
    wait_imb = med([worst(r, "halo_imbalance") for r in runs])
    allreduce = med([worst(r, "allreduce") for r in runs])
    allreduce_imb = med([worst(r, "allreduce_imbalance") for r in runs])
    halo = runs[0]["distributed"]["halo_bytes_per_product"]
elif runs[0]["spmv"]["measured"]:
    spmv = med([r["spmv"]["median_s"] * 1e6 for r in runs])
print(f"{label} {per_iter:9.1f} {spmv:9.1f} {wait:9.1f} {wait_imb:8.1f} {allreduce:9.1f} "
      f"{allreduce_imb:8.1f} {halo:11.0f}")
PY
      done
    done
  done
done
echo "# the table ($OUT/distributed-bench.table):"
cat "$table"
