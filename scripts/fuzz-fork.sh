#!/usr/bin/env bash
# The libFuzzer targets in fork mode on every core of a bigger machine (the 16-core GPU host),
# from binaries built here by scripts/fuzz.sh (clang, ASan + UBSan) and copied into .fuzz-bin/
# with the shared libraries that host lacks (libomp.so.5, libmetis.so.5), debug info stripped:
#   for t in fuzz_eps fuzz_inp ...; do objcopy --strip-debug build-fuzz/tests/fuzz/$t .fuzz-bin/$t; done
#   cp -L /usr/lib/llvm-14/lib/libomp.so.5 /lib/x86_64-linux-gnu/libmetis.so.5 .fuzz-bin/
#   cp -r build-fuzz/corpus/fuzz_eps .fuzz-bin/corpus/     # optional: a working corpus to start from
# then, there (the device tool: carry .fuzz-bin):
#   OUT=dir scripts/fuzz-fork.sh "fuzz_eps:70 fuzz_inp:40"     # target:seconds ...
# Each target first replays its past findings, then fuzzes with one job per core; findings go to
# $OUT/findings/<target>/ and the fork parent's last "#N" line (executions in all) is printed.
set -uo pipefail
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=$PWD/.fuzz-bin:${LD_LIBRARY_PATH:-}
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
jobs=$(nproc)
for spec in $1; do
  t=${spec%%:*} secs=${spec##*:}
  seeds=$t; [ $t = fuzz_eps ] && seeds=fuzz_inp
  corpus=/tmp/corpus/$t; mkdir -p $corpus "$OUT/findings/$t"
  [ -d .fuzz-bin/corpus/$t ] && cp -r .fuzz-bin/corpus/$t/. $corpus/
  dict=(); [ -f tests/fuzz/dict/$seeds.dict ] && dict=(-dict=tests/fuzz/dict/$seeds.dict)
  regs=(tests/fuzz/regressions/$t/*); [ -e "${regs[0]}" ] && { .fuzz-bin/$t -timeout=10 "${regs[@]}" > "$OUT/$t.replay.log" 2>&1; echo "$t: replay of ${#regs[@]} past finding(s): exit $?"; }
  timeout $((secs + 60)) .fuzz-bin/$t -fork=$jobs -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512 \
    -max_total_time=$secs -max_len=16384 "${dict[@]}" -artifact_prefix="$OUT/findings/$t/" \
    $corpus tests/fuzz/corpus/$seeds > "$OUT/$t.log" 2>&1
  rc=$?
  echo "$t: exit $rc, $jobs jobs, ${secs} s: $(grep -E '^#[0-9]+' "$OUT/$t.log" | tail -1 | cut -c1-160)"
  ls "$OUT/findings/$t" | head -3
done
