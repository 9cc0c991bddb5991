#!/usr/bin/env bash
# netsolve's CG path against its direct path on every shared network (issue 47): 24 h runs, the
# whole process timed, the two (and any other solver settings given) interleaved in one loop so
# that both see the same machine, best and median of N runs; each setting's exit code and its
# match with EPANET's series (--reference) from one extra run.
#
#   bench/scripts/netsolve-cg.sh [--build DIR] [--data DIR] [--runs N] [--limit S] [--extra "ARGS"]... [net ...]
#
# Settings: "--solver direct" and "--solver cg" (its default: the network rule), plus each
# --extra (e.g. --extra "--solver cg --precond ic0"). Prints a markdown table: per network, per
# setting: best and median seconds, the ratio of bests to the direct path's, exit code, match. A
# run is stopped after --limit seconds (default 120) and shown as "> S".
set -euo pipefail
cd "$(dirname "$0")/../.."

build=build
data=../shared/data
runs=5
limit=120
settings=("--solver direct" "--solver cg")
nets=()
while (($#)); do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --data) data=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --limit) limit=$2; shift 2 ;;
    --extra) settings+=("$2"); shift 2 ;;
    -h | --help) sed -n '2,12p' "$0"; exit 0 ;;
    *) nets+=("$1"); shift ;;
  esac
done
netsolve=$build/app/netsolve
reference=$data/networks/reference-eps
[[ -x $netsolve ]] || { echo "netsolve-cg: $netsolve not built" >&2; exit 2; }
[[ -d $reference ]] || { echo "netsolve-cg: no $reference" >&2; exit 2; }
if ((${#nets[@]} == 0)); then
  for f in "$reference"/*_nodes.csv.gz; do nets+=("$(basename "$f" _nodes.csv.gz)"); done
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

now() { date +%s.%N; }
# One whole-process run: prints its seconds ("timeout" past the limit).
timed() {
  local start end rc=0
  start=$(now)
  timeout "$limit" "$netsolve" "$@" --quiet >/dev/null 2>&1 || rc=$?
  end=$(now)
  if ((rc == 124)); then echo timeout; else echo "$end - $start" | bc -l; fi
}

header="| network |"
rule="|---|"
for s in "${settings[@]}"; do header+=" $s: best / median s, ratio, exit, EPANET |"; rule+="---|"; done
echo "$header"
echo "$rule"
for net in "${nets[@]}"; do
  inp=$data/networks/$net.inp
  row="| $net |"
  declare -A times=()
  for ((r = 0; r < runs; r++)); do
    for k in "${!settings[@]}"; do
      [[ ${times[$k]:-} == *timeout* ]] && continue
      # shellcheck disable=SC2086
      times[$k]+="$(timed --network "$inp" --duration 24h ${settings[$k]}) "
    done
  done
  direct_best=""
  for k in "${!settings[@]}"; do
    if [[ ${times[$k]} == *timeout* ]]; then
      row+=" > $limit s (stopped) |"
      continue
    fi
    rc=0
    # shellcheck disable=SC2086
    timeout "$limit" "$netsolve" --network "$inp" --duration 24h ${settings[$k]} \
      --reference "$reference" --quiet >"$tmp/out" 2>&1 || rc=$?
    match=$(grep -o ': match$\|: MISMATCH$' "$tmp/out" | tail -1 | tr -d ': ' || true)
    read -r best median <<<"$(echo "${times[$k]}" | tr ' ' '\n' | grep . | sort -g |
      awk '{v[NR]=$1} END {print v[1], v[int((NR+1)/2)]}')"
    [[ -z $direct_best ]] && direct_best=$best
    ratio=$(echo "$best / $direct_best" | bc -l)
    row+=$(printf ' %.3f / %.3f, %.2fx, %s, %s |' "$best" "$median" "$ratio" "$rc" "${match:-none}")
  done
  unset times
  echo "$row"
done
