#!/usr/bin/env bash
# Issue 23 item 3 on a GPU machine, one call (< 8 minutes): build netsolve and test_gpu (sm_90) in
# build-gpu; the GPU study tests; then per network and study (fire flow, closure, steady state)
# netsolve --device gpu (the batched engine) against --device cpu on every core and
# epanet-scenarios on one thread (where its binary runs on this host), the same elements for all
# three; each GPU and CPU CSV compared with EPANET's (scripts/compare_study.py) and with each
# other. Logs and CSVs to $OUT; a summary table last.
# Usage: OUT=dir bench/scripts/study-gpu-bench.sh
# Env: BUILD (build-gpu), NETS (networks of ../shared/data/networks), MAX (BWSN's scenarios for
# EPANET and the CPU, 1000), GMAX / GMAX_BWSN (the GPU's: 128, one batch in flight), GPU_TIMEOUT (s a GPU study,
# 60), DEADLINE (s from the start after which no study starts: 450), SKIP_BUILD=1 (use BUILD),
# DEVICES ("cpu gpu"; "cpu": the CPU study against EPANET only, no GPU test or GPU column),
# CPU_THREADS (--threads of the CPU study: 0, every core; 1 gives the per-thread ratio),
# NETSOLVE_FLAGS (more flags for both netsolve runs, e.g. --cold-start).
# The 16-core CPU columns alone: SKIP_BUILD=1 DEVICES=cpu OUT=$OUT bench/scripts/study-gpu-bench.sh
# GPU_ENGINE (trials: every trial on the device, cholesky: the batched sparse Cholesky, each over
# every element the CPU runs;
# cg: the cluster CG, over the first GMAX), STUDIES ("fireflow closure"), SHARED (the data and
# tools: ../shared, else .gpu-data/shared).
# Issue 23's batched Cholesky (BENCHMARKS §19d), < 8 min:
#   SKIP_BUILD=1 BUILD=build-gpu NETS="BWSN_Network_2 Exnet_EXN Net3" STUDIES=fireflow OUT=$OUT bench/scripts/study-gpu-bench.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-gpu-out}
BUILD=${BUILD:-build-gpu}
MAX=${MAX:-1000}
DEVICES=${DEVICES:-cpu gpu}
gpu_wanted=0; case " $DEVICES " in *" gpu "*) gpu_wanted=1 ;; esac
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
start=$SECONDS
DEADLINE=${DEADLINE:-450}  # s from the start: no study begins that could run past it
log() { echo "[$((SECONDS - start)) s] $*"; }
# limit WANTED: WANTED seconds, or what is left before DEADLINE (0: nothing left)
limit() { local left=$((DEADLINE - (SECONDS - start))); [ "$left" -lt 5 ] && left=0; echo $(($1 < left ? $1 : left)); }
{ nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader 2> /dev/null || echo "no GPU"; } | tee "$OUT/machine.txt"
echo "$(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)" | tee -a "$OUT/machine.txt"
grep PRETTY_NAME /etc/os-release | tee -a "$OUT/machine.txt"

gen=(); command -v ninja > /dev/null && gen=(-G Ninja)
[ -n "${SKIP_BUILD:-}" ] || { cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DCGSOLVE_WITH_MPI=OFF -DCGSOLVE_WITH_NCCL=OFF "${gen[@]}" &&
  cmake --build "$BUILD" -j "$(nproc)" --target netsolve $([ $gpu_wanted = 1 ] && echo test_gpu); } > "$OUT/build.log" 2>&1 ||
  { grep -B3 -A12 "error" "$OUT/build.log" | head -60; exit 1; }
log "built"

test_rc=skipped
if [ $gpu_wanted = 1 ]; then
  timeout 150 "$BUILD/tests/test_gpu" -tc='*study*,GPU batch*,GPU trials*' -d > "$OUT/test_gpu_study.log" 2>&1
  test_rc=$?
  log "test_gpu (study): exit $test_rc"; tail -4 "$OUT/test_gpu_study.log"
  grep -B4 -A14 "ERROR\|FAILED" "$OUT/test_gpu_study.log" | head -60
fi

