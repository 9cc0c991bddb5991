#!/usr/bin/env bash
# AMG against Jacobi-CG on the CPU (issue 22's CPU targets): for each generated matrix and each
# preconditioner, iterations, set-up, solve and time to solution (set-up + solve, generation
# excluded), operator complexity and levels; the median of RUNS runs by time to solution.
# Usage: bench/scripts/amg-cpu-study.sh [build dir (default build)]
#   Env: RUNS=3, TOL=1e-8, THREADS=0 (all cores), MATRICES="gen:poisson2d:500 gen:poisson2d:1000",
#        PRECONDS="amg jacobi"
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
RUNS=${RUNS:-3}
TOL=${TOL:-1e-8}
THREADS=${THREADS:-0}
MATRICES=${MATRICES:-"gen:poisson2d:500 gen:poisson2d:1000"}
PRECONDS=${PRECONDS:-"amg jacobi"}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%-22s %-10s %6s %9s %9s %9s %6s %s\n' matrix precond iters "setup s" "solve s" "tts s" opcx levels
for A in $MATRICES; do
  for p in $PRECONDS; do
    : > "$tmp/runs.txt"
    for ((i = 0; i < RUNS; i++)); do
      "$BUILD/app/cgsolve" --matrix "$A" --precond "$p" --tol "$TOL" --threads "$THREADS" --quiet \
        --report "$tmp/r.json" > /dev/null 2>&1
      tr -d '\n' < "$tmp/r.json" >> "$tmp/runs.txt"
      echo >> "$tmp/runs.txt"
    done
    python3 - "$tmp/runs.txt" "$A" "$p" <<'PY'
import json, sys
path, name, precond = sys.argv[1:]
runs = [json.loads(l) for l in open(path) if l.strip()]
def setup(j):
    t = j["times"]
    return sum(t[k] for k in ("inspect_s", "reorder_s", "build_format_s", "preconditioner_s", "upload_s"))
def tts(j):
    return setup(j) + j["times"]["solve_s"]
j = sorted(runs, key=tts)[len(runs) // 2]
facts = j["preconditioner"].get("facts", {})
print(f"{name[4:]:22} {precond:10} {j['result']['converged_at']:6d} {setup(j):9.3f} "
      f"{j['times']['solve_s']:9.3f} {tts(j):9.3f} {facts.get('operator complexity', '-'):>6} "
      f"{facts.get('levels', '-')}")
PY
  done
done
