#!/usr/bin/env bash
# CI's hardening step, run by .ci/run after the test suite (CGSOLVE_CI_HARDENING=0 skips it):
# one clang build with AddressSanitizer + UndefinedBehaviorSanitizer (build-fuzz/, the fuzz
# build, which is sanitized) of the five libFuzzer targets, cgsolve, netsolve and two test
# executables, then
#   1. the sanitizer subset of the suite: every `formats:` and `app:` test (the Matrix Market
#      reader, the fault injection of tests/app/test_faults.cpp, both programs' command lines,
#      the fuzz findings' replays) under ASan + UBSan;
#   2. the fuzz smoke: every fuzz target replays its past findings, then fuzzes for N seconds.
# The rest of the suite under the sanitizers (solver, spmv, network: their large solves take
# most of an hour on 2 cores) is scripts/sanitize.sh's, run by hand or CGSOLVE_CI_EXTENDED=1.
#
#   scripts/ci-hardening.sh [fuzz seconds per target, default 10]
#
# Needs clang with libFuzzer and OpenMP (Debian: clang libclang-rt-14-dev libomp-14-dev;
# installed here when missing). Exits non-zero when either part failed.
set -uo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-10}"
export CXX="${CXX:-clang++}"
command -v ccache >/dev/null && export CMAKE_CXX_COMPILER_LAUNCHER="${CMAKE_CXX_COMPILER_LAUNCHER:-ccache}"

install_clang() {
  local packages=(clang libclang-rt-dev libomp-dev) missing=() sudo=""
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  [[ $(id -u) -ne 0 ]] && sudo="sudo"
  echo "ci-hardening: installing ${missing[*]}"
  $sudo apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}
install_clang || { echo "ci-hardening: could not install clang, libFuzzer and OpenMP"; exit 1; }

start=$SECONDS
mkdir -p build-fuzz
# -O1 with line tables only: about half the compile time of -O2 -g, the same reports with file
# and line. scripts/fuzz.sh reconfigures this tree without naming the flags, so they stay.
cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCGSOLVE_WITH_CUDA=OFF \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="${CGSOLVE_CI_HARDENING_FLAGS:--O1 -gline-tables-only -DNDEBUG}" \
  -DCGSOLVE_FUZZ=ON -DCGSOLVE_SANITIZE=address,undefined >build-fuzz/configure.log 2>&1 ||
  { cat build-fuzz/configure.log; exit 1; }
fuzz_targets=(fuzz_matrix_market fuzz_inp fuzz_precond_spec fuzz_cli_options fuzz_eps)
cmake --build build-fuzz -j"$(nproc)" --target "${fuzz_targets[@]}" cgsolve netsolve \
  test_formats test_app || exit 1
echo "== ci-hardening: sanitized build took $((SECONDS - start)) s"

status=0
start=$SECONDS
(
  export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}"
  export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
  cd build-fuzz && ctest --output-on-failure -j"$(nproc)" --timeout 1800 -R '^(formats|app):'
) || status=1
echo "== ci-hardening: sanitized formats and app tests took $((SECONDS - start)) s"

start=$SECONDS
scripts/fuzz.sh "$seconds" "${fuzz_targets[@]}" || status=1
echo "== ci-hardening: fuzz smoke (${seconds} s per target) took $((SECONDS - start)) s"
exit $status
