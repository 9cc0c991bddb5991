#!/usr/bin/env bash
# Issue 21 item 3 on one GPU (H100), in one call: build (unless SKIP_BUILD=1), the GPU set-up
# tests (tests/gpu/test_gpu_precond_setup.cpp, and the preconditioner tests beside them),
# compute-sanitizer memcheck over the set-up tests, and the set-up table: jacobi, cheb:8, fsai:2,
# ic0, ic0:colour on gen:poisson2d:1000 and :3000 with --device gpu and a few iterations, each
# phase of the set-up from the JSON report (median of RUNS by total set-up), with A's upload
# rate and whether cheb read the backend's device A in place (§10g). Logs under $OUT; a short
# summary last. < 5 min on a 16-core H100 host.
# Usage: [SKIP_BUILD=1] [BUILD=build-gpu] [RUNS=3] OUT=dir scripts/precond-setup-gpu-check.sh
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/cuda/bin:$PATH
B=${BUILD:-build-gpu}
OUT=${OUT:-/tmp/precsetup-out}
RUNS=${RUNS:-3}
L=$OUT/precsetup-logs
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
timeout 150 "$T" -tc='GPU set-up*' > "$L/test-setup.log" 2>&1
say "test_gpu 'GPU set-up*': exit $? $(grep -E 'test cases' "$L/test-setup.log")"
grep -B4 -A12 "ERROR" "$L/test-setup.log" | head -40
timeout 120 "$T" -tc='GPU preconditioners*' > "$L/test-precond.log" 2>&1
say "test_gpu 'GPU preconditioners*': exit $? $(grep -E 'test cases' "$L/test-precond.log")"
grep -B4 -A12 "ERROR" "$L/test-precond.log" | head -40
CGS_GPU_TESTS_LIGHT=1 timeout 150 compute-sanitizer --tool memcheck --error-exitcode 86 \
  "$T" -tc='GPU set-up*' > "$L/memcheck.log" 2>&1
say "compute-sanitizer memcheck 'GPU set-up*' (light: no solves): exit $? $(grep -E 'ERROR SUMMARY' "$L/memcheck.log" | tail -1)"

# The set-up table: one line per matrix and preconditioner, seconds.
row() {  # matrix precond
  local f=$L/$(echo "$1-$2" | tr ':/' '__')
  for ((i = 0; i < RUNS; i++)); do
    rm -f "$f.json"
    timeout 90 "$B/app/cgsolve" --matrix "$1" --device gpu --precond "$2" --max-iters 5 \
      --tol 1e-30 --report "$f.json" > "$f.txt" 2>&1
    [[ -s $f.json ]] && tr -d '\n' < "$f.json" && echo  # one report a line
  done > "$f.runs"
  python3 - "$f.runs" "$1" "$2" <<'PY' | tee -a "$S"
import json, sys
path, matrix, precond = sys.argv[1:]
runs = [json.loads(l) for l in open(path) if l.strip()]
if not runs:
    print(f"{matrix:20} {precond:11} failed (see the logs)"); sys.exit()
def setup(j):
    t = j["times"]
    return sum(t.get(k) or 0 for k in ("reorder_s", "build_format_s", "preconditioner_s", "upload_s"))
j = sorted(runs, key=setup)[len(runs) // 2]
t, p = j["times"], j["preconditioner"]["phases_s"]
facts = j["preconditioner"].get("facts", {})
where = facts.get("Lanczos on", "")
if facts.get("matrix", "").startswith("the SpMV backend"):
    where += ", A lent"  # the program reads the backend's device CSR (§10g)
# A's upload rate, GB/s: the CSR arrays (12 bytes an entry in double, 4 a row) over upload_s,
# which also holds the loop's vectors (small beside A).
m = j["matrix"]
rate = (12 * m["nnz"] + 4 * (m["rows"] + 1)) / 1e9 / max(t["upload_s"], 1e-9)
print(f"{matrix:20} {precond:11} {setup(j):7.3f} {t['reorder_s']:7.3f} {t['build_format_s']:7.3f} "
      f"{t['preconditioner_s']:7.3f} {t['upload_s']:7.3f}   {p.get('analyze', 0):7.3f} "
      f"{p.get('values', 0):7.3f} {p.get('upload', 0):7.3f} {rate:6.1f}  {j['plan']['loop']} {where}")
PY
}
say ""
say "set-up, s (median of $RUNS; setup = reorder + format + precond + upload; precond = analyze + values + program upload):"
say "(A GB/s: A's CSR bytes over its upload; 'A lent': cheb's program and Lanczos read the backend's device CSR, §10g)"
say "$(printf '%-20s %-11s %7s %7s %7s %7s %7s   %7s %7s %7s %6s  %s' matrix precond setup reorder format precond upload analyze values p.upl 'A GB/s' loop)"
for m in gen:poisson2d:1000 gen:poisson2d:3000; do
  for p in jacobi cheb:8 fsai:2 ic0 ic0:colour; do
    [[ $((SECONDS - t0)) -gt 270 ]] && { say "$m $p: skipped (time)"; continue; }
    row "$m" "$p"
  done
done
say "total $((SECONDS - t0)) s"
tar czf "$OUT/precsetup-logs.tgz" -C "$L" . 2>/dev/null
echo "===== SUMMARY ====="
cat "$S"
