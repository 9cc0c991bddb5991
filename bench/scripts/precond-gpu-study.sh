#!/usr/bin/env bash
# Time to solution of each preconditioner on the GPU against CPU serial IC(0), side by side in one
# run on one machine (issue 21's targets). For each system: iterations, set-up (reorder, format,
# preconditioner, upload, --precond auto's probe), time per iteration and time to solution
# (set-up + solve, file read excluded), the median of RUNS runs each; the last column is the
# ratio to CPU serial ic0's time to solution on the same system.
# Usage: bench/scripts/precond-gpu-study.sh [build dir (default build)] [systems dir]
#   systems dir: EPANET's exported systems (*_stepN.mtx.gz with _b), default
#   ../shared/data/epanet-systems, else data/systems; "none": generated matrices only.
#   Env: RUNS=3, TOL=1e-10, ONLY=regex (system names), PRECONDS="jacobi ic0 ...",
#        CPU="serial:ic0" (device:precond pairs run as the reference and beside it),
#        GEN="gen:poisson2d:1000 data/matrices/nos6.mtx" (generated matrices or Matrix Market
#        files to run too, b = A*1), MAXITERS=400000.
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
SYSTEMS=${2:-../shared/data/epanet-systems}
[[ -d $SYSTEMS || $SYSTEMS == none ]] || SYSTEMS=data/systems
RUNS=${RUNS:-3}
TOL=${TOL:-1e-10}
PRECONDS=${PRECONDS:-"jacobi ic0 ic0:levels fsai fsai:2 bjacobi:64 cheb:4 cheb:8 auto"}
CPU=${CPU:-"serial:ic0"}
GEN=${GEN:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One row: the median of RUNS runs of cgsolve with the given arguments.
row() {  # name device precond ref_ms cgsolve-args...
  local name=$1 device=$2 precond=$3 ref=$4
  shift 4
  : > "$tmp/runs.txt"
  for ((i = 0; i < RUNS; i++)); do
    timeout 300 "$BUILD/app/cgsolve" "$@" --device "$device" --precond "$precond" --tol "$TOL" \
      --max-iters "${MAXITERS:-400000}" --quiet --report "$tmp/r.json" > "$tmp/out.txt" 2>&1
    echo "$? $(cat "$tmp/r.json" 2>/dev/null | tr -d '\n')" >> "$tmp/runs.txt"
    rm -f "$tmp/r.json"
  done
  python3 - "$tmp/runs.txt" "$name" "$device" "$precond" "$ref" <<'PY'
import json, statistics, sys
path, name, device, precond, ref = sys.argv[1:]
rows = []
for line in open(path):
    status, _, text = line.strip().partition(" ")
    try:
        j = json.loads(text)
    except Exception:
        rows.append((int(status), None)); continue
    rows.append((int(status), j))
ok = [j for s, j in rows if j is not None]
if not ok:
    print(f"{name:28} {device:6} {precond:11} {'-':>8} {'-':>9} {'-':>9} {'-':>10} {'-':>7}  exit {rows[0][0]}")
    sys.exit()
def tts(j):
    t = j["times"]
    return sum(t[k] for k in ("inspect_s", "reorder_s", "build_format_s", "preconditioner_s", "upload_s", "solve_s"))
def setup(j):
    return tts(j) - j["times"]["solve_s"]
j = sorted(ok, key=tts)[len(ok) // 2]
r = j["result"]
it = r["converged_at"] if r["converged"] else r["iterations"]
per = j["times"]["solve_s"] / max(r["iterations"], 1)
chosen = j["plan"]["preconditioner"]
label = precond if precond == chosen else f"{precond}->{chosen}"
ratio = f"{tts(j) * 1e3 / float(ref):7.2f}" if float(ref) > 0 else "      -"
print(f"{name:28} {device:6} {label:11} {it:8d} {setup(j)*1e3:9.2f} {per*1e6:9.2f} {tts(j)*1e3:10.2f} {ratio}  exit {rows[0][0]} {'' if r['converged'] else 'NOT CONVERGED'}")
PY
}

printf '%-28s %-6s %-11s %8s %9s %9s %10s %7s\n' system device precond iters "setup ms" "us/iter" "tts ms" "x cpu"
cases=()
for A in "$SYSTEMS"/*_step*.mtx.gz; do
  [[ $A =~ _[bx]\.mtx || ! -f $A ]] && continue
  cases+=("$A")
done
for g in $GEN; do cases+=("$g"); done
for A in "${cases[@]}"; do
  if [[ $A == gen:* ]]; then
    name=${A#gen:}
    args=(--matrix "$A")
  else  # a system with its _b right-hand side, or a lone matrix (b = A * 1, as cgsolve makes it)
    name=$(basename "${A%.gz}" .mtx)
    args=(--matrix "$A")
    [[ $A == *.mtx.gz && -f ${A%.mtx.gz}_b.mtx.gz ]] && args+=(--rhs "${A%.mtx.gz}_b.mtx.gz")
  fi
  [[ -n ${ONLY:-} && ! $name =~ $ONLY ]] && continue
  ref=0
  for pair in $CPU; do
    line=$(row "$name" "${pair%%:*}" "${pair#*:}" 0 "${args[@]}")
    echo "$line"
    [[ $ref == 0 ]] && ref=$(awk '{print $7}' <<< "$line")
    [[ $ref == - ]] && ref=0
  done
  for p in $PRECONDS; do row "$name" gpu "$p" "$ref" "${args[@]}"; done
done
