#!/usr/bin/env bash
# Issue 22's CPU target measured on a shared machine (BENCHMARKS 20g): cgsolve runs of several
# (binary, preconditioner) pairs interleaved round by round, so that a load that comes and goes
# falls on each pair alike; per pair the median of RUNS by time to solution (format +
# preconditioner set-up + solve; generation and reading excluded), with its iterations, and
# each AMG set-up phase's median over the runs. A pair "hypre[:OPTIONS]" runs hypre's BoomerAMG-PCG
# (bench/hypre/hyprebench, built when libhypre-dev is installed) on the same system, with THREADS
# MPI ranks (Debian's hypre has no OpenMP); OPTIONS are hyprebench's, e.g. "hypre:--strong 0.5".
# Its set-up is the assembly into hypre's IJ format + BoomerAMG's set-up.
# Usage: bench/scripts/amg-cpu-interleaved.sh "binary:precond" ...   e.g.
#   RUNS=5 bench/scripts/amg-cpu-interleaved.sh build-cpu/app/cgsolve:amg build-cpu/app/cgsolve:jacobi hypre
#   Env: RUNS=5, MATRIX=gen:poisson2d:1000, THREADS=2, TOL=1e-8, HYPREBENCH=build/bench/hyprebench
set -uo pipefail
RUNS=${RUNS:-5}
MATRIX=${MATRIX:-gen:poisson2d:1000}
THREADS=${THREADS:-2}
TOL=${TOL:-1e-8}
HYPREBENCH=${HYPREBENCH:-build/bench/hyprebench}
[ $# -gt 0 ] || { echo "usage: $0 binary:precond|hypre[:OPTIONS] ..." >&2; exit 2; }
for pair in "$@"; do
  if [[ $pair == hypre || $pair == hypre:* ]] && [ ! -x "$HYPREBENCH" ]; then
    echo "$0: $HYPREBENCH not built: install libhypre-dev (scripts/setup.sh), reconfigure" \
      "(cmake says 'cgsolve: hypre ON') and build the target hyprebench" >&2
    exit 2
  fi
done
# Open MPI refuses root unless told; other MPIs ignore these.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for ((i = 0; i < RUNS; i++)); do
  n=0
  for pair in "$@"; do
    bin=${pair%%:*} precond=${pair#*:}
    if [ "$bin" = hypre ]; then
      [ "$precond" = hypre ] && precond=""
      # shellcheck disable=SC2086  # OPTIONS are words
      mpirun -np "$THREADS" "$HYPREBENCH" --matrix "$MATRIX" --tol "$TOL" $precond \
        --json "$tmp/r.json" > "$tmp/out.txt" 2>&1 || { echo "run failed: $pair" >&2; tail -3 "$tmp/out.txt" >&2; exit 1; }
    elif ! "$bin" --matrix "$MATRIX" --precond "$precond" --tol "$TOL" --threads "$THREADS" --quiet \
      --report "$tmp/r.json" > "$tmp/out.txt" 2>&1; then
      echo "run failed: $bin --precond $precond" >&2
      tail -3 "$tmp/out.txt" >&2
      exit 1
    fi
    tr -d '\n' < "$tmp/r.json" >> "$tmp/runs$n.txt"
    echo >> "$tmp/runs$n.txt"
    n=$((n + 1))
  done
done
echo "$MATRIX, $THREADS threads, tol $TOL, medians of $RUNS interleaved runs (by time to solution)"
n=0
for pair in "$@"; do
  python3 - "$tmp/runs$n.txt" "$pair" <<'PY'
import json, sys
path, pair = sys.argv[1:]
runs = [json.loads(l) for l in open(path) if l.strip()]
if pair == "hypre" or pair.startswith("hypre:"):  # hyprebench's
    def tts(j):
        return j["times"]["tts_s"]
    j = sorted(runs, key=tts)[len(runs) // 2]
    t = j["times"]
    print(f"{pair:48} its {j['iterations']:5d}  set-up {t['assemble_s'] + t['setup_s']:7.3f}"
          f"  solve {t['solve_s']:7.3f}  tts {tts(j):7.3f}  (runs {min(map(tts, runs)):.3f}-{max(map(tts, runs)):.3f})")
    print(f"    assemble {t['assemble_s']:.3f}, BoomerAMG set-up {t['setup_s']:.3f}, {j['ranks']} MPI ranks")
    sys.exit(0)
def setup(j):
    t = j["times"]
    return sum(t.get(k) or 0 for k in ("inspect_s", "reorder_s", "build_format_s", "preconditioner_s", "upload_s"))
def tts(j):
    return setup(j) + j["times"]["solve_s"]
ordered = sorted(runs, key=tts)
j = ordered[len(runs) // 2]
print(f"{pair:48} its {j['result']['converged_at']:5d}  set-up {setup(j):7.3f}  solve {j['times']['solve_s']:7.3f}"
      f"  tts {tts(j):7.3f}  (runs {tts(ordered[0]):.3f}-{tts(ordered[-1]):.3f})")
# Each phase's median over the runs (not the median run's: one slow spell moves a phase alone).
def phases(r):
    pre = r["preconditioner"]
    rows = pre.get("tables", {}).get("phases", []) if isinstance(pre.get("tables"), dict) else []
    out = {row["phase"]: row["seconds"] for row in rows}
    if rows:
        out.update({k: v for k, v in pre.get("phases_s", {}).items() if k != "analyze"})
    return out
names = list(phases(j))
if names:
    med = {k: sorted(phases(r).get(k, 0) for r in runs)[len(runs) // 2] for k in names}
    print("    phase medians: " + ", ".join(f"{k} {v:.3f}" for k, v in med.items()))
PY
  n=$((n + 1))
done
