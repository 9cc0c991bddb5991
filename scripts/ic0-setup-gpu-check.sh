#!/usr/bin/env bash
# Issue 21 item 3, ic0's set-up on one GPU in one call (branches ic0set, BENCHMARKS §10k, and
# ic0dev, §10n: the set-up on the device): build (unless SKIP_BUILD=1), the GPU tests that touch
# ic0 (tests/gpu/test_gpu_ic0_setup.cpp: the device set-up's factor and schedules against the
# host's, the shift, the fallback for a pattern that is not symmetric, the apply against the host
# program's, set_values against a fresh set-up, CG against the CPU's iterations; the cluster
# loop's ic0 tests), then on gen:poisson2d:3000 with --device gpu for ic0, fsai:2 and jacobi: the
# set-up (median of RUNS runs of 5 iterations, every phase from the JSON report, ic0's own phases
# from its "ic0 set-up" table) and one solve to --tol 1e-8 (iterations, solve seconds;
# ic0's level-scheduled solve is stopped at SOLVE_LIMIT seconds), ic0's host set-up on the same
# GPU run for comparison (CGSOLVE_IC0_DEVICE_ROWS past the rows), and ic0's iterations on the
# EPANET systems of DATA (RCM kept there, host set-up: small), and last compute-sanitizer memcheck
# over the `GPU ic0*` tests and racecheck on the cooperative kernels (small systems only). Logs
# under $OUT; a summary last. About 4-5 min on a 16-core H100 host (timeouts and time marks: at
# most ~7 min).
# Usage: [SKIP_BUILD=1] [BUILD=build-gpu] [RUNS=3] [SOLVE_LIMIT=30] OUT=dir \
#        scripts/ic0-setup-gpu-check.sh [DATA (default .gpu-data)]
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/cuda/bin:$PATH
B=${BUILD:-build-gpu}
OUT=${OUT:-/tmp/ic0setup-out}
RUNS=${RUNS:-3}
SOLVE_LIMIT=${SOLVE_LIMIT:-30}
DATA=${1:-.gpu-data}
L=$OUT/ic0setup-logs
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
t0=$SECONDS  # the time marks below count from here
T=$B/tests/test_gpu
C=$B/app/cgsolve
F='GPU ic0*,Cluster CG with ic0*,GPU set-up: cheb*'
timeout 150 "$T" -tc="$F" > "$L/test-ic0.log" 2>&1
say "test_gpu '$F': exit $? $(grep -E 'test cases' "$L/test-ic0.log")"
grep -B4 -A12 "ERROR" "$L/test-ic0.log" | head -60
M=gen:poisson2d:3000
# One line per preconditioner: the median set-up of RUNS runs of 5 iterations, then one solve.
row() {  # precond
  local f=$L/$(echo "$M-$1" | tr ':/' '__')
  for ((i = 0; i < RUNS; i++)); do
    rm -f "$f.json"
    timeout 90 "$C" --matrix "$M" --device gpu --precond "$1" --max-iters 5 --tol 1e-30 \
      --report "$f.json" > "$f.txt" 2>&1
    [[ -s $f.json ]] && tr -d '\n' < "$f.json" && echo  # one report a line
  done > "$f.runs"
  rm -f "$f-solve.json"
  timeout "$SOLVE_LIMIT" "$C" --matrix "$M" --device gpu --precond "$1" --tol 1e-8 \
    --report "$f-solve.json" > "$f-solve.txt" 2>&1
  if [[ ! -s $f-solve.json ]]; then  # stopped: 100 iterations instead, for the time per iteration
    timeout 60 "$C" --matrix "$M" --device gpu --precond "$1" --tol 1e-30 --max-iters 100 \
      --report "$f-100.json" > "$f-100.txt" 2>&1
  fi
  python3 - "$f.runs" "$f-solve.json" "$1" "$SOLVE_LIMIT" <<'PY' | tee -a "$S"
import json, sys
path, solve_path, precond, limit = sys.argv[1:]
runs = [json.loads(l) for l in open(path) if l.strip()]
if not runs:
    print(f"{precond:7} failed (see the logs)"); sys.exit()
def setup(j):
    t = j["times"]
    return sum(t.get(k) or 0 for k in ("reorder_s", "build_format_s", "preconditioner_s", "upload_s"))
j = sorted(runs, key=setup)[len(runs) // 2]
t, p = j["times"], j["preconditioner"].get("phases_s", {})
table = {r["phase"]: r["seconds"] for r in j["preconditioner"].get("tables", {}).get("ic0 set-up", [])}
where = j["preconditioner"].get("facts", {}).get("set-up on", "")
ic0 = " / ".join(f"{table.get(k, 0):.3f}" for k in ("order", "levels", "pattern", "factorisation", "program")) if table else "-"
try:
    s = json.load(open(solve_path)); r = s["result"]
    solve = f"{r['iterations']:6d} {s['times']['solve_s']:8.3f} {'ok' if r['converged'] else r['status']}"
except Exception:
    solve = f"{'-':>6} {'>' + limit:>8} (stopped at the limit"
    try:
        h = json.load(open(solve_path.replace("-solve.json", "-100.json")))
        solve += f"; 100 iterations {h['times']['solve_s']:.3f} s"
    except Exception:
        pass
    solve += ")"
print(f"{precond:7} {setup(j):7.3f} {t['reorder_s']:7.3f} {t['build_format_s']:7.3f} "
      f"{t['preconditioner_s']:7.3f} {t['upload_s']:7.3f}   {p.get('analyze', 0):7.3f} "
      f"{p.get('values', 0):7.3f} {p.get('upload', 0):7.3f}   {ic0:36} {solve}   {j['plan']['summary'].split(',')[1].strip()}"
      + (f"   set-up on {where}" if where else ""))
PY
}
say ""
say "$M on the GPU: set-up s (median of $RUNS; setup = reorder + format + precond + upload;"
say "precond = analyze + values + program upload; ic0 o/l/p/f/p = order / levels / pattern / factorisation / program);"
say "one solve to 1e-8: iterations, solve s"
say "$(printf '%-7s %7s %7s %7s %7s %7s   %7s %7s %7s   %-36s %6s %8s   %s' precond setup reorder format precond upload analyze values p.upl 'ic0 o / l / p / f / p' its solve_s order)"
for p in ic0 fsai:2 jacobi; do
  [[ $((SECONDS - t0)) -gt 240 ]] && { say "$p: skipped (time)"; continue; }
  row "$p"
done

# ic0's facts at this size, and its host set-up on the same run for comparison (the device set-up
# needs fewer rows than these: CGSOLVE_IC0_DEVICE_ROWS past them keeps it on the host).
ic0_facts() {  # json -> facts and phases
  python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["preconditioner"]
t = {r["phase"]: r["seconds"] for r in p["tables"]["ic0 set-up"]}
f = p["facts"]
print("set-up on %s; levels %s; factorisation %s; shift %s; phases o/l/p/f/p %s" % (
    f.get("set-up on", "?"), f.get("levels", "?"), f.get("factorisation", "?"),
    f.get("diagonal shift", "?"),
    " / ".join("%.3f" % t.get(k, 0) for k in ("order", "levels", "pattern", "factorisation", "program"))))
' "$1" 2>/dev/null || echo failed
}
if [[ $((SECONDS - t0)) -lt 270 ]]; then
  say ""
  f=$L/$(echo "$M-ic0" | tr ':/' '__')
  [[ -s $f.json ]] && say "ic0, default: $(ic0_facts "$f.json")"
  f=$L/ic0-host-setup
  CGSOLVE_IC0_DEVICE_ROWS=2000000000 timeout 60 "$C" --matrix "$M" --device gpu --precond ic0 \
    --max-iters 5 --tol 1e-30 --report "$f.json" > "$f.txt" 2>&1
  say "ic0, host set-up forced: $(ic0_facts "$f.json")"
  python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["times"]; print("  its set-up (reorder + format + precond + upload): %.3f s, precond %.3f s" % (sum(t.get(k) or 0 for k in ("reorder_s","build_format_s","preconditioner_s","upload_s")), t["preconditioner_s"]))' "$f.json" 2>/dev/null | tee -a "$S"
fi

# ic0 on the EPANET systems: RCM kept (their rows are not wavefronts), iterations GPU / CPU.
its() {  # file -> "iterations status rcm"
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); r=j["result"]; print(r["iterations"], r["status"], "rcm" if j["plan"]["rcm"] else "file order")' "$1" 2>/dev/null || echo "failed"
}
say ""
say "ic0 solves, tol 1e-10: iterations (GPU / CPU omp team)"
n=0
for mtx in "$DATA"/*.mtx; do
  [[ -f $mtx && $n -lt 5 && $((SECONDS - t0)) -lt 240 ]] || continue
  [[ $mtx == *_b.mtx || $mtx == *_x.mtx ]] && continue  # right-hand sides and solutions
  f=$L/solve-$(basename "$mtx" .mtx)
  rhs=(); [[ -f ${mtx%.mtx}_b.mtx ]] && rhs=(--rhs "${mtx%.mtx}_b.mtx")
  timeout 30 "$C" --matrix "$mtx" "${rhs[@]}" --device gpu --precond ic0 --tol 1e-10 --report "$f-gpu.json" > "$f-gpu.txt" 2>&1
  timeout 30 "$C" --matrix "$mtx" "${rhs[@]}" --device omp --cpu-loop fused-team --precond ic0 --tol 1e-10 --report "$f-cpu.json" > "$f-cpu.txt" 2>&1
  say "$(printf '%-34s GPU %-28s CPU %s' "$(basename "$mtx" .mtx)" "$(its "$f-gpu.json")" "$(its "$f-cpu.json")")"
  n=$((n + 1))
done

# The sanitizers last, so that a slow one cannot crowd out the timings above.
CGS_GPU_TESTS_LIGHT=1 timeout 120 compute-sanitizer --tool memcheck --error-exitcode 86 \
  "$T" -tc='GPU ic0*' > "$L/memcheck.log" 2>&1
say "compute-sanitizer memcheck 'GPU ic0*': exit $? $(grep -E 'ERROR SUMMARY' "$L/memcheck.log" | tail -1)"
R='GPU ic0 device set-up: the factor*,GPU ic0 device set-up: a breakdown*'
CGS_GPU_TESTS_LIGHT=1 timeout 60 compute-sanitizer --tool racecheck --error-exitcode 86 \
  "$T" -tc="$R" > "$L/racecheck.log" 2>&1
say "compute-sanitizer racecheck (the cooperative kernels, small systems): exit $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$L/racecheck.log" | tail -1)"
say "total $((SECONDS - t0)) s"
tar czf "$OUT/ic0setup-logs.tgz" -C "$L" . 2>/dev/null
echo "===== SUMMARY ====="
cat "$S"
