#!/usr/bin/env bash
# Throughput of a scenario study, netsolve against EPANET 2.3.5's reference loop on one thread
# (../shared/tools/epanet/epanet-scenarios), side by side in one run: for each network, RUNS rounds,
# each running epanet-scenarios once, then netsolve --study with --start warm (the baseline's
# solution) and --start cold (EPANET's own starting flows) on THREADS threads (the default,
# --start auto, takes one of the two after its probes). Prints one line per run and a
# markdown table of medians last: ms per scenario (netsolve's includes its set-up: the baseline
# run, the thread workspaces and solver copies; EPANET's is its scenario loop alone, after
# EN_openH) and the speed-up over EPANET's one thread; then the CPU time per scenario of each
# process (file reading and set-up included), which a loaded machine does not inflate as it does
# the wall clock.
#
#   scripts/study-bench.sh [--build build-cpu] [--threads N (default: every core)] [--runs 3]
#                          [--study fireflow|closure] [--duration 0] NET.inp ...
# Without networks: Exnet_EXN, Richmond_standard, Net3 from ../shared/data/networks.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
build=$here/build-cpu threads=$(nproc) runs=3 study=fireflow duration=0
nets=()
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --study) study=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) nets+=("$1"); shift ;;
  esac
done
shared=$here/../shared
epanet=$shared/tools/epanet/epanet-scenarios
netsolve=$build/app/netsolve
[ -x "$epanet" ] || { echo "study-bench.sh: $epanet not found" >&2; exit 2; }
[ -x "$netsolve" ] || { echo "study-bench.sh: $netsolve not built" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "study-bench.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
[ ${#nets[@]} -gt 0 ] || nets=("$shared"/data/networks/{Exnet_EXN,Richmond_standard,Net3}.inp)
tmp=$(mktemp -d /tmp/study-bench.XXXXXX)
# cpu FILE CMD...: runs CMD (stdout passed on, and kept in $tmp/cpu.out), writes its CPU seconds
# (user + system, the whole process: file reading and set-up included) to FILE.
cpu() {
  local file=$1; shift
  /usr/bin/time -f "%U %S" -o "$tmp/time.txt" "$@" 2> /dev/null | tee "$tmp/cpu.out"
  tail -1 "$tmp/time.txt" | awk '{ printf "%.6f", $1 + $2 }' > "$file"
}
trap 'rm -rf "$tmp"' EXIT
results=$tmp/results.txt
echo "study-bench: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), netsolve --threads $threads, $study, duration $duration, $runs runs"
for f in "${nets[@]}"; do
  n=$(basename "$f" .inp)
  for r in $(seq "$runs"); do
    e=$(cpu "$tmp/cpu.txt" "$epanet" "$f" --study "$study" --duration "$duration" | sed -n 's/.* \([0-9.]*\) ms a scenario.*/\1/p')
    scenarios=$(sed -n 's/.*: \([0-9]*\) scenarios,.*/\1/p' "$tmp/cpu.out")
    echo "$n epanet $e $(python3 -c "import sys; print('%.4f' % (1e3*float(sys.argv[1])/int(sys.argv[2])))" "$(cat "$tmp/cpu.txt")" "$scenarios")" >> "$results"
    for start in warm cold; do
      flag=--start=$start
      cpu "$tmp/cpu.txt" "$netsolve" --network "$f" --study "$study" --duration "${duration}s" \
        --threads "$threads" $flag --quiet --report "$tmp/report.json" > /dev/null
      ms=$(python3 -c "import json,sys; j=json.load(open(sys.argv[1])); n=j['study']['scenarios']; print('%.4f %.4f' % (1e3*(j['setup_seconds']+j['scenario_seconds'])/n, 1e3*float(sys.argv[2])/n))" "$tmp/report.json" "$(cat "$tmp/cpu.txt")")
      echo "$n netsolve-$start $ms" >> "$results"
    done
    echo "$n run $r: EPANET $e ms, netsolve warm $(tail -2 "$results" | head -1 | cut -d' ' -f3) ms, cold $(tail -1 "$results" | cut -d' ' -f3) ms a scenario"
  done
done
python3 - "$results" "$threads" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
nets = list(dict.fromkeys(r[0] for r in rows))
t = sys.argv[2]
print(f"\nWall clock, ms a scenario (medians), and the speed-up over EPANET's one thread:\n")
print(f"| network | EPANET, 1 thread | netsolve warm, {t} threads | speed-up | netsolve cold, {t} threads | speed-up |")
print("|---|---|---|---|---|---|")
med = lambda n, k, col: statistics.median(float(r[col]) for r in rows if r[0] == n and r[1] == k)
for n in nets:
    m = {k: med(n, k, 2) for k in ("epanet", "netsolve-warm", "netsolve-cold")}
    print(f"| {n} | {m['epanet']:.4f} | {m['netsolve-warm']:.4f} | {m['epanet']/m['netsolve-warm']:.2f}x "
          f"| {m['netsolve-cold']:.4f} | {m['epanet']/m['netsolve-cold']:.2f}x |")
print(f"\nCPU time (user + system, the whole process), ms a scenario (medians): the work per scenario,"
      f" whatever else the machine runs; EPANET's over netsolve's is the speed-up per core:\n")
print("| network | EPANET | netsolve warm | ratio | netsolve cold | ratio |")
print("|---|---|---|---|---|---|")
ratio = lambda a, b: f"{a / b:.2f}x" if a > 0 and b > 0 else "- (below the clock's 10 ms)"
for n in nets:
    m = {k: med(n, k, 3) for k in ("epanet", "netsolve-warm", "netsolve-cold")}
    print(f"| {n} | {m['epanet']:.4f} | {m['netsolve-warm']:.4f} | {ratio(m['epanet'], m['netsolve-warm'])} "
          f"| {m['netsolve-cold']:.4f} | {ratio(m['epanet'], m['netsolve-cold'])} |")
EOF
