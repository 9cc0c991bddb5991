#!/usr/bin/env bash
# netsolve's extended-period simulation of every EPANET network against EPANET 2.3.5's own results
# (../shared/data/networks/reference-eps: every reporting time of the first 24 h), with run times
# against EPANET's (the table in that folder's README.md).
#
#   scripts/eps-check.sh [--build DIR] [--data DIR] [--runs N] [--solver direct|cg] [net ...]
#
# For each network: one run with --reference (errors, statuses), then N timing runs (--quiet, no
# output files) whose best in-process time is reported, as EPANET's table gives its best of 5:
# netsolve's own "total" (reading the .inp file and the whole simulation, as EPANET's table counts
# parsing; process start-up is not in either). Prints one table row per network; exit 1 if a network EPANET solves does not match.
set -euo pipefail
cd "$(dirname "$0")/.."

build=build
data=../shared/data
runs=5
solver=direct
nets=()
while (($#)); do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --data) data=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --solver) solver=$2; shift 2 ;;
    -h | --help) sed -n '2,11p' "$0"; exit 0 ;;
    *) nets+=("$1"); shift ;;
  esac
done
netsolve=$build/app/netsolve
reference=$data/networks/reference-eps
[[ -x $netsolve ]] || { echo "eps-check: $netsolve not built (cmake --build $build --target netsolve)" >&2; exit 2; }
[[ -d $reference ]] || { echo "eps-check: no $reference" >&2; exit 2; }
command -v python3 >/dev/null || { echo "eps-check: needs python3 (JSON reports)" >&2; exit 2; }
if ((${#nets[@]} == 0)); then
  for inp in "$data"/networks/*.inp; do nets+=("$(basename "$inp" .inp)"); done
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# EPANET's 24 h EPS time for a network, from the README table (last column).
epanet_time() {
  awk -F'|' -v n="$1" '{gsub(/ /, "", $2)} $2 == n {gsub(/ /, "", $5); print $5}' "$reference/README.md"
}

printf '%-22s %6s %7s %10s %10s %10s %8s %9s %9s %7s  %s\n' network steps trials "head err" \
  "flow err" "level err" statuses "time (s)" "EPANET" ratio result
status=0
for net in "${nets[@]}"; do
  inp=$data/networks/$net.inp
  if [[ ! -f $reference/${net}_nodes.csv.gz ]]; then
    rc=0
    "$netsolve" --network "$inp" --duration 24h --quiet >"$tmp/out" 2>&1 || rc=$?
    printf '%-22s %s\n' "$net" "no EPANET series (EPANET rejects it); netsolve exit $rc: $(tail -1 "$tmp/out" | cut -c1-90)"
    continue
  fi
  rc=0
  "$netsolve" --network "$inp" --duration 24h --solver "$solver" --reference "$reference" \
    --report "$tmp/ref.json" >"$tmp/out" 2>&1 || rc=$?
  times=()
  for ((i = 0; i < runs; i++)); do
    "$netsolve" --network "$inp" --duration 24h --solver "$solver" --quiet \
      --report "$tmp/t.json" >/dev/null 2>&1 || true
    times+=("$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["total_seconds"])' "$tmp/t.json")")
  done
  best=$(printf '%s\n' "${times[@]}" | sort -g | head -1)
  python3 - "$tmp/ref.json" "$net" "$best" "$(epanet_time "$net")" "$rc" >"$tmp/row" <<'EOF' || status=1
import json, sys
j = json.load(open(sys.argv[1]))
net, best, epanet, rc = sys.argv[2], float(sys.argv[3]), sys.argv[4], int(sys.argv[5])
s, r = j["series"], j.get("reference", {})
ratio = f"{best / float(epanet):.2f}" if epanet else "-"
result = "match" if r.get("match") else "MISMATCH"
if s["error"]:
    result += f"; stopped at {s['error_time_s']} s: error 110"
elif not s["completed"]:
    result += f"; ended at {s['last_time_s']} s (unbalanced)"
if r.get("times_missing"):
    result += f"; {r['times_missing']} reference times not reached"
print(f"{net:22s} {s['steps']:6d} {s['trials']:7d} {r.get('max_head_error', 0):10.2e} "
      f"{r.get('max_flow_error', 0):10.2e} {r.get('max_level_error', 0):10.2e} "
      f"{'equal' if r.get('status_mismatches', 1) == 0 else str(r['status_mismatches']) + ' diff':>8s} "
      f"{best:9.4f} {epanet or '-':>9s} {ratio:>7s}  {result}")
sys.exit(0 if r.get("match") else 1)
EOF
  cat "$tmp/row"
done
exit $status