shared=${SHARED:-../shared}
[ -d "$shared/data/networks" ] || shared=.gpu-data/shared
GPU_ENGINE=${GPU_ENGINE:-cholesky}
netsolve=$BUILD/app/netsolve
epanet=$shared/tools/epanet/epanet-scenarios
epanet_ok=0
if [ -x "$epanet" ] && ! ldd "$epanet" 2>&1 | grep -q "not found" &&
  "$epanet" "$shared/data/networks/Net3.inp" --study fireflow --max 1 > /dev/null 2>&1; then
  epanet_ok=1
else
  log "epanet-scenarios does not run on this host (ldd below): EPANET columns skipped"
  ldd "$epanet" 2>&1 | head -5
fi

. scripts/study-elements.sh  # elements FILE SECTION N
ms_of() {  # netsolve's JSON report: scenarios/s over the scenarios, and with the set-up
  python3 -c "import json,sys; j=json.load(open(sys.argv[1])); n=j['study']['scenarios']; \
print('%d %.1f %.1f %s' % (n, j['scenarios_per_second'], n/(j['setup_seconds']+j['scenario_seconds']), j['failed']))" "$1"
}
results=$OUT/results.txt
: > "$results"
NETS=${NETS:-"Net3 Exnet_EXN BWSN_Network_2 Richmond_standard"}
# subset CSV K OUT: OUT = a study CSV's header and its scenarios 1..K (no baseline row).
subset() { awk -F, -v k="$2" 'NR == 1 || ($1 >= 1 && $1 <= k)' "$1" > "$3"; }
compare() {  # compare NETSOLVE.csv REFERENCE.csv NAME: "match" or "MISMATCH_(n)"
  python3 scripts/compare_study.py "$1" "$2" > "$OUT/$3.txt" 2>&1
  grep -o -m1 "MISMATCH ([0-9]*)\|match" "$OUT/$3.txt" | head -1 | tr ' ' '_'
}
for net in $NETS; do
  inp=$shared/data/networks/$net.inp
  [ -f "$inp" ] || { log "$inp missing"; continue; }
  for study in ${STUDIES:-fireflow closure}; do
    section=JUNCTIONS; [ $study = closure ] && section=PIPES
    # EPANET and the CPU run every element (BWSN: the first MAX); the GPU the first GMAX of them.
    max=100000 gmax=${GMAX:-128}
    [ "$net" = BWSN_Network_2 ] && max=$MAX gmax=${GMAX_BWSN:-128}
    # thousands in flight (cholesky) or every scenario in a call (trials): every element
    [ "$GPU_ENGINE" = cholesky ] || [ "$GPU_ENGINE" = trials ] && gmax=${GMAX:-$max}
    tag=$net-$study
    elements "$inp" $section $max > "$OUT/$tag-elements.txt"
    head -n "$gmax" "$OUT/$tag-elements.txt" > "$OUT/$tag-gpu-elements.txt"
    n=$(wc -l < "$OUT/$tag-elements.txt") g=$(wc -l < "$OUT/$tag-gpu-elements.txt")
    e_rate=- cpu_vs_e=- gpu_vs_e=- gpu_vs_cpu=-
    if [ $epanet_ok = 1 ]; then
      t=$(limit 60); [ "$t" -gt 0 ] && timeout "$t" "$epanet" "$inp" --study $study --max "$n" --csv "$OUT/$tag-epanet.csv" > "$OUT/$tag-epanet.log" 2>&1
      e_rate=$(sed -n 's/.* \([0-9.]*\) scenarios\/s.*/\1/p' "$OUT/$tag-epanet.log" | head -1)
      [ -n "$e_rate" ] || e_rate=?
    fi
    gpu_rate=- gpu_all=- gpu_failed=- cpu_rate=- cpu_all=- cpu_failed=-
    rm -f "$OUT/$tag-gpu.csv" "$OUT/$tag-cpu.csv"  # no stale rows from an earlier run
    for device in $DEVICES; do
      list=$OUT/$tag-elements.txt t=$(limit 60) engine=()
      [ $device = gpu ] && list=$OUT/$tag-gpu-elements.txt t=$(limit "${GPU_TIMEOUT:-60}") engine=(--batch-engine "$GPU_ENGINE")
      rm -f "$OUT/$tag-$device.json" "$OUT/$tag-$device.csv"
      [ "$t" -gt 0 ] && timeout "$t" "$netsolve" --network "$inp" --study $study --elements "$list" --device $device "${engine[@]}" --threads "${CPU_THREADS:-0}" ${NETSOLVE_FLAGS:-} \
        --study-csv "$OUT/$tag-$device.csv" --report "$OUT/$tag-$device.json" > "$OUT/$tag-$device.log" 2>&1
      rc=$?
      [ "$t" -gt 0 ] || rc=skipped
      if [ -f "$OUT/$tag-$device.json" ]; then
        read -r rate rate_all failed < <(python3 -c "import json,sys; j=json.load(open(sys.argv[1])); n=j['study']['scenarios']; \
print('%.1f %.1f %s' % (j['scenarios_per_second'], n/(j['setup_seconds']+j['scenario_seconds']), j['failed']))" "$OUT/$tag-$device.json")
      else
        rate=- rate_all=- failed="rc_$rc"
      fi
      eval "${device}_rate=\$rate ${device}_all=\$rate_all ${device}_failed=\$failed"
      grep -E "^solver|^batches|^time" "$OUT/$tag-$device.log" | sed "s/^/  $tag $device: /"
    done
    if [ -f "$OUT/$tag-epanet.csv" ]; then
      [ -f "$OUT/$tag-cpu.csv" ] && cpu_vs_e=$(compare "$OUT/$tag-cpu.csv" "$OUT/$tag-epanet.csv" $tag-cpu-vs-epanet)
      subset "$OUT/$tag-epanet.csv" "$g" "$OUT/$tag-epanet-gpu-subset.csv"
      [ -f "$OUT/$tag-gpu.csv" ] && gpu_vs_e=$(compare "$OUT/$tag-gpu.csv" "$OUT/$tag-epanet-gpu-subset.csv" $tag-gpu-vs-epanet)
    fi
    if [ -f "$OUT/$tag-cpu.csv" ] && [ -f "$OUT/$tag-gpu.csv" ]; then
      subset "$OUT/$tag-cpu.csv" "$g" "$OUT/$tag-cpu-gpu-subset.csv"
      gpu_vs_cpu=$(compare "$OUT/$tag-gpu.csv" "$OUT/$tag-cpu-gpu-subset.csv" $tag-gpu-vs-cpu)
    fi
    echo "$tag $n ${e_rate:--} ${cpu_rate:--} ${cpu_all:--} $g ${gpu_rate:--} ${gpu_all:--} ${cpu_vs_e:--} ${gpu_vs_e:--} ${gpu_vs_cpu:--} $cpu_failed $gpu_failed" | tee -a "$results"
    log "$tag done"
  done
