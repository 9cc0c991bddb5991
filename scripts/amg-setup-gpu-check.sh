# Issue 22, the AMG set-up kept on the device (BENCHMARKS 20e): the GPU AMG tests (P's and R's
# patterns by kernels, strength and MIS(2) aggregation by kernels, each against the host's
# algorithm bit for bit; the program reading the hierarchy's device arrays against the CPU's
# V-cycle; the hashed Lanczos start by a kernel; aggregation=blocks as on the CPU),
# compute-sanitizer memcheck on them, then cgsolve amg (greedy, host aggregation),
# amg:aggregation=blocks (the greedy by row blocks on all host cores, BENCHMARKS 20f),
# amg:aggregation=device and jacobi on poisson2d:3000 and poisson3d:200 with the set-up's phase
# table, and setupbench fresh against set_values. One H100 (16 cores), < 6 min.
# BENCHMARKS 20g: setupbench lends a CSR backend's device matrix to the set-up as the solver does
# (the finest level reads A there: no upload at set_values), medians of 5, side by side with
# --no-lend (the set-up's own upload, as before) in the same call, on poisson2d:3000 and
# poisson3d:200; the new lent-matrix tests under memcheck.
# BENCHMARKS 20h (branch amgspeed): the set-up's device path (Gershgorin bounds, D_F, the
# smoothers' scale by kernels; strength by a kernel for the greedy too; each R A P kept on the
# device for the next level, downloaded at set_values only for the coarsest), the new GPU tests
# and memcheck on them; cgsolve and setupbench for amg (Lanczos damping) and
# amg:spectrum=gershgorin side by side in one call, with their phase tables. The blocks and
# device aggregations run only with ALL=1 (BENCHMARKS 20f measured them). < 5 min on one H100.
# Run from the repository root: bash scripts/amg-setup-gpu-check.sh [data dir, default .gpu-data]
# (BUILD: build dir, default build-gpu; SKIP_BUILD=1: already built there); logs under $OUT
# (amg-setup-logs.tgz), a summary last. The data dir is not read (gen: matrices and data/).
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
DATA=${1:-.gpu-data}
OUT=${OUT:-/tmp/amg-setup-out}; mkdir -p "$OUT"
B=${BUILD:-build-gpu}; L=$B/logs-amg-setup; mkdir -p $L
S=$L/summary.txt; : > $S
trap 'tar czf "$OUT/amg-setup-logs.tgz" -C "$L" . 2>/dev/null; cp $S "$OUT/summary.txt" 2>/dev/null' EXIT
say() { echo "$*" | tee -a $S; }
t0=$SECONDS
if [ -z "${SKIP_BUILD:-}" ]; then
  cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DCGSOLVE_WITH_MPI=OFF -DCGSOLVE_WITH_NCCL=OFF > $L/cfg.log 2>&1
  cmake --build $B -j16 --target cgsolve test_gpu setupbench > $L/build.log 2>&1 || grep -B2 -A10 -E "error" $L/build.log | head -40
fi
say "build $((SECONDS-t0)) s (data dir $DATA not needed)"
T=$B/tests/test_gpu
timeout 180 $T -tc='GPU AMG*' > $L/amg-tests.log 2>&1; say "test_gpu 'GPU AMG*': exit $? $(grep -E 'test cases' $L/amg-tests.log)"
grep -B4 -A12 "ERROR" $L/amg-tests.log | head -40 | tee -a $S
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 $T -tc="GPU AMG: P's and R's*,GPU AMG: strength*,GPU AMG: the program*,GPU AMG: set_values*,GPU AMG: the device's Lanczos*,GPU AMG: on the backend's lent*,GPU AMG: a solver's set_values*,GPU AMG: the set-up's device path*,GPU AMG: a hierarchy without host copies*" > $L/memcheck.log 2>&1
say "memcheck (device patterns, strength + MIS(2), program on borrowed arrays, set_values, hashed Lanczos start, the device path of 20h): exit $? $(grep -E 'ERROR SUMMARY' $L/memcheck.log | tail -1)"
run() {
  local f=$L/$(echo $1-$2 | tr ':/=,' '____').txt
  timeout 60 $B/app/cgsolve --matrix $1 --device gpu --precond $2 --tol 1e-8 --report $L/r.json > $f 2>&1
  python3 -c "
import json;j=json.load(open('$L/r.json'));t=j['times'];r=j['result']
setup=sum(t.get(k,0) or 0 for k in ('reorder_s','build_format_s','upload_s','preconditioner_s','inspect_s','thread_start_s'))
print('%-20s %-24s its %5d  setup %.3f s (precond %.3f)  solve %.3f s  tts %.3f s' % ('$1','$2',r['iterations'],setup,t.get('preconditioner_s',0) or 0,t['solve_s'],setup+t['solve_s']))" 2>/dev/null | tee -a $S || { say "$1 $2 failed"; tail -3 $f | tee -a $S; }
}
VARIANTS="amg amg:spectrum=gershgorin"
[ -n "${ALL:-}" ] && VARIANTS="$VARIANTS amg:aggregation=blocks amg:aggregation=device"
for m in gen:poisson2d:3000 gen:poisson3d:200; do
  run $m jacobi
  for p in $VARIANTS; do run $m $p; done
done
for m in gen_poisson2d_3000 gen_poisson3d_200; do
  for p in $VARIANTS; do
    f=$L/$m-$(echo $p | tr ':/=,' '____').txt
    say "--- $(basename $f .txt): levels, phases"
    grep -E "^precond|^  level|^  [0-9] |^  phase|^  [a-z].*  [0-9.e+-]+$" $f | head -26 | tee -a $S > /dev/null
  done
done
# setupbench: fresh analyze against set_values (the ratio's target <= 0.40), medians.
bench() {  # matrix precond runs
  local f=$L/setupbench-$(echo $1-$2 | tr ':/=,' '____').log
  timeout 120 $B/bench/setupbench --device gpu --runs $3 --precond $2 --phases $1 > $f 2>&1
  say "--- setupbench gpu $1 $2 (medians of $3): exit $?"; cat $f >> $S
}
for p in $VARIANTS; do bench gen:poisson2d:3000 $p 5; done
if [ $((SECONDS-t0)) -lt 220 ]; then
  for p in amg amg:spectrum=gershgorin; do bench gen:poisson3d:200 $p 3; done
else
  say "setupbench poisson3d:200 skipped (time)"
fi
say "total $((SECONDS-t0)) s"
echo "===== SUMMARY ====="; cat $S
