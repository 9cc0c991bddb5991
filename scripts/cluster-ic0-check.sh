#!/usr/bin/env bash
# Issue 21 item 2 on a GPU machine: the exact level-scheduled IC(0) in the cluster loop's one
# block (solver/cuda/cluster_cg.hpp), in one call:
#   build   cgsolve and test_gpu (skipped with SKIP_BUILD=1)
#   test    the cluster tests (programs in one block, and the pointwise cluster loop), and the
#           GPU program applies against the host's (the programs' arrays are packed now:
#           device_program.cu)
#   sanitize compute-sanitizer memcheck and racecheck on the programs in one block (light: no
#           Exnet), racecheck without cuSPARSE's kernels
#   table   per system: CPU serial ic0 (--device cpu --threads 1), GPU ic0 in the new loop
#           (--gpu-loop cluster), GPU ic0 persistent, GPU fsai:2 (default loop); tol 1e-10,
#           medians of RUNS runs: iterations, set-up, time to solution (set-up + solve, file
#           read excluded, from the JSON report), the loop that ran; printed last.
# Usage: OUT=dir [SKIP_BUILD=1] [BUILD=build-gpu] scripts/cluster-ic0-check.sh [data dir]
#   data dir (default .gpu-data): <name>.mtx.gz and <name>_b.mtx.gz for the five systems.
# Env: PHASES="build test sanitize table" (default all), RUNS=3. < 5 min on a 16-core H100.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-gpu-out}
DATA=${1:-.gpu-data}
BUILD=${BUILD:-build-gpu}
RUNS=${RUNS:-3}
PHASES=${PHASES:-"build test sanitize table"}
[[ ${SKIP_BUILD:-0} == 1 ]] && PHASES=${PHASES/build/}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
wants() { [[ " $PHASES " == *" $1 "* ]]; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader > "$OUT/machine.txt" 2>&1
summary=()

if wants build; then
  t0=$SECONDS
  { cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
      -DCGSOLVE_WITH_MPI=OFF -DCGSOLVE_WITH_NCCL=OFF &&
    cmake --build "$BUILD" -j "$(nproc)" --target cgsolve test_gpu; } > "$OUT/build.log" 2>&1 ||
    { grep -B3 -A12 "error" "$OUT/build.log" | head -80; exit 1; }
  echo "build: $((SECONDS - t0)) s"
fi
TEST=$BUILD/tests/test_gpu
CGSOLVE=$BUILD/app/cgsolve

if wants test; then
  t0=$SECONDS
  timeout 180 "$TEST" -tc='Cluster*' > "$OUT/test_cluster.log" 2>&1
  rc=$?
  summary+=("test_gpu Cluster* (programs in one block, pointwise cluster loop): exit $rc, $((SECONDS - t0)) s, $(grep -E '^\[doctest\] (test cases|assertions)' "$OUT/test_cluster.log" | tr '\n' ' ')")
  grep -B4 -A14 "ERROR" "$OUT/test_cluster.log" | head -60
  t0=$SECONDS
  CGS_GPU_TESTS_LIGHT=1 timeout 150 "$TEST" -tc='GPU preconditioners: one apply*,GPU ic0*' \
    > "$OUT/test_precond.log" 2>&1
  rc=$?
  summary+=("test_gpu GPU preconditioners: one apply*, GPU ic0*: exit $rc, $((SECONDS - t0)) s, $(grep -E '^\[doctest\] (test cases|assertions)' "$OUT/test_precond.log" | tr '\n' ' ')")
  grep -B4 -A14 "ERROR" "$OUT/test_precond.log" | head -40
fi

if wants sanitize; then
  for tool in memcheck racecheck; do
    t0=$SECONDS
    extra=()
    [[ $tool == racecheck ]] && extra=(--kernel-name-exclude kns=cusparse)
    CGS_GPU_TESTS_LIGHT=1 timeout 150 compute-sanitizer --tool $tool "${extra[@]}" \
      --error-exitcode 86 "$TEST" -tc='Cluster CG with ic0*' > "$OUT/sanitize-$tool.log" 2>&1
    rc=$?
    summary+=("compute-sanitizer $tool (ic0 in one block, light): exit $rc, $((SECONDS - t0)) s, $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitize-$tool.log" | head -1)")
  done
fi

# One row: the median (by time to solution) of RUNS runs of cgsolve.
row() {  # label args...
  local label=$1
  shift
  : > "$OUT/runs.txt"
  for ((i = 0; i < RUNS; i++)); do
    rm -f "$OUT/r.json"
    timeout 60 "$CGSOLVE" "$@" --tol 1e-10 --max-iters 400000 --quiet --report "$OUT/r.json" \
      > "$OUT/last-run.txt" 2>&1
    echo "$? $(tr -d '\n' 2>/dev/null < "$OUT/r.json")" >> "$OUT/runs.txt"
  done
  python3 - "$OUT/runs.txt" "$label" <<'PY'
import json, sys
path, label = sys.argv[1:]
runs = []
for line in open(path):
    status, _, text = line.strip().partition(" ")
    try:
        runs.append(json.loads(text))
    except Exception:
        pass
if not runs:
    print(f"  {label:26} {'-':>7} {'-':>8} {'-':>9} {'-':>10}  (no report: {open(path).read().split()[0] if open(path).read() else '?'})")
    sys.exit()
def tts(j):
    t = j["times"]
    return sum(t.get(k, 0) for k in ("inspect_s", "reorder_s", "build_format_s", "preconditioner_s", "upload_s", "solve_s"))
j = sorted(runs, key=tts)[len(runs) // 2]
r = j["result"]
its = r["converged_at"] if r["converged"] else r["iterations"]
setup = tts(j) - j["times"]["solve_s"]
loop = j["plan"].get("loop", "?")
flag = "" if r["converged"] else "  NOT CONVERGED"
per = j["times"]["solve_s"] / max(r["iterations"], 1)
print(f"  {label:26} {its:7d} {per*1e6:8.2f} {setup*1e3:9.2f} {tts(j)*1e3:10.2f}  {loop}{flag}")
# Where the set-up went (ms): the report's phases, and the preconditioner's own.
t = j["times"]
phases = ", ".join(f"{k[:-2]} {t.get(k, 0)*1e3:.2f}" for k in ("inspect_s", "reorder_s", "build_format_s", "preconditioner_s", "upload_s"))
pre = ", ".join(f"{k} {v*1e3:.2f}" for k, v in j.get("preconditioner", {}).get("phases_s", {}).items())
print(f"  {'':26}   set-up ms: {phases}; preconditioner: {pre}")
PY
}

if wants table; then
  systems="Exnet_EXN_step3 ky2_step4 Richmond_standard_step4 Wolf-Cordera_wolf-3_step5 BWSN_Network_2_step10"
  {
    echo "== time to solution (set-up + solve, file read excluded), tol 1e-10, median of $RUNS; $(cat "$OUT/machine.txt")"
    printf '  %-26s %7s %8s %9s %10s  %s\n' "" iters "us/iter" "setup ms" "tts ms" loop
    for name in $systems; do
      A=$DATA/$name.mtx.gz
      if [[ ! -f $A ]]; then echo "$name: $A missing"; continue; fi
      args=(--matrix "$A" --rhs "$DATA/${name}_b.mtx.gz")
      echo "$name"
      row "CPU serial ic0" "${args[@]}" --device cpu --threads 1 --precond ic0
      row "GPU ic0 cluster (1 block)" "${args[@]}" --device gpu --precond ic0 --gpu-loop cluster
      row "GPU ic0 persistent" "${args[@]}" --device gpu --precond ic0 --gpu-loop persistent
      row "GPU fsai:2" "${args[@]}" --device gpu --precond fsai:2
    done
  } > "$OUT/table.txt" 2>&1
  # Why the plan took (or refused) the block for ic0 on the biggest system.
  "$CGSOLVE" --matrix "$DATA/BWSN_Network_2_step10.mtx.gz" \
    --rhs "$DATA/BWSN_Network_2_step10_b.mtx.gz" --device gpu --precond ic0 --tol 1e-10 \
    --report "$OUT/bwsn-ic0-auto.json" > "$OUT/bwsn-ic0-auto.txt" 2>&1
fi

echo "== summary"
for line in "${summary[@]}"; do echo "$line"; done
[[ -f $OUT/table.txt ]] && cat "$OUT/table.txt"
