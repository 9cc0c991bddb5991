#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz) with clang, ASan and UBSan into build-fuzz/ and runs
# each for N seconds (default 30):
#
#   scripts/fuzz.sh [seconds per target] [target...]   # default: every fuzz_* target
#
# Each target first replays its past findings (tests/fuzz/regressions/<target>), then fuzzes from
# its seeds (tests/fuzz/corpus/<target>) in a working corpus under build-fuzz/corpus/, so the
# repository's seeds stay small. A crash, sanitizer report, leak, input slower than 10 s or
# allocation over 512 MB is written to tests/fuzz/findings/<target>/ (not committed: once fixed,
# the reproducer moves to tests/fuzz/regressions/<target>/, which the ordinary tests replay).
# Exits non-zero when any target found something.
set -uo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-30}"
shift || true
targets=("$@")
((${#targets[@]})) || targets=(fuzz_matrix_market fuzz_inp fuzz_precond_spec fuzz_cli_options fuzz_eps)
# The seeds and dictionary of a target, by default its own; fuzz_eps starts from the networks.
seeds_of() { [[ "$1" == fuzz_eps ]] && echo fuzz_inp || echo "$1"; }

mkdir -p build-fuzz
CXX="${CXX:-clang++}" cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCGSOLVE_WITH_CUDA=OFF -DCGSOLVE_FUZZ=ON -DCGSOLVE_SANITIZE=address,undefined \
  >build-fuzz/configure.log || { cat build-fuzz/configure.log; exit 1; }
cmake --build build-fuzz -j"$(nproc)" --target "${targets[@]}" || exit 1

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
failed=()
for target in "${targets[@]}"; do
  exe="build-fuzz/tests/fuzz/$target"
  findings="tests/fuzz/findings/$target"
  corpus="build-fuzz/corpus/$target"
  mkdir -p "$findings" "$corpus"
  flags=(-timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512 -artifact_prefix="$findings/")
  seeds="$(seeds_of "$target")"
  [[ -f "tests/fuzz/dict/$seeds.dict" ]] && flags+=(-dict="tests/fuzz/dict/$seeds.dict")

  regressions=(tests/fuzz/regressions/"$target"/*)
  if [[ -e "${regressions[0]}" ]]; then
    echo "== $target: replaying ${#regressions[@]} past finding(s)"
    "$exe" "${flags[@]}" "${regressions[@]}" >"build-fuzz/$target.replay.log" 2>&1 ||
      { cat "build-fuzz/$target.replay.log"; failed+=("$target (a past finding)"); continue; }
  fi

  echo "== $target: fuzzing for ${seconds} s"
  # -max_len: room to grow past the largest seed (the cut networks are ~7 kB).
  if "$exe" "${flags[@]}" -max_total_time="$seconds" -max_len=16384 -print_final_stats=1 \
      ${FUZZ_FLAGS:-} "$corpus" "tests/fuzz/corpus/$seeds" >"build-fuzz/$target.log" 2>&1; then
    grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb" "build-fuzz/$target.log" |
      sed "s/^/   /"
  else
    tail -n 40 "build-fuzz/$target.log"
    failed+=("$target")
  fi
done
rmdir tests/fuzz/findings/* tests/fuzz/findings 2>/dev/null || true

if ((${#failed[@]})); then
  echo "fuzz: findings in ${failed[*]} (tests/fuzz/findings/, logs in build-fuzz/)" >&2
  exit 1
fi
echo "fuzz: clean"
