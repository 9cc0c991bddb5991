#!/usr/bin/env bash
# Builds everything under AddressSanitizer + UndefinedBehaviorSanitizer into build-sanitize/ and
# runs the CPU test suite there (GPU tests skip without a GPU; CUDA is off in this build).
#
#   scripts/sanitize.sh                      # the whole suite
#   scripts/sanitize.sh 'formats|network|app' # a ctest -R filter (test names are "<area>: ...")
#
# CGSOLVE_SANITIZE overrides the sanitizer list (default address,undefined); CXX picks the
# compiler (clang++ and g++ both work). Any report fails the test that made it: UBSan halts
# instead of printing and going on.
#
# Measured 2026-11-25, clang 14, 2 cores: the 'formats|network|app' filter, 149 tests, passes in
# 510 s after a ~15 min build; the slowest test (network: BWSN/Wolf-Cordera with CG) takes 506 s.
set -euo pipefail
cd "$(dirname "$0")/.."
filter="${1:-}"
jobs="${JOBS:-$(nproc)}"

mkdir -p build-sanitize
cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCGSOLVE_WITH_CUDA=OFF \
  -DCGSOLVE_SANITIZE="${CGSOLVE_SANITIZE:-address,undefined}" >build-sanitize/configure.log ||
  { cat build-sanitize/configure.log; exit 1; }
# The tools and the test executables the filter can reach (all without one); the benchmarks
# are not part of the suite. test_distributed exists only where MPI was found.
targets=(cgsolve netsolve)
known_targets=$(cmake --build build-sanitize --target help 2>/dev/null)
for area in formats spmv solver gpu network app distributed; do
  if [[ -z "$filter" || "$area" =~ $filter || "$filter" == *"$area"* ]] &&
    grep -q "test_$area\b" <<<"$known_targets"; then
    targets+=("test_$area")
  fi
done
cmake --build build-sanitize -j"$jobs" --target "${targets[@]}"

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
# Third-party leaks only (Open MPI's), each explained in the file.
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$PWD/tests/sanitizer/lsan.supp:print_suppressions=0}"
# Open MPI keeps its components loaded, so their leaks are named (tests/sanitizer/lsan.supp).
export OMPI_MCA_mca_base_component_disable_dlclose=1
cd build-sanitize
# Sanitized code runs several times slower: a longer timeout than scripts/test.sh's.
ctest --output-on-failure -j"$jobs" --timeout 3600 ${filter:+-R "$filter"}
