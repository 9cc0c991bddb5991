#!/usr/bin/env bash
# netsolve's binary output file (--out) against EPANET 2.3.5's own runepanet on every shared
# network over 24 h, field by field (scripts/compare_epanet_out.py), and what writing it costs.
#
#   bench/scripts/netsolve-out.sh [--build DIR] [--data DIR] [--runs N] [--time NET] [net ...]
#
# Each network is run from a copy of its .inp whose [TIMES] DURATION is 24:00 and whose [OPTIONS]
# QUALITY is NONE (netsolve does not simulate water quality; with NONE EPANET writes what netsolve
# writes, so every field is compared): runepanet COPY.inp COPY.rpt REF.out, netsolve --network
# COPY.inp --out OUT.out. A row per network: the comparison's verdict ("equal": every integer and
# ID equal, every float within a relative 1e-6, i.e. the same float32 up to one rounding of the
# doubles; else the count of differing fields and the largest relative difference, and whether
# every float is within 1e-3 relative or absolute, netsolve's --reference tolerance), both exit
# codes. Then --time NET (default BWSN_Network_2): whole-process wall time, best of N (default 5)
# interleaved, one thread, of netsolve without --out, with --out, and runepanet (which writes its
# .rpt and .out). Exit 1 if a network both complete is not equal, or only one writes a file where
# EPANET did not stop on an error.
set -euo pipefail
cd "$(dirname "$0")/../.."

build=build
data=../shared/data
runs=5
time_net=BWSN_Network_2
nets=()
while (($#)); do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --data) data=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --time) time_net=$2; shift 2 ;;
    -h | --help) sed -n '2,17p' "$0"; exit 0 ;;
    *) nets+=("$1"); shift ;;
  esac
done
netsolve=$build/app/netsolve
runepanet=$data/tools/epanet/runepanet
[[ -x $runepanet ]] || runepanet=$data/../tools/epanet/runepanet
[[ -x $netsolve ]] || { echo "netsolve-out: $netsolve not built" >&2; exit 2; }
[[ -x $runepanet ]] || { echo "netsolve-out: no runepanet beside $data" >&2; exit 2; }
if ((${#nets[@]} == 0)); then
  for inp in "$data"/networks/*.inp; do nets+=("$(basename "$inp" .inp)"); done
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The copy: DURATION 24:00 in [TIMES], QUALITY NONE in [OPTIONS] (other lines as they are).
make_copy() {
  awk 'BEGIN { IGNORECASE = 1 }
       { sub(/\r$/, "") }
       /^[ \t]*\[/ { section = toupper($1); print; if (section == "[TIMES]") print " Duration 24:00";
                     if (section == "[OPTIONS]") print " Quality None"; next }
       section == "[TIMES]" && tolower($1) ~ /^dura/ { next }
       section == "[OPTIONS]" && tolower($1) ~ /^qual/ { next }
       { print }' "$1" >"$2"
}

status=0
printf '%-22s %9s %9s  %s\n' network runepanet netsolve comparison
for net in "${nets[@]}"; do
  make_copy "$data/networks/$net.inp" "$tmp/$net.inp"
  r1=0 r2=0
  "$runepanet" "$tmp/$net.inp" "$tmp/$net.rpt" "$tmp/$net.out" >/dev/null 2>&1 || r1=$?
  "$netsolve" --network "$tmp/$net.inp" --out "$tmp/ns.out" --quiet >/dev/null 2>&1 || r2=$?
  if [[ ! -f $tmp/$net.out && ! -f $tmp/ns.out ]]; then
    verdict="neither wrote a file"
  elif [[ ! -f $tmp/$net.out ]] && ((r1 >= 100)); then
    verdict="EPANET stopped ($(grep -m1 -o 'Error [0-9]*' "$tmp/$net.rpt" || echo error)), no file to compare"
  elif [[ ! -f $tmp/$net.out || ! -f $tmp/ns.out ]]; then
    verdict="only one wrote a file"
    status=1
  else
    verdict=$(python3 scripts/compare_epanet_out.py "$tmp/$net.out" "$tmp/ns.out" --quiet) || {
      loose=$(python3 scripts/compare_epanet_out.py "$tmp/$net.out" "$tmp/ns.out" --loose 1e-3 --quiet | cut -d: -f1 || true)
      verdict="$verdict; within 1e-3: $loose"
      status=1
    }
  fi
  printf '%-22s %9s %9s  %s\n' "$net" "$r1" "$r2" "$verdict"
  rm -f "$tmp/$net.out" "$tmp/ns.out" "$tmp/$net.rpt"
done

# Whole-process wall time, seconds, of the command given.
wall() {
  local t0 t1
  t0=$(date +%s.%N)
  "$@" >/dev/null 2>&1 || true
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f\n", b - a }' 
}
best() { sort -g | head -1; }

if [[ -n $time_net ]]; then
  make_copy "$data/networks/$time_net.inp" "$tmp/t.inp"
  : >"$tmp/plain" ; : >"$tmp/out" ; : >"$tmp/epanet"
  for ((i = 0; i < runs; ++i)); do
    wall "$netsolve" --network "$tmp/t.inp" --quiet --threads 1 >>"$tmp/plain"
    wall "$netsolve" --network "$tmp/t.inp" --quiet --threads 1 --out "$tmp/t_ns.out" >>"$tmp/out"
    wall "$runepanet" "$tmp/t.inp" "$tmp/t.rpt" "$tmp/t.out" >>"$tmp/epanet"
  done
  plain=$(best <"$tmp/plain") out=$(best <"$tmp/out") epanet=$(best <"$tmp/epanet")
  size=$(stat -c %s "$tmp/t_ns.out")
  echo
  echo "$time_net 24 h, whole process, best of $runs, one thread ($(date -u +%F), $(nproc) cores):"
  printf '  netsolve            %8.4f s\n' "$plain"
  printf '  netsolve --out      %8.4f s  (+%.1f%% for a %d-byte .out)\n' "$out" \
    "$(awk -v a="$out" -v b="$plain" 'BEGIN { print 100 * (a - b) / b }')" "$size"
  printf '  runepanet .rpt .out %8.4f s  (netsolve --out / runepanet = %.3f)\n' "$epanet" \
    "$(awk -v a="$out" -v b="$epanet" 'BEGIN { print a / b }')"
fi
exit $status