done

echo
echo "== summary ($(head -1 "$OUT/machine.txt"); $(nproc) cores; test_gpu study exit $test_rc; GPU engine $GPU_ENGINE; $((SECONDS - start)) s)"
echo "Scenarios a second (steady state, 1000 gpm fire flow / one pipe closed): EPANET on one thread and"
echo "netsolve --device cpu on every core over the first n elements, --device gpu over the first g of"
echo "them; 'with set-up': the baseline run and the workspaces included. Rows: scripts/compare_study.py."
python3 - "$results" <<'EOF'
import sys
def num(s):
    try: return float(s)
    except ValueError: return None
ratio = lambda a, b: f"{a / b:.2f}x" if a and b else "-"
print("| study | n | EPANET 1 thread | cpu | cpu with set-up | cpu/EPANET | g | gpu | gpu with set-up | gpu/cpu | gpu/EPANET | cpu vs EPANET | gpu vs EPANET | gpu vs cpu | failed cpu, gpu |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for line in open(sys.argv[1]):
    tag, n, e, c, ca, g, gr, ga, ce, ge, gc, cf, gf = line.split()
    E, C, G = num(e), num(c), num(gr)
    print(f"| {tag} | {n} | {e} | {c} | {ca} | {ratio(C, E)} | {g} | {gr} | {ga} | {ratio(G, C)} | {ratio(G, E)} | {ce} | {ge} | {gc} | {cf}, {gf} |")
EOF
