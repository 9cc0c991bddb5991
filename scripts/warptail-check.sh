#!/usr/bin/env bash
# Issue 21, branch warptail (BENCHMARKS section 10o): the cluster loop's sweeps with their narrow
# first and last levels on one warp (solver/cuda/cluster_cg.cu, "A sweep's narrow ends"), on one
# GPU in one call:
#   test      test_gpu 'Cluster*' (the programs in one block; the narrow levels' tests: z after one
#             iteration equal to the host program's to 1e-12 for CGSOLVE_CLUSTER_WARP_TAIL=0 to 3,
#             the CPU's iterations within 1)
#   table     per system (the five of DATA) and per preconditioner (chol, ic0): CPU serial, then
#             the GPU with CGSOLVE_CLUSTER_WARP_TAIL=0 (every row on its own thread: main's sweeps),
#             1 (the default: head and tail on warp 0, a block barrier after the head), 2 (the
#             wide rows poll the counter through the head) and 3 (as 1, each narrow level's rows
#             found only when it starts), interleaved run by run; medians of RUNS
#             processes: iterations, solve ms (the report's solve_s: one launch and its copies),
#             us per iteration, time to solution, the loop that ran. BWSN_Network_2 does not fit one
#             block (persistent loop: the switch does nothing there).
#   sanitize  compute-sanitizer memcheck and racecheck on the narrow levels' apply test (light:
#             no Exnet)
# Usage: OUT=dir [SKIP_BUILD=1] [BUILD=build-gpu] [RUNS=5] [PHASES="build test table sanitize"]
#        scripts/warptail-check.sh [DATA (default .gpu-data)]
# Writes $OUT/summary.txt (the table too) and at most 3 logs. About 3-5 min on a 16-core H100
# (timeouts: tests 240 s, each sanitizer 100 s, each cgsolve run 60 s).
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/cuda/bin:$PATH
OUT=${OUT:-/tmp/warptail-out}
DATA=${1:-.gpu-data}
B=${BUILD:-build-gpu}
RUNS=${RUNS:-5}
PHASES=${PHASES:-"build test table sanitize"}
[[ ${SKIP_BUILD:-0} == 1 ]] && PHASES=${PHASES/build/}
mkdir -p "$OUT"
S=$OUT/summary.txt
: > "$S"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
say() { echo "$*" | tee -a "$S"; }
wants() { [[ " $PHASES " == *" $1 "* ]]; }
say "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)," \
  "$(nproc) host cores, tree $(git rev-parse --short HEAD 2>/dev/null), $(date -u +%FT%TZ)"

if wants build; then
  t0=$SECONDS
  { cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
      -DCGSOLVE_WITH_MPI=OFF -DCGSOLVE_WITH_NCCL=OFF &&
    cmake --build "$B" -j "$(nproc)" --target cgsolve test_gpu; } > "$tmp/build.log" 2>&1 ||
    { say "build failed"; grep -B3 -A12 "error" "$tmp/build.log" | head -60 | tee -a "$S"; exit 1; }
  say "build: $((SECONDS - t0)) s"
fi
T=$B/tests/test_gpu
C=$B/app/cgsolve

if wants test; then
  t0=$SECONDS
  timeout 240 "$T" -tc='Cluster*' > "$OUT/test-cluster.log" 2>&1
  say "test_gpu 'Cluster*': exit $?, $((SECONDS - t0)) s, $(grep -E '^\[doctest\] (test cases|assertions)' "$OUT/test-cluster.log" | tr '\n' ' ')"
  grep -B4 -A14 "ERROR" "$OUT/test-cluster.log" | head -80 | tee -a "$S"
fi

