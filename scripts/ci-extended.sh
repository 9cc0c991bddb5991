#!/usr/bin/env bash
# The longer hardening checks CI runs on request (CGSOLVE_CI_EXTENDED=1 .ci/run); every run has
# the short ones (scripts/ci-hardening.sh). These build once more with clang and sanitizers and
# take most of an hour on 2 cores.
#
#   scripts/ci-extended.sh [fuzz seconds per target, default 30]
#
# 1. scripts/sanitize.sh, the whole CPU suite (ASan + UBSan, build-sanitize/);
# 2. scripts/fuzz.sh: every libFuzzer target replays its past findings, then fuzzes for the
#    given seconds (build-fuzz/).
# Both run, whatever the first gives; exits non-zero when either failed.
set -uo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-30}"
export CXX="${CXX:-clang++}"  # libFuzzer needs clang; the sanitizer build takes it too
# CMake takes CMAKE_CXX_COMPILER_LAUNCHER from the environment: ccache when there is one.
command -v ccache >/dev/null && export CMAKE_CXX_COMPILER_LAUNCHER="${CMAKE_CXX_COMPILER_LAUNCHER:-ccache}"

status=0
start=$SECONDS
echo "== ci-extended: sanitizers (the whole suite)"
scripts/sanitize.sh || status=1
echo "== ci-extended: sanitizers took $((SECONDS - start)) s"
start=$SECONDS
echo "== ci-extended: fuzzing, ${seconds} s per target"
scripts/fuzz.sh "$seconds" || status=1
echo "== ci-extended: fuzzing took $((SECONDS - start)) s"
exit $status
