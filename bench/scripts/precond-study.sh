#!/usr/bin/env bash
# Iterations and time to solution of each preconditioner on EPANET's own linear systems
# (../shared/data/epanet-systems, else data/systems), cgsolve's criterion ||r|| <= tol ||b||,
# against Jacobi-CG and a direct Cholesky (the validation reference, timed by --validate).
# Usage: bench/scripts/precond-study.sh [build dir (default build)] [device (default serial)]
#        PRECONDS="jacobi ic0 ..." TOL=1e-10 ONLY=regex (system names) to change what runs.
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
DEVICE=${2:-serial}
TOL=${TOL:-1e-10}
PRECONDS=${PRECONDS:-"jacobi ic0 fsai fsai:2 bjacobi:64 bjacobi:256 cheb:4 cheb:8"}
SYSTEMS=../shared/data/epanet-systems
[[ -d $SYSTEMS ]] || SYSTEMS=data/systems
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%-34s %-12s %8s %9s %10s %10s %12s %6s\n' system precond iters "x fewer" "setup ms" "us/iter" "solution ms" exit
for A in "$SYSTEMS"/*_step*.mtx.gz; do
  [[ $A =~ _[bx]\.mtx ]] && continue
  name=$(basename "$A" .mtx.gz)
  [[ -n ${ONLY:-} && ! $name =~ $ONLY ]] && continue
  base=""
  for p in $PRECONDS; do
    "$BUILD/app/cgsolve" --matrix "$A" --rhs "${A%.mtx.gz}_b.mtx.gz" --device "$DEVICE" \
      --precond "$p" --tol "$TOL" --max-iters 400000 --quiet --report "$tmp/r.json" \
      > "$tmp/out.txt" 2>&1
    status=$?
    python3 - "$tmp/r.json" "$name" "$p" "$status" "${base:-0}" > "$tmp/row.txt" <<'PY'
import json, sys
path, name, p, status, base = sys.argv[1:]
try:
    j = json.load(open(path))
except Exception:
    print(f"{name:34} {p:12} {'-':>8} {'-':>9} {'-':>10} {'-':>10} {'-':>12} {status:>6}")
    sys.exit()
r, t = j["result"], j["times"]
it = r["converged_at"] if r["converged"] else r["iterations"]
setup = t["preconditioner_s"] + t["reorder_s"]
per = t["solve_s"] / max(r["iterations"], 1)
fewer = f"{int(base) / it:.1f}" if int(base) > 0 and it > 0 else "1.0"
print(f"{name:34} {p:12} {it:8d} {fewer:>9} {setup*1e3:10.2f} {per*1e6:10.2f} {(setup + t['solve_s'])*1e3:12.2f} {status:>6}")
PY
    cat "$tmp/row.txt"
    [[ -z $base ]] && base=$(awk '{print $3}' "$tmp/row.txt")
    rm -f "$tmp/r.json"
  done
done
