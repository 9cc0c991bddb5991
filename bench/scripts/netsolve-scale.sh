#!/usr/bin/env bash
# netsolve against EPANET 2.3.5 on synthetic networks of growing size (issue 51): each network
# made by scripts/generate_network.py, then per size, interleaved, RUNS whole-process runs of
# EPANET (epanet-run, one run a process) and of netsolve (--threads 1 and, where THREADS is set,
# --threads THREADS), best and median wall time and peak RSS (GNU time); then one netsolve run
# compared with EPANET's series at every reporting time (--reference) up to COMPARE_MAX junctions.
# Usage: bench/scripts/netsolve-scale.sh [--sizes "25000 250000"] [--runs 5] [--threads 16]
#        [--seed 1] [--work DIR] [--compare-max 250000]
set -euo pipefail
cd "$(dirname "$0")/../.."
sizes="25000 250000"; runs=5; threads=""; seed=1; work=${TMPDIR:-/tmp}/netsolve-scale
compare_max=250000
while [[ $# -gt 0 ]]; do
  case $1 in
    --sizes) sizes=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --compare-max) compare_max=$2; shift 2 ;;
    *) echo "netsolve-scale.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
netsolve=${NETSOLVE:-build/app/netsolve}
epanet=${EPANET_RUN:-../shared/tools/epanet/epanet-run}
for tool in "$netsolve" "$epanet" /usr/bin/time; do
  [[ -x $tool ]] || { echo "netsolve-scale.sh: $tool not found (build netsolve; ../shared holds EPANET)" >&2; exit 2; }
done
mkdir -p "$work"
# one whole-process run: "seconds peak_kB"
measure() { /usr/bin/time -f "%e %M" -o "$work/time.txt" "$@" > /dev/null 2>&1 || true; cat "$work/time.txt"; }
stats() { python3 -c 'import sys, statistics as s
v = [float(x) for x in sys.argv[1:]]; print(f"{min(v):.3f} {s.median(v):.3f}")' "$@"; }
printf "%-10s %-18s %8s %8s %10s %12s\n" junctions run best_s median_s vs_EPANET peak_MB
for n in $sizes; do
  net=$work/synthetic_${n}_s$seed.inp
  [[ -s $net ]] || python3 scripts/generate_network.py --junctions "$n" --seed "$seed" -o "$net"
  declare -A times=() peaks=()
  variants=("epanet" "netsolve-1")
  [[ -n $threads ]] && variants+=("netsolve-$threads")
  for ((r = 0; r < runs; r++)); do
    for v in "${variants[@]}"; do
      case $v in
        epanet) out=$(measure "$epanet" "$net" --runs 1) ;;
        netsolve-*) out=$(measure "$netsolve" --network "$net" --threads "${v#netsolve-}" --quiet) ;;
      esac
      times[$v]+=" ${out% *}"; peaks[$v]=${out#* }
    done
  done
  read -r ebest _ <<< "$(stats ${times[epanet]})"
  for v in "${variants[@]}"; do
    read -r best median <<< "$(stats ${times[$v]})"
    printf "%-10s %-18s %8s %8s %10s %12.1f\n" "$n" "$v" "$best" "$median" \
      "$(python3 -c "print(f'{$best / $ebest:.2f}x')")" "$(python3 -c "print(${peaks[$v]} / 1024)")"
  done
  if (( n <= compare_max )); then
    ref=$work/ref_${n}_s$seed; mkdir -p "$ref"
    name=$(basename "$net" .inp)
    [[ -s $ref/${name}_nodes.csv.gz ]] || {
      "$epanet" "$net" --runs 1 --nodes "$ref/${name}_nodes.csv" --links "$ref/${name}_links.csv" > /dev/null
      gzip -f "$ref/${name}_nodes.csv" "$ref/${name}_links.csv"; }
    "$netsolve" --network "$net" --reference "$ref" --quiet | sed "s/^/  $n: /"
  fi
  unset times peaks
done
