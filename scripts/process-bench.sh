#!/usr/bin/env bash
# Whole processes side by side (issue 29 item 4): netsolve's CPU run of each build given against
# epanet-run, best of N wall times interleaved in one run (scripts/process_time.py: posix_spawn,
# the timer adds about 0.1 ms), start-up and file reading included.
#
#   scripts/process-bench.sh [--runs N] [--duration S] [--epanet PATH] [--data DIR]
#                            --netsolve PATH [--netsolve PATH ...] [net ...]
#
# Prints per network the best time of each program and each netsolve's ratio to EPANET's.
# --duration 0 is the steady state; the default 86400 is 24 h for both programs.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=5
duration=86400
epanet=../shared/tools/epanet/epanet-run
data=../shared/data
netsolves=()
nets=()
while (($#)); do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --epanet) epanet=$2; shift 2 ;;
    --data) data=$2; shift 2 ;;
    --netsolve) netsolves+=("$2"); shift 2 ;;
    -h | --help) sed -n '2,10p' "$0"; exit 0 ;;
    *) nets+=("$1"); shift ;;
  esac
done
((${#netsolves[@]})) || { echo "process-bench: give at least one --netsolve PATH" >&2; exit 2; }
if ((${#nets[@]} == 0)); then
  for inp in "$data"/networks/*.inp; do nets+=("$(basename "$inp" .inp)"); done
fi

printf '%-22s %10s' network "EPANET ms"
for n in "${netsolves[@]}"; do printf ' %12s %6s' "$(basename "$(dirname "$(dirname "$n")")") ms" ratio; done
printf '\n'
for net in "${nets[@]}"; do
  inp=$data/networks/$net.inp
  # EPANET first: a network it cannot simulate (an error) is listed and skipped.
  if ! "$epanet" "$inp" --duration "$duration" >/dev/null 2>&1; then
    printf '%-22s %10s\n' "$net" "error"
    continue
  fi
  cmd=(python3 scripts/process_time.py --runs "$runs" -- "$epanet" "$inp" --duration "$duration" --runs 1)
  for n in "${netsolves[@]}"; do
    cmd+=(--vs "$n" --network "$inp" --duration "${duration}s" --quiet)  # netsolve: a bare number is hours
  done
  mapfile -t best < <("${cmd[@]}" | awk '{print $2}')
  printf '%-22s %10.2f' "$net" "${best[0]}"
  for ((i = 1; i < ${#best[@]}; ++i)); do
    printf ' %12.2f %6.2f' "${best[i]}" "$(awk -v a="${best[i]}" -v b="${best[0]}" 'BEGIN { print a / b }')"
  done
  printf '\n'
done
