#!/usr/bin/env bash
# GPU check for cgsolve, run on a machine with an NVIDIA GPU (H100/H200, CUDA 13):
#   build    configure and build everything with CUDA (sm_90) into $BUILD_DIR
#   test     the whole ctest suite (GPU tests included; a GPU test that skips is a failure here)
#   sanitize test_gpu under compute-sanitizer: memcheck, racecheck, synccheck
#   solve    cgsolve on data/ systems, every format, CPU against GPU (iterations, true residual);
#            netsolve on the GPU against EPANET's results for Net1 and Net3
#   bench    scripts/bench-gpu.sh on the same build: spmvbench and cgbench against cuSPARSE/cuBLAS
# and prints a summary table last. $OUT (default ./gpu-out) receives summary.txt,
# bench-summary.md and gpu-logs.tgz (every log and benchmark file); they are also left in
# $BUILD_DIR/logs.
#
# Usage: scripts/gpu-check.sh [phase ...]          (default: all phases, in the order above)
#        scripts/gpu-check.sh bundle DIR            copy the header-only dependencies (Eigen,
#            CLI11, doctest, nlohmann-json) and zlib from this machine into DIR, for a GPU machine
#            that lacks them; pass it there as CGS_DEPS=DIR (default: build-cuda/gpudeps if present)
# Env: OUT, BUILD_DIR (default build-gpu), JOBS (default nproc), CGS_DEPS, STEP_TIMEOUT (seconds
#      per sanitizer run, default 240), SANITIZE_TOOLS (default "memcheck racecheck synccheck").
set -u -o pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD

if [[ "${1:-}" == bundle ]]; then
  dir=${2:?usage: gpu-check.sh bundle DIR}
  mkdir -p "$dir"/usr/include "$dir"/usr/share/cmake "$dir"/usr/lib/cmake "$dir"/usr/lib
  cp -r /usr/include/eigen3 /usr/include/CLI /usr/include/doctest /usr/include/nlohmann \
    /usr/include/zlib.h /usr/include/zconf.h "$dir"/usr/include/
  cp -r /usr/share/eigen3 "$dir"/usr/share/
  cp -r /usr/share/cmake/CLI11 /usr/share/cmake/nlohmann_json "$dir"/usr/share/cmake/
  cp -r /usr/lib/cmake/doctest "$dir"/usr/lib/cmake/
  # Debian's doctest config names /usr outright; make it relative to where it lies.
  sed -i 's#set(_IMPORT_PREFIX "/usr")#get_filename_component(_IMPORT_PREFIX "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)#' \
    "$dir"/usr/lib/cmake/doctest/doctestTargets.cmake
  cp /usr/lib/x86_64-linux-gnu/libz.a "$dir"/usr/lib/
  du -sh "$dir"
  exit 0
fi

