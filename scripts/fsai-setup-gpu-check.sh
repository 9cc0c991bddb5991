#!/usr/bin/env bash
# Issue 21 item 3, FSAI's set-up on the device (solver/precond/fsai_gpu.cu), on one GPU in one call:
# build (unless SKIP_BUILD=1), the GPU tests of the device set-up (tests/gpu/test_gpu_fsai_setup.cpp)
# and the set-up tests beside them (test_gpu_precond_setup.cpp: fsai:2's apply and solve now take
# the device path), compute-sanitizer memcheck over the new tests, the set-up table of
# BENCHMARKS §10g for jacobi and fsai:2 on gen:poisson2d:1000 and :3000 (--device gpu, median of
# RUNS by total set-up, each phase from the JSON report, fsai's pattern / rows / transpose from
# its "fsai set-up" table), a solve of poisson2d:1000 with fsai:2 on the GPU against the CPU's
# iteration count, and fsai:2 on the EPANET systems of DATA (small: the host set-up, a sanity
# check of the iterations). Logs under $OUT; a short summary last. < 6 min on a 16-core H100 host.
# Usage: [SKIP_BUILD=1] [BUILD=build-gpu] [RUNS=3] OUT=dir scripts/fsai-setup-gpu-check.sh [DATA]
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/cuda/bin:$PATH
B=${BUILD:-build-gpu}
OUT=${OUT:-/tmp/fsaisetup-out}
RUNS=${RUNS:-3}
DATA=${1:-.gpu-data}
L=$OUT/fsaisetup-logs
mkdir -p "$L"
S=$L/summary.txt
: > "$S"
say() { echo "$*" | tee -a "$S"; }
t0=$SECONDS
nvidia-smi --query-gpu=name --format=csv,noheader > "$L/machine.txt" 2>&1
say "device: $(head -1 "$L/machine.txt"), $(nproc) host cores, tree $(git rev-parse --short HEAD 2>/dev/null)"
if [[ -z ${SKIP_BUILD:-} ]]; then
  cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DCGSOLVE_WITH_MPI=OFF -DCGSOLVE_WITH_NCCL=OFF > "$L/configure.log" 2>&1 &&
    cmake --build "$B" -j "$(nproc)" --target cgsolve test_gpu > "$L/build.log" 2>&1 ||
    { say "build failed"; grep -B2 -A10 "error" "$L/build.log" | head -40; exit 1; }
  say "build $((SECONDS - t0)) s"
fi
T=$B/tests/test_gpu
C=$B/app/cgsolve
timeout 120 "$T" -tc='GPU fsai*' > "$L/test-fsai.log" 2>&1
say "test_gpu 'GPU fsai*': exit $? $(grep -E 'test cases' "$L/test-fsai.log")"
grep -B4 -A12 "ERROR" "$L/test-fsai.log" | head -60
timeout 180 "$T" -tc='GPU set-up*' > "$L/test-setup.log" 2>&1
say "test_gpu 'GPU set-up*': exit $? $(grep -E 'test cases' "$L/test-setup.log")"
grep -B4 -A12 "ERROR" "$L/test-setup.log" | head -40
CGS_GPU_TESTS_LIGHT=1 timeout 200 compute-sanitizer --tool memcheck --error-exitcode 86 \
  "$T" -tc='GPU fsai*' > "$L/memcheck.log" 2>&1
say "compute-sanitizer memcheck 'GPU fsai*': exit $? $(grep -E 'ERROR SUMMARY' "$L/memcheck.log" | tail -1)"

