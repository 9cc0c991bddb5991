#!/usr/bin/env bash
# Scenario studies against EPANET 2.3.5's reference loop (../shared/tools/epanet/epanet-scenarios):
# for each network, study (fireflow, closure), duration (0 = steady, seconds otherwise) and start
# (netsolve --start auto: its default, warm or cold chosen by probes; warm: from the baseline's
# solution; cold: EPANET's initial flows as epanet-scenarios), both CSVs are written and compared by scripts/compare_study.py
# (min_pressure, min_node, element_pressure, ok to 1e-3). Prints one line per comparison and a
# table last; leaves the CSVs in --out.
#
#   scripts/study-check.sh [--build build-cpu] [--out DIR] [--studies "fireflow closure"]
#                          [--durations "0 86400"] [--starts "auto warm cold"] [--timeout 900]
#                          [--pda "PMIN PREQ PEXP"] [--max N] [--netsolve-flags "..."]
#                          [NET.inp ...]
# --pda: pressure-driven demand in both (epanet-scenarios --pda, netsolve --demand-model pda ...).
# --max N: the first N junctions (fire flow) or pipes without check valves (closure) only, the
# elements epanet-scenarios --max N takes. --netsolve-flags: more flags for netsolve (e.g.
# "--device gpu": the GPU study engines against EPANET).
# Without networks: every network of ../shared/data/networks that EPANET accepts, but
# BWSN_Network_2 (name it to include it: about 3 minutes a study for each program).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
build=$here/build-cpu out=$(mktemp -d /tmp/study-check.XXXXXX)
studies="fireflow closure" durations="0 86400" starts="warm cold" limit=900 pda="" max="" extra=""
nets=()
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --studies) studies=$2; shift 2 ;;
    --durations) durations=$2; shift 2 ;;
    --starts) starts=$2; shift 2 ;;
    --timeout) limit=$2; shift 2 ;;
    --pda) pda=$2; shift 2 ;;
    --max) max=$2; shift 2 ;;
    --netsolve-flags) extra=$2; shift 2 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) nets+=("$1"); shift ;;
  esac
done
shared=${SHARED:-$here/../shared}
epanet=$shared/tools/epanet/epanet-scenarios
netsolve=$build/app/netsolve
[ -x "$epanet" ] || { echo "study-check.sh: $epanet not found" >&2; exit 2; }
[ -x "$netsolve" ] || { echo "study-check.sh: $netsolve not built" >&2; exit 2; }
if [ ${#nets[@]} -eq 0 ]; then
  for f in "$shared"/data/networks/*.inp; do
    case $(basename "$f" .inp) in Exnet|Wolf-Cordera_initial|BWSN_Network_2) continue ;; esac
    nets+=("$f")
  done
fi
mkdir -p "$out"
epanet_pda=() netsolve_pda=() tag=""
if [ -n "$pda" ]; then
  read -r pmin preq pexp <<< "$pda"
  epanet_pda=(--pda "$pmin" "$preq" "$pexp")
  netsolve_pda=(--demand-model pda --minimum-pressure "$pmin" --required-pressure "$preq" --pressure-exponent "$pexp")
  tag=_pda
fi
. "$here/scripts/study-elements.sh"  # elements FILE SECTION N
table=()
for f in "${nets[@]}"; do
  n=$(basename "$f" .inp)
  for s in $studies; do
    limited=() epanet_max=()
    if [ -n "$max" ]; then
      section=JUNCTIONS; [ "$s" = closure ] && section=PIPES
      elements "$f" $section "$max" > "$out/elements_${n}_$s.txt"
      limited=(--elements "$out/elements_${n}_$s.txt") epanet_max=(--max "$max")
    fi
    for d in $durations; do
      ref=$out/epanet_${n}_${s}_$d$tag.csv
      if ! timeout "$limit" "$epanet" "$f" --study "$s" --duration "$d" "${epanet_pda[@]}" "${epanet_max[@]}" --csv "$ref" > "$out/epanet_${n}_${s}_$d$tag.log" 2>&1; then
        table+=("$n $s $d - EPANET-did-not-complete"); continue
      fi
      for w in $starts; do
        mine=$out/netsolve_${n}_${s}_${d}_$w$tag.csv
        flag=--start=$w
        timeout "$limit" "$netsolve" --network "$f" --study "$s" --duration "${d}s" $flag \
          "${netsolve_pda[@]}" "${limited[@]}" $extra --study-csv "$mine" --quiet \
          2> "$out/netsolve_${n}_${s}_${d}_$w$tag.err"
        rc=$?
        if [ $rc -ne 0 ] && [ $rc -ne 5 ]; then table+=("$n $s $d $w netsolve-exit-$rc"); continue; fi
        line=$("$here/scripts/compare_study.py" "$mine" "$ref" --quiet)
        echo "$n $s $d $w${tag}: $line"
        verdict=$(echo "$line" | sed 's/.*: //')
        worst=$(echo "$line" | sed -n 's/.*largest pressure difference \([^ ]*\).*/\1/p')
        table+=("$n $s $d $w$tag $worst ${verdict// /_}")
      done
    done
  done
done
echo
printf '%-22s %-9s %-9s %-5s %-12s %s\n' network study duration start max-diff verdict
for row in "${table[@]}"; do printf '%-22s %-9s %-9s %-5s %-12s %s\n' $row; done
echo "CSVs and logs: $out"