OUT=${OUT:-$ROOT/gpu-out}
BUILD_DIR=${BUILD_DIR:-$ROOT/build-gpu}
JOBS=${JOBS:-$(nproc)}
STEP_TIMEOUT=${STEP_TIMEOUT:-240}
CGS_DEPS=${CGS_DEPS:-$ROOT/build-cuda/gpudeps}
LOGS=$BUILD_DIR/logs
mkdir -p "$OUT" "$LOGS"
PHASES=("$@")
[[ ${#PHASES[@]} -eq 0 ]] && PHASES=(build test sanitize solve bench)

SUMMARY=()
FAILED=0
note() { SUMMARY+=("$(printf '%-28s | %-5s | %6ss | %s' "$1" "$2" "$3" "$4")"); [[ $2 == FAIL ]] && FAILED=1; return 0; }
now() { date +%s; }
wants() { local p; for p in "${PHASES[@]}"; do [[ $p == "$1" ]] && return 0; done; return 1; }

echo "== machine"
{
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.mem --format=csv || true
  nvcc --version | tail -2
  cmake --version | head -1
  command -v compute-sanitizer && compute-sanitizer --version | tail -1
} 2>&1 | tee "$LOGS/machine.txt"

# ---------------------------------------------------------------------------------------------
configure() {
  local extra=()
  command -v ninja >/dev/null && extra+=(-G Ninja)
  cmake -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    "${extra[@]}" "$@"
}

if wants build; then
  t0=$(now)
  echo "== build"
  {
    if ! configure; then
      echo "-- configure failed; retrying with the bundled dependencies in $CGS_DEPS"
      rm -rf "$BUILD_DIR"
      configure -DCMAKE_PREFIX_PATH="$CGS_DEPS/usr" -DZLIB_ROOT="$CGS_DEPS/usr"
    fi && cmake --build "$BUILD_DIR" -j "$JOBS"
  } > "$LOGS/build.log" 2>&1
  status=$?
  grep -E "CUDA backends|warning|error" "$LOGS/build.log" | head -40
  if [[ $status -eq 0 ]]; then note build PASS $(($(now) - t0)) "Release, sm_90"; else
    tail -40 "$LOGS/build.log"; note build FAIL $(($(now) - t0)) "see build.log"; fi
fi

TEST_GPU=$BUILD_DIR/tests/test_gpu

if wants test; then
  t0=$(now)
  echo "== ctest (whole suite)"
  # Eight tests at a time, two OpenMP threads each: no oversubscription of the 16 cores.
  OMP_NUM_THREADS=2 ctest --test-dir "$BUILD_DIR" -j 8 --timeout 900 --output-on-failure \
    > "$LOGS/ctest.log" 2>&1
  status=$?
  tail -15 "$LOGS/ctest.log"
  line=$(grep -E "tests passed|tests failed" "$LOGS/ctest.log" | tail -1)
  [[ $status -eq 0 ]] && note ctest PASS $(($(now) - t0)) "$line" || note ctest FAIL $(($(now) - t0)) "$line"

  t0=$(now)
  echo "== test_gpu"
  "$TEST_GPU" --duration=true > "$LOGS/test_gpu.log" 2>&1
  status=$?
  tail -4 "$LOGS/test_gpu.log"
  line=$(grep -E "test cases:" "$LOGS/test_gpu.log" | tail -1 | sed 's/\[doctest\] //')
  if grep -q "skipped: no GPU" "$LOGS/test_gpu.log"; then
    note test_gpu FAIL $(($(now) - t0)) "GPU tests skipped: $(grep -m1 'skipped: no GPU' "$LOGS/test_gpu.log")"
  elif [[ $status -eq 0 ]]; then note test_gpu PASS $(($(now) - t0)) "$line"; else
    note test_gpu FAIL $(($(now) - t0)) "$line"; fi
fi

if wants sanitize; then
  # A Debug build: every kernel launch is followed by its own error check (CGS_CHECK_LAUNCH).
  t0=$(now)
  echo "== debug build of test_gpu"
  DEBUG_DIR=$BUILD_DIR-debug
  { cmake -S "$ROOT" -B "$DEBUG_DIR" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CUDA_ARCHITECTURES=90 \
      $(command -v ninja >/dev/null && echo -G Ninja) \
      $(grep -q "^CMAKE_PREFIX_PATH" "$BUILD_DIR/CMakeCache.txt" 2>/dev/null &&
        echo "-DCMAKE_PREFIX_PATH=$CGS_DEPS/usr -DZLIB_ROOT=$CGS_DEPS/usr") &&
    cmake --build "$DEBUG_DIR" -j "$JOBS" --target test_gpu; } > "$LOGS/build-debug.log" 2>&1
  if [[ $? -eq 0 ]]; then note "debug build" PASS $(($(now) - t0)) "test_gpu, Debug"; else
    tail -30 "$LOGS/build-debug.log"; note "debug build" FAIL $(($(now) - t0)) "see build-debug.log"; fi
  # The out-of-memory test fails a cudaMalloc on purpose; the sanitizers would count it.
  # racecheck follows every shared-memory access and is by far the slowest: it runs the SpMV
  # test (every kernel, every boundary case but the 100,000-entry row) and the CG tests that
  # drive every reduction kernel, and skips cuSPARSE's own kernels (racecheck reports hazards
  # inside cusparse::csrmv_v3_kernel, library code we cannot change; memcheck and synccheck
  # still cover them).
  for tool in ${SANITIZE_TOOLS:-memcheck racecheck synccheck}; do
    t0=$(now)
    echo "== compute-sanitizer --tool $tool"
    light=1
    tool_args=()
    test_args=(--test-case-exclude='*larger than the device*')
    if [[ $tool == racecheck ]]; then
      light=2
      tool_args=(--kernel-name-exclude kns=cusparse)
      test_args=(--test-case='GPU SpMV: every kernel*,GPU CG: reading*,GPU CG: breakdown*,Fused GPU CG: converged_at*')
    fi
    CGS_GPU_TESTS_LIGHT=$light timeout "$STEP_TIMEOUT" compute-sanitizer --tool "$tool" \
      "${tool_args[@]}" --error-exitcode 86 "$DEBUG_DIR/tests/test_gpu" "${test_args[@]}" \
      > "$LOGS/sanitize-$tool.log" 2>&1
    status=$?
    tail -3 "$LOGS/sanitize-$tool.log"
    line=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$LOGS/sanitize-$tool.log" | tail -1 | sed 's/========= //')
    cases=$(grep -E "test cases:" "$LOGS/sanitize-$tool.log" | tail -1 | sed 's/\[doctest\] //')
    if [[ $status -eq 124 ]]; then note "sanitizer $tool" FAIL $(($(now) - t0)) "timed out after ${STEP_TIMEOUT}s"
    elif [[ $status -eq 0 ]]; then note "sanitizer $tool" PASS $(($(now) - t0)) "$line; $cases"
    else note "sanitizer $tool" FAIL $(($(now) - t0)) "exit $status: $line; $cases"; fi
  done
fi

if wants solve; then
  t0=$(now)
  echo "== cgsolve: CPU against GPU"
  CGSOLVE=$BUILD_DIR/app/cgsolve
  : > "$LOGS/solve.log"
  solve_ok=1
  run_one() {  # label, then cgsolve arguments; writes a JSON report
    local label=$1; shift
    "$CGSOLVE" "$@" --quiet --report "$LOGS/r.json" >> "$LOGS/solve.log" 2>&1
    local status=$?
    python3 - "$label" "$status" "$LOGS/r.json" >> "$LOGS/solve.tsv" <<'EOF'
import json, sys
label, status, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
try:
    j = json.load(open(path)); r = j["result"]; t = j["times"]; s = j["spmv"]
    # A field that was not measured is null: print "-", never 0.
    us = f"{s['median_s']*1e6:.1f}" if s["median_s"] is not None else "-"
    gf = f"{s['gflops']:.1f}" if s["gflops"] is not None else "-"
    print(f"{label}\t{status}\t{j['backend']['name']}\t{j['plan']['loop']}\t{r['iterations']}\t"
          f"{r['converged_at']}\t{r['true_relative_residual']:.2e}\t{t['solve_s']*1e3:.2f}\t"
          f"{us}\t{gf}\t{t['upload_s']*1e3:.1f}")
except Exception as e:
    print(f"{label}\t{status}\tno report ({e})")
EOF
    rm -f "$LOGS/r.json"
    return $status
  }
  printf 'run\texit\tbackend\tloop\titers\tconverged_at\ttrue_res\tsolve_ms\tspmv_median_us\tGFLOP/s\tupload_ms\n' > "$LOGS/solve.tsv"
  systems=("data/systems/Exnet_EXN_step3.mtx.gz --rhs data/systems/Exnet_EXN_step3_b.mtx.gz"
           "data/matrices/bcsstk13.mtx" "data/matrices/gr_900_900_crg.mtx"
           "data/matrices/lap2D_5pt_n100.mtx.gz" "data/matrices/nos6.mtx")
  for system in "${systems[@]}"; do
    [[ -f ${system%% *} ]] || continue
    name=$(basename "${system%% *}")
    for precision in double float; do
      tol=1e-10; [[ $precision == float ]] && tol=1e-5
      # bcsstk13 and nos6 are too ill-conditioned for float CG to mean anything.
      [[ $precision == float && ( $name == bcsstk13.mtx || $name == nos6.mtx ) ]] && continue
      for format in csr ell hll coo; do
        common="--matrix $system --format $format --precision $precision --tol $tol --precond jacobi --max-iters 20000"
        run_one "$name $format $precision cpu" $common --device cpu || true
        run_one "$name $format $precision gpu" $common --device gpu || true
        run_one "$name $format $precision gpu sorted" $common --device gpu --sort-rows || true
      done
    done
  done
  # Exit code 4 without a usable device: hide the GPU from the runtime.
  CUDA_VISIBLE_DEVICES= "$CGSOLVE" --matrix data/matrices/nos6.mtx --device gpu --quiet >> "$LOGS/solve.log" 2>&1
  no_gpu_status=$?
  python3 -c 'import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
widths = [max(len(r[i]) for r in rows if i < len(r)) for i in range(max(map(len, rows)))]
for r in rows: print("  ".join(c.ljust(w) for c, w in zip(r, widths)))' "$LOGS/solve.tsv" | tee "$LOGS/solve-table.txt"
  python3 - "$LOGS/solve.tsv" > "$LOGS/solve-compare.txt" <<'EOF'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])][1:]