# The set-up table: one line per matrix and preconditioner, seconds.
row() {  # matrix precond
  local f=$L/$(echo "$1-$2" | tr ':/' '__')
  for ((i = 0; i < RUNS; i++)); do
    rm -f "$f.json"
    timeout 90 "$C" --matrix "$1" --device gpu --precond "$2" --max-iters 5 \
      --tol 1e-30 --report "$f.json" > "$f.txt" 2>&1
    [[ -s $f.json ]] && tr -d '\n' < "$f.json" && echo  # one report a line
  done > "$f.runs"
  python3 - "$f.runs" "$1" "$2" <<'PY' | tee -a "$S"
import json, sys
path, matrix, precond = sys.argv[1:]
runs = [json.loads(l) for l in open(path) if l.strip()]
if not runs:
    print(f"{matrix:20} {precond:7} failed (see the logs)"); sys.exit()
def setup(j):
    t = j["times"]
    return sum(t.get(k) or 0 for k in ("reorder_s", "build_format_s", "preconditioner_s", "upload_s"))
j = sorted(runs, key=setup)[len(runs) // 2]
t, p = j["times"], j["preconditioner"].get("phases_s", {})
facts = j["preconditioner"].get("facts", {})
table = {r["phase"]: r["seconds"] for r in j["preconditioner"].get("tables", {}).get("fsai set-up", [])}
fsai = " / ".join(f"{table[k]:.3f}" for k in ("pattern", "rows", "transpose")) if table else "-"
print(f"{matrix:20} {precond:7} {setup(j):7.3f} {t['reorder_s']:7.3f} {t['build_format_s']:7.3f} "
      f"{t['preconditioner_s']:7.3f} {t['upload_s']:7.3f}   {p.get('analyze', 0):7.3f} "
      f"{p.get('values', 0):7.3f} {p.get('upload', 0):7.3f}   {fsai:23}  {facts.get('set-up on', '')}")
PY
}
say ""
say "set-up, s (median of $RUNS; setup = reorder + format + precond + upload; precond = analyze + values + program upload;"
say "fsai p/r/t = its pattern / rows / transpose, inside analyze + values)"
say "$(printf '%-20s %-7s %7s %7s %7s %7s %7s   %7s %7s %7s   %-23s  %s' matrix precond setup reorder format precond upload analyze values p.upl 'fsai p / r / t' 'set-up on')"
for m in gen:poisson2d:1000 gen:poisson2d:3000; do
  for p in jacobi fsai:2; do
    [[ $((SECONDS - t0)) -gt 300 ]] && { say "$m $p: skipped (time)"; continue; }
    row "$m" "$p"
  done
done

# Iterations: the device set-up against the host's (poisson2d:1000, above the device threshold),
# and the EPANET systems of DATA (below it: the host set-up, both sides).
its() {  # file -> "iterations status"
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); r=j["result"]; print(r["iterations"], r["status"])' "$1" 2>/dev/null || echo "failed"
}
solve_pair() {  # label, matrix arguments...
  local label=$1; shift
  local f=$L/solve-$(echo "$label" | tr ':/ ' '___')
  timeout 120 "$C" "$@" --device gpu --precond fsai:2 --tol 1e-8 --report "$f-gpu.json" > "$f-gpu.txt" 2>&1
  timeout 120 "$C" "$@" --device omp --precond fsai:2 --tol 1e-8 --report "$f-cpu.json" > "$f-cpu.txt" 2>&1
  say "$(printf '%-28s GPU %-22s CPU %s' "$label" "$(its "$f-gpu.json")" "$(its "$f-cpu.json")")"
}
say ""
say "fsai:2 solves, tol 1e-8: iterations (GPU with its set-up / CPU omp)"
[[ $((SECONDS - t0)) -lt 360 ]] && solve_pair poisson2d:1000 --matrix gen:poisson2d:1000
n=0
for mtx in "$DATA"/*.mtx; do
  [[ -f $mtx && $n -lt 5 && $((SECONDS - t0)) -lt 400 ]] || continue
  [[ $mtx == *_b.mtx || $mtx == *_x.mtx ]] && continue  # right-hand sides and solutions
  solve_pair "$(basename "$mtx" .mtx)" --matrix "$mtx"
  n=$((n + 1))
done
say "total $((SECONDS - t0)) s"
tar czf "$OUT/fsaisetup-logs.tgz" -C "$L" . 2>/dev/null
echo "===== SUMMARY ====="
cat "$S"
