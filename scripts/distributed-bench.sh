#!/usr/bin/env bash
# The distributed CG on CPU ranks against the single process: time per iteration (median of
# REPEATS runs), the halo's bytes per product and the allreduce time per iteration, for every
# matrix x configuration x CG variant. A configuration is RANKSxTHREADS ("single" is cgsolve
# without mpirun, the fused loop with THREADS threads, e.g. single16).
#
#   scripts/distributed-bench.sh                 # this 2-core VM: 1 vs 2 ranks x 1 thread
#   MATRICES="gen:poisson3d:150" CONFIGS="single16 1x16 2x8 4x4" REPEATS=5 \
#     scripts/distributed-bench.sh               # a 16-core host (BENCHMARKS.md section 15)
#
# Every run does a fixed number of iterations (ITERS, --tol 0), so the runs compare like for like.
# Ranks get THREADS cores each (Open MPI: --map-by slot:PE=THREADS --bind-to core) when the
# machine has the cores, else they share them (--oversubscribe --bind-to none).
set -euo pipefail
cd "$(dirname "$0")/.."
CGSOLVE=${CGSOLVE:-build-cpu/app/cgsolve}
MATRICES=${MATRICES:-"gen:poisson2d:1000 gen:poisson3d:100"}
CONFIGS=${CONFIGS:-"single1 1x1 2x1"}
VARIANTS=${VARIANTS:-"classic single-reduction"}
REPEATS=${REPEATS:-5}
ITERS=${ITERS:-200}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
MPIRUN=${MPIRUN:-mpirun}
cores=$(nproc)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(hostname), $cores cores, $(lscpu | sed -n 's/^Model name: *//p')"
echo "# $CGSOLVE, $ITERS iterations per run, median of $REPEATS; load $(cut -d' ' -f1-3 /proc/loadavg)"
run_one() {  # matrix config variant repeat -> JSON report path
  local matrix=$1 config=$2 variant=$3 k=$4
  local report="$OUT/$(echo "$matrix-$config-$variant-$k" | tr ':/' '__').json"
  local common=(--matrix "$matrix" --tol 0 --max-iters "$ITERS" --quiet --report "$report")
  if [[ $config == single* ]]; then
    OMP_NUM_THREADS=${config#single} "$CGSOLVE" "${common[@]}" --threads "${config#single}" \
      2>>"$OUT/stderr.log" || true
  else
    local ranks=${config%x*} threads=${config#*x} bind
    if ((ranks * threads <= cores)); then
      bind=(--map-by "slot:PE=$threads" --bind-to core)
    else
      bind=(--oversubscribe --bind-to none)
    fi
    OMP_NUM_THREADS=$threads "$MPIRUN" -np "$ranks" "${bind[@]}" -x OMP_NUM_THREADS \
      "$CGSOLVE" "${common[@]}" --distributed --threads "$threads" --cg-variant "$variant" \
      >/dev/null 2>>"$OUT/stderr.log" || true
  fi
  echo "$report"
}

printf "%-20s %-9s %-17s %12s %12s %12s %12s %12s\n" matrix config variant "us/iter" \
  "SpMV us" "halo wait us" "allreduce us" "halo B/prod"
for matrix in $MATRICES; do
  for config in $CONFIGS; do
    for variant in $VARIANTS; do
      [[ $config == single* && $variant != classic ]] && continue
      reports=()
      for ((k = 0; k < REPEATS; ++k)); do reports+=("$(run_one "$matrix" "$config" "$variant" "$k")"); done
      python3 - "$matrix" "$config" "$variant" "${reports[@]}" <<'PY'
import json, statistics, sys
matrix, config, variant, paths = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
runs = [json.load(open(p)) for p in paths]
med = lambda xs: statistics.median(xs) if xs else float("nan")
per_iter = med([r["times"]["per_iteration_s"] * 1e6 for r in runs])
spmv = wait = allreduce = halo = float("nan")
if "distributed" in runs[0]:
    def worst(r, key):  # the slowest rank sets the pace
        d = r["distributed"]
        return max(x["seconds"][key] for x in d["per_rank"]) / r["result"]["iterations"] * 1e6
    spmv = med([worst(r, "local_spmv") + worst(r, "halo_spmv") for r in runs])
    wait = med([worst(r, "halo_wait") for r in runs])
    allreduce = med([worst(r, "allreduce") for r in runs])
    halo = runs[0]["distributed"]["halo_bytes_per_product"]
elif runs[0]["spmv"]["measured"]:
    spmv = med([r["spmv"]["median_s"] * 1e6 for r in runs])
print(f"{matrix:20s} {config:9s} {('-' if config.startswith('single') else variant):17s} "
      f"{per_iter:12.1f} {spmv:12.1f} {wait:12.1f} {allreduce:12.1f} {halo:12.0f}")
PY
    done
  done
done
