# Issue 22 item 2 on one H100: build, the AMG GPU tests (+ compute-sanitizer; 'GPU AMG*' includes
# the device Lanczos against the host's), cgsolve amg vs
# jacobi, and setupbench's phase times fresh against set_values, GPU set-up against the host's.
# Run from the repository root (BUILD: build dir, SKIP_BUILD=1: already built); logs under $OUT (amg2-logs.tgz), a summary last. < 8 min.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
OUT=${OUT:-/tmp/amg2-out}; mkdir -p "$OUT"
B=${BUILD:-build-gpu}; L=$B/logs; mkdir -p $L
S=$L/summary.txt; : > $S
trap 'tar czf "$OUT/amg2-logs.tgz" -C "$L" . 2>/dev/null; cp $S "$OUT/summary.txt" 2>/dev/null' EXIT
say() { echo "$*" | tee -a $S; }
t0=$SECONDS
[ -n "${SKIP_BUILD:-}" ] || cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DCGSOLVE_WITH_MPI=OFF -DCGSOLVE_WITH_NCCL=OFF > $L/cfg.log 2>&1
[ -n "${SKIP_BUILD:-}" ] || cmake --build $B -j16 --target cgsolve test_gpu setupbench > $L/build.log 2>&1 || { grep -B2 -A10 -E "error" $L/build.log | head -40; }
say "build $((SECONDS-t0)) s"
T=$B/tests/test_gpu
timeout 150 $T -tc='GPU AMG*' > $L/amg-tests.log 2>&1; say "test_gpu 'GPU AMG*': exit $? $(grep -E 'test cases' $L/amg-tests.log)"
grep -B4 -A10 "ERROR" $L/amg-tests.log | head -30
timeout 100 $T -tc='GPU preconditioners*' > $L/precond.log 2>&1; say "test_gpu 'GPU preconditioners*': exit $? $(grep -E 'test cases' $L/precond.log)"
timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 $T -tc='GPU AMG: the GPU set-up*,GPU AMG: set_values*,GPU AMG: the device*' > $L/memcheck.log 2>&1; say "memcheck (AMG set-up, set_values, device Lanczos): exit $? $(grep -E 'ERROR SUMMARY' $L/memcheck.log | tail -1)"
[ $((SECONDS-t0)) -lt 300 ] && timeout 60 compute-sanitizer --tool racecheck --kernel-name-exclude kns=cusparse --error-exitcode 9 $T -tc='GPU AMG: set_values*,GPU AMG: the device*' > $L/racecheck.log 2>&1; say "racecheck (AMG set_values + apply, device Lanczos; cuSPARSE's own kernels excluded: its SpGEMM-reuse kernel reports intra-library hazards): exit $? $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' $L/racecheck.log | tail -1)"
run() { local f=$L/$(echo $1-$2 | tr ':/' '__').txt; timeout 60 $B/app/cgsolve --matrix $1 --device gpu --precond $2 --tol 1e-8 --report $L/r.json > $f 2>&1; python3 -c "
import json;j=json.load(open('$L/r.json'));t=j['times'];r=j['result']
setup=sum(t.get(k,0) or 0 for k in ('reorder_s','build_format_s','upload_s','preconditioner_s','inspect_s','thread_start_s'))
print('%-20s %-8s its %5d  setup %.3f s (precond %.3f)  solve %.3f s  tts %.3f s  loop %s' % ('$1','$2',r['iterations'],setup,t.get('preconditioner_s',0) or 0,t['solve_s'],setup+t['solve_s'],j['plan']['loop']))" 2>/dev/null | tee -a $S || { say "$1 $2 failed"; tail -3 $f; }; }
run gen:poisson2d:500 amg; run gen:poisson2d:500 jacobi; run gen:poisson2d:3000 amg; run gen:poisson2d:3000 jacobi; run gen:poisson3d:200 amg; run gen:poisson3d:200 jacobi
run gen:poisson3d:200 amg:theta_decay=1  # the single threshold of before BENCHMARKS 20c, same run
for m in poisson2d_3000 poisson3d_200; do say "--- $m amg (GPU set-up) levels and phases:"; grep -E "^precond|^  level|^  [0-9] |^  phase|^  [a-z].*  [0-9.e+-]+$" $L/gen_${m}-amg.txt | head -24 | tee -a $S >/dev/null; done
say "--- setupbench (fresh analyze vs set_values, medians of 3):"
timeout 100 $B/bench/setupbench --device gpu --runs 3 --phases gen:poisson2d:3000 > $L/setupbench-gpu.log 2>&1; say "gpu, poisson2d:3000, 3 runs: exit $?"; cat $L/setupbench-gpu.log >> $S
[ $((SECONDS-t0)) -lt 400 ] && { timeout 60 $B/bench/setupbench --device gpu --runs 1 --phases gen:poisson3d:200 > $L/setupbench-gpu3d.log 2>&1; say "gpu, poisson3d:200, 1 run: exit $?"; cat $L/setupbench-gpu3d.log >> $S; }
[ $((SECONDS-t0)) -lt 420 ] && { timeout 50 $B/bench/setupbench --device omp --runs 1 --phases gen:poisson2d:3000 > $L/setupbench-omp.log 2>&1; say "host set-up (16 cores), poisson2d:3000, 1 run: exit $?"; cat $L/setupbench-omp.log >> $S; }
say "total $((SECONDS-t0)) s"
echo "===== SUMMARY ====="; cat $S
