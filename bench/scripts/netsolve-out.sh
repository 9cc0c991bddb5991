#!/usr/bin/env bash
# netsolve's binary output file (--out) against EPANET 2.3.5's own runepanet on every shared
# network over 24 h, field by field (scripts/compare_epanet_out.py), and what writing it costs.
#
#   bench/scripts/netsolve-out.sh [--build DIR] [--data DIR] [--runs N] [--time NET] [--quality]
#                                 [net ...]
#
# Each network is run from a copy of its .inp whose [TIMES] DURATION is 24:00 and whose [OPTIONS]
# QUALITY is NONE (the hydraulics alone), or, with --quality, the file's own (its water quality
# fields compared as the rest): runepanet COPY.inp COPY.rpt REF.out, netsolve --network
# COPY.inp --out OUT.out. A row per network: the comparison's verdict ("equal": every integer and
# ID equal, every float within a relative 1e-6, i.e. the same float32 up to one rounding of the
# doubles; else the count of differing fields and the largest relative difference, and whether
# every float is within 1e-3 relative or absolute, netsolve's --reference tolerance), both exit
# codes. Then --time NET (default BWSN_Network_2; '' for none): whole-process wall and CPU time,
# best of N (default 5) interleaved, one thread, of netsolve without --out, with --out, and
# runepanet (which writes its .rpt and .out). Exit 1 if a network both complete is not equal, or only one writes a file where
# EPANET did not stop on an error.
set -euo pipefail
cd "$(dirname "$0")/../.."

build=build
data=../shared/data
runs=5
time_net=BWSN_Network_2
quality=0
nets=()
while (($#)); do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --data) data=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --time) time_net=$2; shift 2 ;;
    --quality) quality=1; shift ;;
    -h | --help) sed -n '2,19p' "$0"; exit 0 ;;
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

# The copy: DURATION 24:00 in [TIMES], QUALITY NONE in [OPTIONS] unless --quality (other lines
# as they are).
make_copy() {
  awk -v keep="$quality" 'BEGIN { IGNORECASE = 1 }
       { sub(/\r$/, "") }
       /^[ \t]*\[/ { section = toupper($1); print; if (section == "[TIMES]") print " Duration 24:00";
                     if (section == "[OPTIONS]" && !keep) print " Quality None"; next }
       section == "[TIMES]" && tolower($1) ~ /^dura/ { next }
       section == "[OPTIONS]" && tolower($1) ~ /^qual/ && !keep { next }
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
      loose=$(python3 scripts/compare_epanet_out.py "$tmp/$net.out" "$tmp/ns.out" --loose 1e-3 --quiet | sed -e 's/:.*differing:/ beyond it:/' -e t -e 's/: .*//' || true)
      verdict="$verdict; within 1e-3: $loose"
      status=1
    }
  fi
  printf '%-22s %9s %9s  %s\n' "$net" "$r1" "$r2" "$verdict"
  rm -f "$tmp/$net.out" "$tmp/ns.out" "$tmp/$net.rpt"
done

# Whole-process wall time and CPU time (user + system), seconds, of the command given: on a
# shared machine the wall time waits for the cores, the CPU time is the work.
# Each run writes a new file (the previous one removed first: ext4 flushes a file renamed or
# truncated over an existing one, which would time the disk rather than the writing).
measure() {
  rm -f "$tmp/t_ns.out" "$tmp/t.out" "$tmp/t.rpt"
  local TIMEFORMAT='%3R %3U %3S'
  { time "$@" >/dev/null 2>&1; } 2>"$tmp/time" || true
  awk '{ printf "%.4f %.4f\n", $1, $2 + $3 }' "$tmp/time"
}
best() { sort -g | head -1; }

if [[ -n $time_net ]]; then
  make_copy "$data/networks/$time_net.inp" "$tmp/t.inp"
  : >"$tmp/plain" ; : >"$tmp/out" ; : >"$tmp/epanet"
  for ((i = 0; i < runs; ++i)); do
    measure "$netsolve" --network "$tmp/t.inp" --quiet --threads 1 >>"$tmp/plain"
    measure "$netsolve" --network "$tmp/t.inp" --quiet --threads 1 --out "$tmp/t_ns.out" >>"$tmp/out"
    size=$(stat -c %s "$tmp/t_ns.out")
    measure "$runepanet" "$tmp/t.inp" "$tmp/t.rpt" "$tmp/t.out" >>"$tmp/epanet"
  done
  echo
  echo "$time_net 24 h, whole process, best of $runs interleaved, one thread ($(date -u +%F), $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)):"
  printf '  %-22s %10s %10s\n' "" "wall (s)" "CPU (s)"
  for what in plain out epanet; do
    wall=$(cut -d' ' -f1 "$tmp/$what" | best) cpu=$(cut -d' ' -f2 "$tmp/$what" | best)
    declare "wall_$what=$wall" "cpu_$what=$cpu"
    case $what in
      plain) name="netsolve" ;; out) name="netsolve --out" ;; epanet) name="runepanet .rpt .out" ;;
    esac
    printf '  %-22s %10.4f %10.4f\n' "$name" "$wall" "$cpu"
  done
  ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.1f%%", 100 * (a - b) / b }'; }
  echo "  writing the .out ($size bytes): wall $(ratio "$wall_out" "$wall_plain"), CPU $(ratio "$cpu_out" "$cpu_plain")"
  echo "  netsolve --out against runepanet: wall $(ratio "$wall_out" "$wall_epanet"), CPU $(ratio "$cpu_out" "$cpu_epanet")"
fi
exit $status