# One cgsolve run's report appended to $tmp/<key>.runs as one line.
one_run() {  # key env-value args...
  local key=$1 ends=$2
  shift 2
  rm -f "$tmp/r.json"
  CGSOLVE_CLUSTER_WARP_TAIL=$ends timeout 60 "$C" "$@" --tol 1e-10 --max-iters 400000 --quiet \
    --report "$tmp/r.json" > "$tmp/last.txt" 2>&1
  { [[ -s $tmp/r.json ]] && tr -d '\n' < "$tmp/r.json"; echo; } >> "$tmp/$key.runs"
}

# The median (by solve time) of a key's runs, one line.
median() {  # key label
  python3 - "$tmp/$1.runs" "$2" <<'PY'
import json, sys
path, label = sys.argv[1:]
runs = []
for line in open(path):
    try:
        runs.append(json.loads(line))
    except Exception:
        pass
if not runs:
    print(f"  {label:30} (no report)")
    sys.exit()
def tts(j):
    t = j["times"]
    return sum(t.get(k, 0) for k in ("inspect_s", "reorder_s", "build_format_s", "preconditioner_s", "upload_s", "solve_s"))
runs.sort(key=lambda j: j["times"]["solve_s"])
j = runs[len(runs) // 2]
r = j["result"]
its = r["converged_at"] if r["converged"] else r["iterations"]
solve = j["times"]["solve_s"]
per = solve / max(r["iterations"], 1)
lo, hi = runs[0]["times"]["solve_s"], runs[-1]["times"]["solve_s"]
flag = "" if r["converged"] else "  NOT CONVERGED"
print(f"  {label:30} {its:6d} {solve*1e3:9.3f} {per*1e6:9.1f} {tts(j)*1e3:9.2f}  {j['plan'].get('loop', '?'):10} (solve {lo*1e3:.3f}-{hi*1e3:.3f}, {len(runs)} runs){flag}")
PY
}

if wants table; then
  t0=$SECONDS
  systems="ky2_step4 Richmond_standard_step4 Exnet_EXN_step3 Wolf-Cordera_wolf-3_step5 BWSN_Network_2_step10"
  {
    echo "== solve times, tol 1e-10, median of $RUNS by solve time (GPU modes interleaved run by run)"
    printf '  %-30s %6s %9s %9s %9s  %s\n' "" iters "solve ms" "us/iter" "tts ms" loop
    for name in $systems; do
      A=$DATA/$name.mtx.gz
      if [[ ! -f $A ]]; then echo "$name: $A missing"; continue; fi
      args=(--matrix "$A" --rhs "$DATA/${name}_b.mtx.gz")
      echo "$name"
      for p in chol ic0; do
        for ((i = 0; i < RUNS; i++)); do
          one_run "$name-$p-cpu" 1 "${args[@]}" --device cpu --threads 1 --precond "$p"
          for ends in 0 1 2 3; do one_run "$name-$p-$ends" "$ends" "${args[@]}" --device gpu --precond "$p"; done
        done
        median "$name-$p-cpu" "CPU serial $p"
        median "$name-$p-0" "GPU $p WARP_TAIL=0 (main)"
        median "$name-$p-1" "GPU $p WARP_TAIL=1 (default)"
        median "$name-$p-2" "GPU $p WARP_TAIL=2 (poll)"
        median "$name-$p-3" "GPU $p WARP_TAIL=3 (no ahead)"
      done
    done
  } > "$tmp/table.txt" 2>&1
  cat "$tmp/table.txt" >> "$S"
  cat "$tmp/table.txt"
  say "table: $((SECONDS - t0)) s"
fi

if wants sanitize; then
  for tool in memcheck racecheck; do
    t0=$SECONDS
    CGS_GPU_TESTS_LIGHT=1 timeout 100 compute-sanitizer --tool $tool --error-exitcode 86 \
      "$T" -tc='Cluster CG with chol and ic0: narrow levels on one warp give*' \
      > "$OUT/sanitize-$tool.log" 2>&1
    say "compute-sanitizer $tool (narrow levels' apply test, light): exit $?, $((SECONDS - t0)) s, $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitize-$tool.log" | head -1)"
  done
fi
