#!/usr/bin/env bash
# One netsolve thread against EPANET's one thread, per scenario, side by side in one run:
# ROUNDS rounds, each running epanet-scenarios --max N (its first N junctions, or pipes without
# check valves with STUDY=closure) and then each NETSOLVE binary given with --threads 1 on the same
# elements (--elements). Prints the medians of the scenario loops alone (EPANET's printed
# "ms a scenario", netsolve's scenario_seconds / scenarios) and each ratio to EPANET's.
#   bench/scripts/study-per-thread.sh NET N ROUNDS NETSOLVE... (NET: a name in ../shared/data/networks)
# Env: STUDY (fireflow), TMP (a scratch folder; default mktemp), THREADS (netsolve's --threads,
# 1 by default: more gives the study's throughput on that many threads against EPANET's one).
set -u
[ $# -ge 4 ] || { sed -n '2,8p' "$0"; exit 2; }
net=$1 max=$2 rounds=$3; shift 3
here=$(cd "$(dirname "$0")/../.." && pwd)
nets=$here/../shared/data/networks epanet=$here/../shared/tools/epanet/epanet-scenarios
study=${STUDY:-fireflow} threads=${THREADS:-1} tmp=${TMP:-$(mktemp -d /tmp/study-per-thread.XXXXXX)}
section=JUNCTIONS; [ "$study" = closure ] && section=PIPES
awk -v want="[$section]" -v n="$max" '/^[ \t]*\[/ { inside = (toupper($1) == want); next }
  { sub(/;.*/, "") } inside && NF && !(want == "[PIPES]" && toupper($8) == "CV") && count < n { print $1; count++ }' \
  "$nets/$net.inp" > "$tmp/elements.txt"
n=$(wc -l < "$tmp/elements.txt")
: > "$tmp/rows.txt"
for r in $(seq "$rounds"); do
  e=$("$epanet" "$nets/$net.inp" --study "$study" --max "$n" | sed -n 's/.* \([0-9.]*\) ms a scenario.*/\1/p')
  echo "epanet $e" >> "$tmp/rows.txt"
  i=0
  for b in "$@"; do
    i=$((i + 1))
    "$b" --network "$nets/$net.inp" --study "$study" --elements "$tmp/elements.txt" \
      --threads "$threads" --quiet --report "$tmp/report.json" > /dev/null 2>&1
    python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print('netsolve%s %.4f' % (sys.argv[2], 1e3*j['scenario_seconds']/j['study']['scenarios']))" \
      "$tmp/report.json" "$i" >> "$tmp/rows.txt"
  done
done
python3 - "$tmp/rows.txt" "$net $study" "$n" "$rounds" "$threads" <<'P'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
keys = list(dict.fromkeys(r[0] for r in rows))
med = {k: statistics.median(float(r[1]) for r in rows if r[0] == k) for k in keys}
print(f"{sys.argv[2]}, {sys.argv[3]} scenarios, {sys.argv[4]} rounds, ms a scenario (medians), "
      f"EPANET one thread, netsolve {sys.argv[5]}:")
print("  ".join(f"{k} {med[k]:.3f} ({med['epanet'] / med[k]:.2f}x)" for k in keys))
P