by = {r[0]: r for r in rows if len(r) > 6}
bad = []
for label, r in by.items():
    if not label.endswith("cpu"):
        continue
    base = label[:-4]
    for g in (base + " gpu", base + " gpu sorted"):
        if g not in by:
            bad.append(f"{g}: missing"); continue
        gi, ci = int(by[g][4]), int(r[4])
        # Well-conditioned systems agree to an iteration or two; on ill-conditioned ones
        # (Exnet) rounding alone moves the count by a few percent, also between CPU formats.
        slack = max(2, ci // 10) if "double" in label else max(5, ci // 5)
        if by[g][1] != r[1] or abs(gi - ci) > slack:
            bad.append(f"{g}: exit {by[g][1]}, {gi} iterations vs CPU {ci}")
print("all GPU solves agree with the CPU" if not bad else "\n".join(bad))
EOF
  cat "$LOGS/solve-compare.txt"
  grep -q "all GPU solves agree" "$LOGS/solve-compare.txt" || solve_ok=0
  # netsolve on the GPU: EPANET's own time-0 results for Net1 and Net3 must come out.
  net_ok=1
  for net in Net1 Net3; do
    for format in csr ell; do
      "$BUILD_DIR/app/netsolve" --network "data/networks/$net.inp" --device gpu --format "$format" \
        --reference data/networks/reference > "$LOGS/netsolve-$net-$format.log" 2>&1 || net_ok=0
      grep -E "^vs EPANET|linear solver" "$LOGS/netsolve-$net-$format.log"
    done
  done
  note "netsolve on GPU vs EPANET" $([[ $net_ok -eq 1 ]] && echo PASS || echo FAIL) 0 \
    "Net1, Net3 x csr, ell (netsolve-*.log)"
  if [[ $solve_ok -eq 1 && $no_gpu_status -eq 4 ]]; then
    note "cgsolve CPU vs GPU" PASS $(($(now) - t0)) "$(($(wc -l < "$LOGS/solve.tsv") - 1)) runs; no-device exit 4"
  else
    note "cgsolve CPU vs GPU" FAIL $(($(now) - t0)) "see solve-compare.txt; no-device exit $no_gpu_status"
  fi
fi

if wants bench; then
  t0=$(now)
  echo "== benchmarks (scripts/bench-gpu.sh, same build)"
  # Its results (CSV, JSON, plots, summary.md) go into the logs, so they come back in
  # gpu-logs.tgz; summary.md is also copied to $OUT.
  BUILD_DIR=$BUILD_DIR OUT=$LOGS/bench CGS_DEPS=$CGS_DEPS scripts/bench-gpu.sh build spmv cg plots \
    > "$LOGS/bench.log" 2>&1
  status=$?
  tail -40 "$LOGS/bench.log"
  [[ $status -eq 0 ]] && note bench PASS $(($(now) - t0)) "bench/summary.md" ||
    note bench FAIL $(($(now) - t0)) "bench.log"
fi

echo
echo "== summary ($(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1))"
printf '%-28s | %-5s | %7s | %s\n' step result time note
printf '%s\n' "${SUMMARY[@]}" | tee "$LOGS/summary.txt"
cp "$LOGS/summary.txt" "$OUT/" 2>/dev/null
[[ -f $LOGS/bench/summary.md ]] && cp "$LOGS/bench/summary.md" "$OUT/bench-summary.md"
tar czf "$OUT/gpu-logs.tgz" -C "$LOGS" . 2>/dev/null
exit $FAILED
