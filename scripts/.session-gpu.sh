#!/usr/bin/env bash
# Session driver (untracked): PART = base | irregular | study | amg. Builds build-gpu once (MPI+NCCL).
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/cuda/bin:$PATH
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
NCCL_ROOT=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl
export LD_LIBRARY_PATH=$NCCL_ROOT/lib:${LD_LIBRARY_PATH:-}
B=build-gpu; mkdir -p "$OUT"
t0=$SECONDS
if [[ $1 != san* ]] && [ ! -f $B/CMakeCache.txt ]; then
  gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
  cmake -S . -B $B "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DNCCL_ROOT=$NCCL_ROOT > "$OUT/configure.log" 2>&1 || { tail -30 "$OUT/configure.log"; exit 1; }
fi
[[ $1 == san* ]] || cmake --build $B -j16 ${TARGETS:+--target $TARGETS} > "$OUT/build-$1.log" 2>&1 || { grep -B2 -A12 error "$OUT/build-$1.log" | head -60; exit 1; }
echo "build ($1): $((SECONDS-t0)) s; $(grep -E 'cgsolve: (MPI|NCCL|CUDA)' "$OUT/configure.log" 2>/dev/null | xargs)"
case $1 in
s15i)
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  timeout 200 $B/tests/test_gpu > "$OUT/test_gpu.log" 2>&1; echo "test_gpu (all): exit $? $(grep -E 'test cases' "$OUT/test_gpu.log")"
  grep -B2 -A6 "ERROR" $OUT/test_gpu.log | grep -E "values|name|precond|variant|ERROR|TEST CASE" | head -20
  echo "== trace two passes"; CGSOLVE_CLUSTER_PHASES=1 timeout 30 $B/app/cgsolve --matrix gen:poisson2d:122 --precond none --device gpu --gpu-loop cluster --tol 0 --max-iters 2000 2>&1 | grep -E "all phases|us per iteration" | head -3
  echo "== trace one reduction"; CGSOLVE_CLUSTER_REDUCTIONS=1 CGSOLVE_CLUSTER_PHASES=1 timeout 30 $B/app/cgsolve --matrix gen:poisson2d:122 --precond none --device gpu --gpu-loop cluster --tol 0 --max-iters 2000 2>&1 | grep -E "all phases|us per iteration" | head -3
  timeout 70 compute-sanitizer --tool racecheck --error-exitcode 9 $B/tests/test_gpu -tc='Cluster CG: small*' > $OUT/race.log 2>&1; echo "racecheck small: exit $? $(grep -E 'RACECHECK SUMMARY' $OUT/race.log | tail -1)"
  timeout 50 compute-sanitizer --tool synccheck --error-exitcode 9 $B/tests/test_gpu -tc='Cluster CG: small*' > $OUT/sync.log 2>&1; echo "synccheck small: exit $? $(grep 'ERROR SUMMARY' $OUT/sync.log | tail -1)"
  ;;
s15h)
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  timeout 300 $B/tests/test_gpu > "$OUT/test_gpu.log" 2>&1; echo "test_gpu (all): exit $? $(grep -E 'test cases' "$OUT/test_gpu.log")"
  grep -B2 -A6 "ERROR" $OUT/test_gpu.log | grep -E "values|name|precond|variant|ERROR|TEST CASE" | head -20
  for r in 1 2 3; do for p in amg jacobi; do
    timeout 60 $B/app/cgsolve --matrix gen:poisson2d:3000 --device gpu --precond $p --tol 1e-8 --report $OUT/r.json --quiet > /dev/null 2>&1
    python3 -c "
import json;d=json.load(open('$OUT/r.json'));t=d['times'];s=sum(t[k] for k in ('reorder_s','build_format_s','preconditioner_s','upload_s'))
print('poisson2d:3000 %-6s %d its %4d tts %.3f upload %.3f precond %.3f solve %.3f' % ('$p',$r,d['result']['iterations'], s+t['solve_s'], t['upload_s'], t['preconditioner_s'], t['solve_s']))"
  done; done
  timeout 60 $B/app/cgsolve --matrix data/matrices/bcsstk13.mtx --device gpu --precond amg --validate 2>&1 | grep -E "converged|validate|precond" | head -4
  ;;
s15g)
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; git log --oneline -1 | cut -c1-70
  tts() { python3 -c "
import json,sys;d=json.load(open('$OUT/r.json'));t=d['times'];s=sum(t[k] for k in ('reorder_s','build_format_s','preconditioner_s','upload_s'))
print('%-14s %-6s %d its %4d tts %.3f upload %.3f precond %.3f solve %.3f' % ('$1','$2',$3,d['result']['iterations'], s+t['solve_s'], t['upload_s'], t['preconditioner_s'], t['solve_s']))"; }
  for r in 1 2 3 4 5 6 7; do for m in poisson2d:3000 poisson3d:200; do for p in amg jacobi; do
    timeout 60 $B/app/cgsolve --matrix gen:$m --device gpu --precond $p --tol 1e-8 --report $OUT/r.json --quiet > /dev/null 2>&1; tts $m $p $r
  done; done; done > $OUT/tts.txt
  for m in poisson2d:3000 poisson3d:200; do for r in 1 2; do
    echo "== $m tally run $r"; CGSOLVE_DEVICE_TALLY=1 timeout 60 $B/app/cgsolve --matrix gen:$m --device gpu --precond amg --tol 1e-8 --quiet 2>&1 | grep -E "tally" | sed 's/device tally: //'
  done; done > $OUT/tally.txt
  timeout 80 $B/bench/setupbench --device gpu --runs 5 --phases gen:poisson2d:3000 gen:poisson3d:200 > $OUT/sb.txt 2>&1
  echo "== tally"; cat $OUT/tally.txt
  echo "== setupbench"; grep -E "^gen:|^  (strength|aggregation|galerkin|spectra|coarse|prolong|restrict|level)" $OUT/sb.txt | cut -c1-100
  sort $OUT/tts.txt
  python3 - $OUT/tts.txt <<'PY'
import sys, statistics as st, collections
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    f=l.split(); d[(f[0],f[1])].append((float(f[6]),float(f[10]),float(f[8]),float(f[12])))
for k in sorted(d):
    v=d[k]; print('%s %s: tts median %.3f precond median %.3f upload median %.3f solve %.3f (tts %s)' % (k[0],k[1], st.median(x[0] for x in v), st.median(x[1] for x in v), st.median(x[2] for x in v), st.median(x[3] for x in v), ' '.join('%.3f'%x[0] for x in v)))
for m in ('poisson2d:3000','poisson3d:200'):
    j=st.median(x[0] for x in d[(m,'jacobi')]); a=st.median(x[0] for x in d[(m,'amg')]); print('%s jacobi/amg %.2f amg/jacobi %.2f' % (m, j/a, a/j))
PY
  ;;
s15f)
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  timeout 300 $B/tests/test_gpu > "$OUT/test_gpu.log" 2>&1; echo "test_gpu (all): exit $? $(grep -E 'test cases' "$OUT/test_gpu.log")"
  grep -B2 -A6 "ERROR" $OUT/test_gpu.log | grep -E "values|name|precond|variant|ERROR|TEST CASE" | head -20
  timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/test_gpu -tc='GPU AMG*,GPU: upload buffers*,GPU SpMV: every*' > $OUT/mem.log 2>&1; echo "memcheck AMG+upload+spmv: exit $? $(grep 'ERROR SUMMARY' $OUT/mem.log | tail -1) $(grep -E 'test cases' $OUT/mem.log)"
  for r in 1 2 3 4 5 6; do for m in poisson2d:3000 poisson3d:200; do for p in amg jacobi; do
    CGSOLVE_DEVICE_TALLY=1 timeout 60 $B/app/cgsolve --matrix gen:$m --device gpu --precond $p --tol 1e-8 --report $OUT/r.json --quiet > /dev/null 2> $OUT/t.txt
    python3 -c "
import json;d=json.load(open('$OUT/r.json'));t=d['times'];s=sum(t[k] for k in ('reorder_s','build_format_s','preconditioner_s','upload_s'))
print('%-14s %-6s %d its %4d tts %.3f upload %.3f precond %.3f solve %.3f' % ('$m','$p',$r,d['result']['iterations'], s+t['solve_s'], t['upload_s'], t['preconditioner_s'], t['solve_s']), end=' | ')"
    grep -E "to host|free " $OUT/t.txt | awk '{printf "%s %s %s ms; ", $3, $4, $6}'; echo
  done; done; done > $OUT/tts.txt
  timeout 60 $B/bench/setupbench --device gpu --runs 5 --phases gen:poisson2d:3000 gen:poisson3d:200 > $OUT/sb.txt 2>&1
  echo "== setupbench"; grep -E "^gen:|^  (strength|aggregation|galerkin|spectra|coarse|prolong|restrict)" $OUT/sb.txt | cut -c1-100
  sort $OUT/tts.txt | cut -c1-150
  python3 - $OUT/tts.txt <<'PY'
import sys, statistics as st, collections
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    f=l.split(); d[(f[0],f[1])].append((float(f[6]),float(f[10]),float(f[8])))
for k in sorted(d):
    v=d[k]; print('%s %s: tts median %.3f precond median %.3f upload median %.3f (tts %s)' % (k[0],k[1], st.median(x[0] for x in v), st.median(x[1] for x in v), st.median(x[2] for x in v), ' '.join('%.3f'%x[0] for x in v)))
for m in ('poisson2d:3000','poisson3d:200'):
    j=st.median(x[0] for x in d[(m,'jacobi')]); a=st.median(x[0] for x in d[(m,'amg')]); print('%s jacobi/amg %.2f amg/jacobi %.2f' % (m, j/a, a/j))
PY
  ;;
s15e)
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/test_gpu -tc='GPU AMG*,GPU: upload buffers*' > $OUT/mem.log 2>&1; echo "memcheck AMG+upload: exit $? $(grep 'ERROR SUMMARY' $OUT/mem.log | tail -1) $(grep -E 'test cases' $OUT/mem.log)"
  timeout 100 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 $B/tests/test_gpu -tc='GPU: an allocation larger*' > $OUT/mem2.log 2>&1; echo "memcheck oom test (api errors not reported): exit $? $(grep 'ERROR SUMMARY' $OUT/mem2.log | tail -1) $(grep -E 'test cases' $OUT/mem2.log)"
  for r in 1 2 3 4 5 6; do for m in poisson3d:200 poisson2d:3000; do for pool in "" 0; do
    CGSOLVE_DEVICE_POOL=$pool CGSOLVE_DEVICE_TALLY=2 timeout 60 $B/app/cgsolve --matrix gen:$m --device gpu --precond amg --tol 1e-8 --report $OUT/r.json --quiet > /dev/null 2> $OUT/t.txt
    python3 -c "
import json;d=json.load(open('$OUT/r.json'));t=d['times'];s=sum(t[k] for k in ('reorder_s','build_format_s','preconditioner_s','upload_s'))
print('%-14s pool=%-2s %d tts %.3f upload %.3f precond %.3f' % ('$m','${pool:-on}',$r, s+t['solve_s'], t['upload_s'], t['preconditioner_s']), end=' | ')"
    grep -E "upload +[0-9]{8,} bytes" $OUT/t.txt | head -3 | awk '{printf "%s MB %s ms; ", int($4/1e6), $6}'; grep -E "allocate +[0-9]+ calls|free +[0-9]+ calls" $OUT/t.txt | awk '{printf "%s %s ms; ", $3, $6}'; echo
  done; done; done > $OUT/pairs.txt
  sort $OUT/pairs.txt
  ;;
s15d)
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; git log --oneline -1 | cut -c1-60
  timeout 300 $B/tests/test_gpu > "$OUT/test_gpu.log" 2>&1; echo "test_gpu (all): exit $? $(grep -E 'test cases' "$OUT/test_gpu.log")"
  grep -B2 -A6 "ERROR" $OUT/test_gpu.log | grep -E "values|name|precond|variant|ERROR|TEST CASE" | head -20
  $B/tests/test_gpu -tc='GPU: upload buffers*,GPU: an allocation larger*' -s 2>&1 | grep -E "test cases|asked for" | head -3
  timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/test_gpu -tc='GPU AMG*,GPU: upload buffers*,GPU: an allocation larger*' > $OUT/mem.log 2>&1; echo "memcheck AMG+upload+oom: exit $? $(grep 'ERROR SUMMARY' $OUT/mem.log | tail -1) $(grep -E 'test cases' $OUT/mem.log)"
  timeout 100 mpirun -np 1 --bind-to none -x LD_LIBRARY_PATH $B/tests/test_gpu_distributed > "$OUT/dist1.log" 2>&1; echo "test_gpu_distributed -np 1: exit $? $(grep -E 'test cases' "$OUT/dist1.log" | tail -1 | xargs)"
  tts() { python3 -c "
import json,sys;d=json.load(open('$OUT/r.json'));t=d['times'];s=sum(t[k] for k in ('reorder_s','build_format_s','preconditioner_s','upload_s'))
print('%-14s %-22s %-8s %-4s its %5d tts %.3f setup %.3f upload %.3f precond %.3f solve %.3f' % ('$1','$2','$3','$4', d['result']['iterations'], s+t['solve_s'], s, t['upload_s'], t['preconditioner_s'], t['solve_s']))"; }
  for r in 1 2 3 4 5; do for m in poisson2d:3000 poisson3d:200; do for v in new nopool; do for p in amg jacobi amg:aggregation=device; do
    [ $v = nopool ] && [ $p != amg ] && continue
    [ $m = poisson2d:3000 ] && [ $p = amg:aggregation=device ] && continue
    pool=; [ $v = nopool ] && pool=0
    CGSOLVE_DEVICE_POOL=$pool timeout 60 $B/app/cgsolve --matrix gen:$m --device gpu --precond $p --tol 1e-8 --report $OUT/r.json --quiet > /dev/null 2>&1; tts $m $p $v $r
  done; done; done; done > $OUT/tts.txt
  timeout 60 $B/bench/setupbench --device gpu --runs 5 --phases gen:poisson2d:3000 gen:poisson3d:200 > $OUT/sb.txt 2>&1
  echo "== setupbench"; grep -E "^gen:|^  (strength|aggregation|galerkin|spectra|coarse|prolong|restrict)" $OUT/sb.txt | cut -c1-100
  echo "== cgsolve"; sort $OUT/tts.txt | cut -c1-125
  python3 - $OUT/tts.txt <<'PY'
import sys, statistics as st, collections
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    f=l.split(); d[(f[0],f[1],f[2])].append((float(f[7]),float(f[13]),float(f[11]),int(f[5])))
for k in sorted(d):
    v=d[k]; print('%s %s %s: its %d tts median %.3f  precond median %.3f  upload median %.3f  (tts %s)' % (k[0],k[1],k[2], v[0][3], st.median(x[0] for x in v), st.median(x[1] for x in v), st.median(x[2] for x in v), ' '.join('%.3f'%x[0] for x in v)))
for m in ('poisson2d:3000','poisson3d:200'):
    j=st.median(x[0] for x in d[(m,'jacobi','new')])
    for p in ('amg','amg:aggregation=device'):
        for v in ('new','nopool'):
            if (m,p,v) in d: a=st.median(x[0] for x in d[(m,p,v)]); print('%s %s %s: jacobi/amg %.2f  amg/jacobi %.2f' % (m,p,v,j/a,a/j))
PY
  ;;
s15c)
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; git log --oneline -1 | cut -c1-60
  tts() { python3 -c "
import json,sys;d=json.load(open('$OUT/r.json'));t=d['times'];s=sum(t[k] for k in ('reorder_s','build_format_s','preconditioner_s','upload_s'))
print('%-14s %-8s %-10s %-6s its %5d tts %.3f setup %.3f upload %.3f precond %.3f solve %.3f format %.3f' % ('$1','$2','$3','$4', d['result']['iterations'], s+t['solve_s'], s, t['upload_s'], t['preconditioner_s'], t['solve_s'], t['build_format_s']))"; }
  for r in 1 2 3 4; do for m in poisson2d:3000 poisson3d:200; do for v in hp1 hp0 hp1pool; do for p in amg jacobi; do
    [ $v = hp1pool ] && [ $p = jacobi ] && continue
    hp=1; [ $v = hp0 ] && hp=0; pool=; [ $v = hp1pool ] && pool=2048
    CGSOLVE_HUGE_PAGES=$hp CGSOLVE_DEVICE_POOL=$pool timeout 60 $B/app/cgsolve --matrix gen:$m --device gpu --precond $p --tol 1e-8 --report $OUT/r.json --quiet > /dev/null 2>&1; tts $m $p $v $r
  done; done; done; done > $OUT/tts.txt
  for m in poisson2d:3000 poisson3d:200; do for hp in 1 0; do
    echo "== $m tally=2 pool=0 hp=$hp"; CGSOLVE_HUGE_PAGES=$hp CGSOLVE_DEVICE_POOL=0 CGSOLVE_DEVICE_TALLY=2 timeout 60 $B/app/cgsolve --matrix gen:$m --device gpu --precond amg --tol 1e-8 --quiet 2>&1 | grep -E "tally: (upload|pool|allocate +[0-9]+ calls|free|to |sync)" | head -14
  done; done > $OUT/tally.txt 2>&1
  echo "== tally"; cut -c1-130 $OUT/tally.txt
  echo "== cgsolve"; sort $OUT/tts.txt | cut -c1-120
  python3 - $OUT/tts.txt <<'PY'
import sys, statistics as st, collections
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    f=l.split(); d[(f[0],f[1],f[2])].append((float(f[7]),float(f[13]),float(f[11])))
for k in sorted(d):
    v=d[k]; print('%s %s %s: tts median %.3f  precond median %.3f  upload median %.3f  (tts %s)' % (k[0],k[1],k[2], st.median(x[0] for x in v), st.median(x[1] for x in v), st.median(x[2] for x in v), ' '.join('%.3f'%x[0] for x in v)))
PY
  ;;
s15b)
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; git log --oneline -1 | cut -c1-60
  { free -m; cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/memory.current 2>&1; grep -E "MemTotal|MemFree|MemAvailable|^Cached|AnonHugePages|Dirty" /proc/meminfo; cat /sys/kernel/mm/transparent_hugepage/defrag; ldd --version | head -1; } > $OUT/mem.txt 2>&1
  tts() { python3 -c "
import json,sys;d=json.load(open('$OUT/r.json'));t=d['times'];s=sum(t[k] for k in ('reorder_s','build_format_s','preconditioner_s','upload_s'))
print('%-14s %-8s %-8s %-6s its %5d tts %.3f setup %.3f upload %.3f precond %.3f solve %.3f format %.3f' % ('$1','$2','$3','$4', d['result']['iterations'], s+t['solve_s'], s, t['upload_s'], t['preconditioner_s'], t['solve_s'], t['build_format_s']))"; }
  declare -A TUN=([default]="" [thp]="glibc.malloc.hugetlb=1" [nommap]="glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=68719476736" [both]="glibc.malloc.hugetlb=1:glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=68719476736")
  for r in 1 2 3; do for m in poisson2d:3000 poisson3d:200; do for tn in default thp nommap both; do for p in amg jacobi; do
    [ $m = poisson3d:200 ] && [ $p = jacobi ] && [ $tn != default ] && continue
    GLIBC_TUNABLES="${TUN[$tn]}" timeout 60 $B/app/cgsolve --matrix gen:$m --device gpu --precond $p --tol 1e-8 --report $OUT/r.json --quiet > /dev/null 2>&1; tts $m $p $tn $r
  done; done; done; done > $OUT/tts.txt
  for v in "1 off" "1 2048" "2 off"; do set -- $v
    if [ $2 = off ]; then unset CGSOLVE_DEVICE_POOL; else export CGSOLVE_DEVICE_POOL=$2; fi
    echo "== tally=$1 pool=$2"; CGSOLVE_DEVICE_TALLY=$1 timeout 60 $B/app/cgsolve --matrix gen:poisson2d:3000 --device gpu --precond amg --tol 1e-8 --quiet 2>&1 | grep -E "tally" | head -45
  done > $OUT/tally.txt 2>&1; unset CGSOLVE_DEVICE_POOL
  echo "== memory"; cat $OUT/mem.txt
  echo "== tally"; cut -c1-150 $OUT/tally.txt | head -60
  echo "== cgsolve"; sort $OUT/tts.txt
  python3 - $OUT/tts.txt <<'PY'
import sys, statistics as st, collections
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    f=l.split(); d[(f[0],f[1],f[2])].append((float(f[7]),float(f[13]),float(f[11])))
for k in sorted(d):
    v=d[k]; print('%s %s %s: tts median %.3f  precond median %.3f  upload median %.3f' % (k[0],k[1],k[2], st.median(x[0] for x in v), st.median(x[1] for x in v), st.median(x[2] for x in v)))
PY
  ;;
s15a)
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; git log --oneline -1 | cut -c1-60
  { nvidia-smi topo -m; lscpu | grep -iE "numa|model name|socket|core"; numactl -H 2>&1 | head -8; cat /sys/kernel/mm/transparent_hugepage/enabled; } > $OUT/topo.txt 2>&1
  nvcc -O2 -arch=sm_90 -Xcompiler -fopenmp scripts/.h2d.cu -o /tmp/h2d && for p in 1 2 3 4 5 6; do /tmp/h2d; done > $OUT/h2d.txt 2>&1
  for r in 1 2 3; do for pool in off 0 2048; do
    if [ $pool = off ]; then unset CGSOLVE_DEVICE_POOL; else export CGSOLVE_DEVICE_POOL=$pool; fi
    timeout 90 $B/bench/setupbench --device gpu --runs 3 --phases gen:poisson2d:3000 > $OUT/sb.txt 2>&1
    echo "pool=$pool $(grep -E '^gen:' $OUT/sb.txt | cut -c1-90) | $(grep -E '^  (aggregation|galerkin|strength|coarse download|spectra)' $OUT/sb.txt | awk '{printf "%s %s ", $1, $3}')"
  done; done > $OUT/pool.txt; unset CGSOLVE_DEVICE_POOL
  tts() { python3 -c "
import json,sys;d=json.load(open('$OUT/r.json'));t=d['times'];s=sum(t[k] for k in ('reorder_s','build_format_s','preconditioner_s','upload_s'))
print('%-14s %-22s %-6s its %5d tts %.3f setup %.3f upload %.3f precond %.3f solve %.3f' % ('$1','$2','$3', d['result']['iterations'], s+t['solve_s'], s, t['upload_s'], t['preconditioner_s'], t['solve_s']))"; }
  for r in 1 2 3; do for m in poisson2d:3000 poisson3d:200; do
    for p in amg amg:aggregation=device jacobi; do
      timeout 60 $B/app/cgsolve --matrix gen:$m --device gpu --precond $p --tol 1e-8 --report $OUT/r.json --quiet > /dev/null 2>&1; tts $m $p $r
      [ $p = amg ] && { CGSOLVE_DEVICE_POOL=2048 timeout 60 $B/app/cgsolve --matrix gen:$m --device gpu --precond $p --tol 1e-8 --report $OUT/r.json --quiet > /dev/null 2>&1; tts $m amg+pool2048 $r; }
    done; done; done > $OUT/tts.txt
  echo "== topology"; grep -E "GPU0|NUMA|Socket|node|Model|hugepage|\[" $OUT/topo.txt | head -14
  echo "== h2d (GB/s)"; cat $OUT/h2d.txt
  echo "== setupbench pool"; cat $OUT/pool.txt
  echo "== cgsolve"; sort $OUT/tts.txt
  ;;
s14g)
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  tts() { python3 -c "
import json,sys;d=json.load(open('$OUT/r.json'));t=d['times'];s=sum(t[k] for k in ('reorder_s','build_format_s','preconditioner_s','upload_s'))
print('%-14s %-7s %-6s its %5d tts %.3f setup %.3f upload %.3f precond %.3f solve %.3f' % ('$1','$2','$3', d['result']['iterations'], s+t['solve_s'], s, t['upload_s'], t['preconditioner_s'], t['solve_s']))"; }
  for r in 1 2 3 4 5; do for m in poisson2d:3000 poisson3d:200; do
    for p in amg jacobi; do
      timeout 60 $B/app/cgsolve --matrix gen:$m --device gpu --precond $p --tol 1e-8 --report $OUT/r.json --quiet > /dev/null 2>&1; tts $m $p $r; done; done; done > $OUT/tts.txt
  python3 - $OUT/tts.txt <<'PY'
import sys, statistics as st, collections
d=collections.defaultdict(list); s=collections.defaultdict(list)
for l in open(sys.argv[1]):
    f=l.split(); d[(f[0],f[1])].append(float(f[6])); s[(f[0],f[1])].append((float(f[8]),float(f[14]),int(f[4])))
for m in sorted({k[0] for k in d}):
    j=st.median(d[(m,'jacobi')]); a=st.median(d[(m,'amg')])
    print('%s amg median tts %.3f (runs %s)  jacobi %.3f (runs %s)  jacobi/amg %.2f' % (m, a, ' '.join('%.3f'%x for x in d[(m,'amg')]), j, ' '.join('%.3f'%x for x in d[(m,'jacobi')]), j/a))
    for v in ('amg','jacobi'):
        print('   %s %s: its %d, setup median %.3f, solve median %.3f' % (m, v, s[(m,v)][0][2], st.median(x[0] for x in s[(m,v)]), st.median(x[1] for x in s[(m,v)])))
PY
  ;;
s14f)
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  timeout 280 $B/tests/test_gpu > "$OUT/test_gpu.log" 2>&1; echo "test_gpu (all): exit $? $(grep -E 'test cases' "$OUT/test_gpu.log")"
  grep -B2 -A6 "ERROR" $OUT/test_gpu.log | grep -E "values|name|precond|variant|ERROR|TEST CASE" | head -30
  timeout 100 compute-sanitizer --tool racecheck --error-exitcode 9 $B/tests/test_gpu -tc='Cluster CG: small*' > $OUT/race.log 2>&1; echo "racecheck small: exit $? $(grep -E 'RACECHECK SUMMARY' $OUT/race.log | tail -1)"
  timeout 100 compute-sanitizer --tool synccheck --error-exitcode 9 $B/tests/test_gpu -tc='Cluster CG: small*' > $OUT/sync.log 2>&1; echo "synccheck small: exit $? $(grep 'ERROR SUMMARY' $OUT/sync.log | tail -1)"
  timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/test_gpu -tc='Cluster CG: small*,Cluster CG: the one*,Cluster CG: the phase*' > $OUT/mem.log 2>&1; echo "memcheck small+restart+trace: exit $? $(grep 'ERROR SUMMARY' $OUT/mem.log | tail -1)"
  E=.gpu-data/shared/data/epanet-systems
  for th in 512 1024; do for red in 2 1; do
    CGSOLVE_CLUSTER_THREADS=$th CGSOLVE_CLUSTER_REDUCTIONS=$red timeout 100 $B/bench/cgbench gen:poisson2d:122 --devices gpu --gpu-kernels csr:scalar --gpu-loops persistent,cluster --precond none --iterations 2000 --repeats 3 --no-auto --out-dir $OUT/cg1 > $OUT/cg.txt 2>&1; grep -E '^gen:poisson2d:122 +14884' $OUT/cg.txt | grep -E 'cuSPARSE|persistent|cluster' | awk -v t="threads=$th red=$red" '{print t, $0}' | cut -c1-120
    CGSOLVE_CLUSTER_THREADS=$th CGSOLVE_CLUSTER_REDUCTIONS=$red timeout 120 $B/bench/cgbench $E/BWSN_Network_2_step10.mtx.gz data/systems/Exnet_EXN_step3.mtx.gz --devices gpu --gpu-kernels csr:scalar --gpu-loops persistent,cluster --precond jacobi --iterations 2000 --repeats 3 --no-auto --out-dir $OUT/cg2 > $OUT/cg.txt 2>&1; grep -E '^(BWSN_Network_2_step10|Exnet_EXN_step3) +[0-9]+ +gpu' $OUT/cg.txt | grep -E 'cuSPARSE|persistent|cluster' | awk -v t="threads=$th red=$red" '{print t, $0}' | cut -c1-120
    rm -rf $OUT/cg1 $OUT/cg2
  done; done
  timeout 90 $B/bench/batchbench $E/BWSN_Network_2_step10.mtx.gz --batch 64 --repeats 3 --max-iters 20000 2>&1 | tail -2 | head -1
  echo "== trace default poisson"; CGSOLVE_CLUSTER_PHASES=1 timeout 60 $B/app/cgsolve --matrix gen:poisson2d:122 --precond none --device gpu --gpu-loop cluster --tol 0 --max-iters 4000 2>&1 | grep -E "^  [AB]:|all phases|us per iteration|cluster of" | head -12
  ;;
s14e)
  E=.gpu-data/shared/data/epanet-systems
  sys=("--matrix gen:poisson2d:122 --precond none" "--matrix $E/BWSN_Network_2_step10.mtx.gz --rhs $E/BWSN_Network_2_step10_b.mtx.gz --precond jacobi" "--matrix data/systems/Exnet_EXN_step3.mtx.gz --precond jacobi")
  for T in 1024 512 256; do
    if [ $T != 1024 ]; then sed -i "s/^constexpr int kThreads = .*;/constexpr int kThreads = $T;/" solver/cuda/cluster_cg.cu; t1=$SECONDS; cmake --build $B -j16 --target cgsolve batchbench > $OUT/build-$T.log 2>&1 || { grep -B2 -A10 error $OUT/build-$T.log | head -30; }; echo "rebuilt kThreads=$T in $((SECONDS-t1)) s"; fi
    for rep in 1 2; do for args in "${sys[@]}"; do for red in 2 1; do
      echo "T=$T red=$red $(CGSOLVE_CLUSTER_REDUCTIONS=$red timeout 60 $B/app/cgsolve $args --device gpu --gpu-loop cluster --tol 0 --max-iters 4000 2>&1 | grep -E 'us per iteration' | head -1) :: ${args:9:40}"; done; done; done
    for args in "${sys[@]}"; do for red in 2 1; do echo "T=$T red=$red tol 1e-10 $(CGSOLVE_CLUSTER_REDUCTIONS=$red timeout 60 $B/app/cgsolve $args --device gpu --gpu-loop cluster --tol 1e-10 --validate 2>&1 | grep -E 'converged in|validate' | head -2 | tr '\n' ' ' | cut -c1-120) :: ${args:9:40}"; done; done
    echo "T=$T trace red=2 poisson"; CGSOLVE_CLUSTER_PHASES=1 timeout 60 $B/app/cgsolve ${sys[0]} --device gpu --gpu-loop cluster --tol 0 --max-iters 4000 2>&1 | grep -E "^  [AB]:|all phases" | head -9
    timeout 90 $B/bench/batchbench $E/BWSN_Network_2_step10.mtx.gz --batch 64 --repeats 3 --max-iters 20000 2>&1 | tail -2 | head -1
  done
  ;;
s14d)
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; git log --oneline -1 | cut -c1-60
  timeout 280 $B/tests/test_gpu > "$OUT/test_gpu.log" 2>&1; echo "test_gpu (all): exit $? $(grep -E 'test cases' "$OUT/test_gpu.log")"
  grep -B2 -A6 "ERROR" $OUT/test_gpu.log | grep -E "values|name|precond|variant|ERROR|TEST CASE" | head -30
  timeout 100 compute-sanitizer --tool synccheck --error-exitcode 9 $B/tests/test_gpu -tc='Cluster CG: small*' > $OUT/sync.log 2>&1; echo "synccheck small (both kernels): exit $? $(grep 'ERROR SUMMARY' $OUT/sync.log | tail -1)"
  for r in 1 2 3 4; do for p in amg; do
    CGSOLVE_DEVICE_TALLY=1 timeout 60 $B/app/cgsolve --matrix gen:poisson2d:3000 --device gpu --precond $p --tol 1e-8 --report $OUT/r.json --quiet > $OUT/tally.txt 2>&1
    python3 -c "
import json;d=json.load(open('$OUT/r.json'));t=d['times'];p=d['preconditioner']
print('run $r', ' '.join('%s %.3f'%(k[:-2],t[k]) for k in ('inspect_s','thread_start_s','reorder_s','build_format_s','preconditioner_s','upload_s','solve_s','download_s')))
print('   phases_s', {k:round(v,4) for k,v in p.get('phases_s',{}).items()})
print('   table', [(r.get('phase'),round(r.get('seconds',0),4)) for r in p.get('tables',{}).get('phases',[])])"
    grep -iE "alloc|free|upload|download|sync" $OUT/tally.txt | head -6
  done; done
  timeout 90 $B/bench/setupbench --device gpu --runs 3 --phases gen:poisson2d:3000 > $OUT/sb.txt 2>&1; tail -16 $OUT/sb.txt
  ;;
s14c)
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; git log --oneline -1 | cut -c1-60
  timeout 280 $B/tests/test_gpu > "$OUT/test_gpu.log" 2>&1; echo "test_gpu (all): exit $? $(grep -E 'test cases' "$OUT/test_gpu.log")"
  grep -B2 -A6 "ERROR" $OUT/test_gpu.log | grep -E "values|name|precond|variant|ERROR|TEST CASE" | head -30
  timeout 100 compute-sanitizer --tool racecheck --error-exitcode 9 $B/tests/test_gpu -tc='Cluster CG: small*' > $OUT/race.log 2>&1; echo "racecheck small (both kernels): exit $? $(grep -E 'RACECHECK SUMMARY' $OUT/race.log | tail -1)"
  timeout 100 compute-sanitizer --tool synccheck --error-exitcode 9 $B/tests/test_gpu -tc='Cluster CG: small*' > $OUT/sync.log 2>&1; echo "synccheck small: exit $? $(grep 'ERROR SUMMARY' $OUT/sync.log | tail -1)"
  timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/test_gpu -tc='Cluster CG: small*,Cluster CG: the one*' > $OUT/mem.log 2>&1; echo "memcheck small+restart: exit $? $(grep 'ERROR SUMMARY' $OUT/mem.log | tail -1)"
  E=.gpu-data/shared/data/epanet-systems
  for red in 2 1; do
    CGSOLVE_CLUSTER_REDUCTIONS=$red timeout 100 $B/bench/cgbench gen:poisson2d:122 --devices gpu --gpu-kernels csr:scalar --gpu-loops persistent,cluster --precond none --iterations 2000 --repeats 3 --no-auto --out-dir $OUT/cg1 > $OUT/cg-none-$red.txt 2>&1; echo "cgbench none red=$red: $?"; grep -E 'poisson|cuSPARSE' $OUT/cg-none-$red.txt | head -6
    CGSOLVE_CLUSTER_REDUCTIONS=$red timeout 120 $B/bench/cgbench $E/BWSN_Network_2_step10.mtx.gz data/systems/Exnet_EXN_step3.mtx.gz --devices gpu --gpu-kernels csr:scalar --gpu-loops persistent,cluster --precond jacobi --iterations 2000 --repeats 3 --no-auto --out-dir $OUT/cg2 > $OUT/cg-jac-$red.txt 2>&1; echo "cgbench jacobi red=$red: $?"; grep -E 'BWSN|Exnet' $OUT/cg-jac-$red.txt | head -8
    rm -rf $OUT/cg1 $OUT/cg2
  done
  timeout 90 $B/bench/batchbench $E/BWSN_Network_2_step10.mtx.gz --batch 64 --repeats 3 --max-iters 20000 2>&1 | tail -3
  sys=("--matrix gen:poisson2d:122 --precond none" "--matrix $E/BWSN_Network_2_step10.mtx.gz --rhs $E/BWSN_Network_2_step10_b.mtx.gz --precond jacobi" "--matrix data/systems/Exnet_EXN_step3.mtx.gz --precond jacobi")
  for red in 2 1; do for args in "${sys[@]}"; do echo "== trace red=$red $args" | cut -c1-110; CGSOLVE_CLUSTER_REDUCTIONS=$red CGSOLVE_CLUSTER_PHASES=1 timeout 60 $B/app/cgsolve $args --device gpu --gpu-loop cluster --tol 0 --max-iters 4000 2>&1 | grep -E "^  [a-zA-Z]|us per iteration" | grep -v "SpMV pass\|one pass" | head -11; done; done
  ;;
s14b)
  timeout 200 $B/tests/test_gpu -tc='Cluster*' > "$OUT/cluster.log" 2>&1; echo "test_gpu Cluster*: exit $? $(grep -E 'test cases' "$OUT/cluster.log")"
  grep -B2 -A6 "ERROR" $OUT/cluster.log | grep -E "values|name|precond|variant|ERROR" | paste - - - - - | sed 's/ERROR: CHECK//' | cut -c40-300 | head -20
  E=.gpu-data/shared/data/epanet-systems
  sys=("--matrix gen:poisson2d:122 --precond none" "--matrix $E/BWSN_Network_2_step10.mtx.gz --rhs $E/BWSN_Network_2_step10_b.mtx.gz --precond jacobi" "--matrix data/systems/Exnet_EXN_step3.mtx.gz --precond jacobi" "--matrix data/systems/Net3_step1.mtx.gz --precond none")
  for rep in 1 2; do for args in "${sys[@]}"; do
    for red in 1 2; do echo "red=$red $(CGSOLVE_CLUSTER_REDUCTIONS=$red timeout 60 $B/app/cgsolve $args --device gpu --gpu-loop cluster --tol 0 --max-iters 4000 2>&1 | grep -E 'us per iteration' | head -1) :: $args" | cut -c1-150; done
  done; done
  for args in "${sys[@]}"; do echo "== trace red=1 $args" | cut -c1-120; CGSOLVE_CLUSTER_PHASES=1 timeout 60 $B/app/cgsolve $args --device gpu --gpu-loop cluster --tol 0 --max-iters 4000 2>&1 | grep -E "cluster phases|^  [a-zA-Z]" | head -7; done
  for args in "${sys[@]}"; do for red in 1 2; do echo "== tol 1e-10 red=$red $(CGSOLVE_CLUSTER_REDUCTIONS=$red timeout 60 $B/app/cgsolve $args --device gpu --gpu-loop cluster --tol 1e-10 --validate 2>&1 | grep -E 'iterations|backward|validate' | head -3 | tr '\n' ' ')" | cut -c1-200; done; done
  ;;
s14a)
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; git log --oneline -1 | cut -c1-60
  timeout 200 $B/tests/test_gpu -tc='Cluster*' > "$OUT/cluster.log" 2>&1; echo "test_gpu Cluster*: exit $? $(grep -E 'test cases' "$OUT/cluster.log")"
  grep -B5 -A25 -E "ERROR|FAILED" "$OUT/cluster.log" | head -80
  E=.gpu-data/shared/data/epanet-systems
  sys=("--matrix gen:poisson2d:122 --precond none" "--matrix $E/BWSN_Network_2_step10.mtx.gz --rhs $E/BWSN_Network_2_step10_b.mtx.gz --precond jacobi" "--matrix data/systems/Exnet_EXN_step3.mtx.gz --precond jacobi")
  for rep in 1 2 3; do for args in "${sys[@]}"; do
    for red in 1 2; do echo "red=$red $(CGSOLVE_CLUSTER_REDUCTIONS=$red timeout 60 $B/app/cgsolve $args --device gpu --gpu-loop cluster --tol 0 --max-iters 4000 2>&1 | grep -E 'per iteration' | head -1) :: $args" | cut -c1-170; done
    echo "persistent $(timeout 60 $B/app/cgsolve $args --device gpu --gpu-loop persistent --tol 0 --max-iters 4000 2>&1 | grep -E 'per iteration' | head -1) :: $args" | cut -c1-170
  done; done
  for args in "${sys[@]}"; do echo "== trace red=1 $args" | cut -c1-120; CGSOLVE_CLUSTER_PHASES=1 timeout 60 $B/app/cgsolve $args --device gpu --gpu-loop cluster --tol 0 --max-iters 4000 2>&1 | grep -E "per iteration|cluster phases|^  [a-zA-Z]|loop:" | head -10; done
  echo "== trace red=2 poisson (pass A totals after the ILP patch; 13d: 2,148)"; CGSOLVE_CLUSTER_REDUCTIONS=2 CGSOLVE_CLUSTER_PHASES=1 timeout 60 $B/app/cgsolve ${sys[0]} --device gpu --gpu-loop cluster --tol 0 --max-iters 4000 2>&1 | grep -E "per iteration|^  [AB]:|all phases" | head -12
  for args in "${sys[@]}"; do for red in 1 2; do echo "== tol 1e-10 red=$red $(CGSOLVE_CLUSTER_REDUCTIONS=$red timeout 60 $B/app/cgsolve $args --device gpu --gpu-loop cluster --tol 1e-10 --validate 2>&1 | grep -E 'iterations|backward|validate' | head -3 | tr '\n' ' ')" | cut -c1-220; done; done
  timeout 120 compute-sanitizer --tool racecheck --error-exitcode 9 $B/tests/test_gpu -tc='Cluster CG: small*' > $OUT/race.log 2>&1; echo "racecheck small: exit $? $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' $OUT/race.log | tail -1)"
  timeout 120 compute-sanitizer --tool synccheck --error-exitcode 9 $B/tests/test_gpu -tc='Cluster CG: small*' > $OUT/sync.log 2>&1; echo "synccheck small: exit $? $(grep 'ERROR SUMMARY' $OUT/sync.log | tail -1)"
  timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/test_gpu -tc='Cluster CG: small*,Cluster CG: the one*' > $OUT/mem.log 2>&1; echo "memcheck small+restart: exit $? $(grep 'ERROR SUMMARY' $OUT/mem.log | tail -1)"
  ;;
s13i)
  timeout 260 $B/tests/test_gpu > "$OUT/test_gpu.log" 2>&1; echo "test_gpu (all): exit $? $(grep -E 'test cases' "$OUT/test_gpu.log")"
  grep -B5 -A15 -E "ERROR|FAILED" "$OUT/test_gpu.log" | head -30
  timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/test_gpu -tc='Cluster CG: the phase*' > $OUT/memcheck.log 2>&1; echo "memcheck phase trace test: exit $? $(grep 'ERROR SUMMARY' $OUT/memcheck.log | tail -1)"
  E=.gpu-data/shared/data/epanet-systems
  for args in "--matrix gen:poisson2d:122 --precond none" "--matrix $E/BWSN_Network_2_step10.mtx.gz --rhs $E/BWSN_Network_2_step10_b.mtx.gz --precond jacobi" "--matrix data/systems/Exnet_EXN_step3.mtx.gz --precond jacobi"; do
    for tr in 0 1; do echo "== $args trace=$tr"; CGSOLVE_CLUSTER_PHASES=$tr timeout 60 $B/app/cgsolve $args --device gpu --gpu-loop cluster --tol 0 --max-iters 4000 2>&1 | grep -E "per iteration|cluster phases|^  [AB]:|all phases|loop:" | head -14; done; done
  ;;
s13h)
  for m in gen:poisson2d:122; do
    timeout 60 $B/app/cgsolve --matrix $m --device gpu --gpu-loop cluster --precond none --tol 0 --max-iters 2000 2>&1 | grep -E "loop|per iteration|SpMV" | head -6
    timeout 200 ncu --kernel-name regex:cluster_cg_kernel --launch-count 1 --section WarpStateStats --section SchedulerStats --section LaunchStats --section Occupancy --section SourceCounters --section SpeedOfLight $B/app/cgsolve --matrix $m --device gpu --gpu-loop cluster --precond none --tol 0 --max-iters 2000 --quiet > $OUT/ncu-cluster.txt 2>&1; echo "ncu: $?"
    grep -E "Duration|Stall|stall|Warp Cycles|Issued|Eligible|No Eligible|Active Warps|Registers|Block Size|Cluster|Theoretical Occ|Achieved Occ|Branch|Memory Throughput|SM Busy|Issue Slots" $OUT/ncu-cluster.txt | head -60
    sed -n '/Source Counters/,$p' $OUT/ncu-cluster.txt | head -60
  done
  ;;
s13g)
  one() { timeout 60 $B/app/cgsolve --device gpu --precond jacobi --tol 0 --max-iters 400 --report $OUT/cg.json --quiet "$@" > /dev/null 2>&1; python3 -c "
import json;d=json.load(open('$OUT/cg.json'));t=d['times'];p=d['plan'];print(p.get('kernel'), p.get('loop'), round(1e6*t['per_iteration_s'],1), [r for r in p['reasons'] if r.startswith('loop')][:1])"; }
  for n in 20000 50000 80000 100000 130000 160000; do for f in "" "--kernel balanced" "--kernel balanced --gpu-loop graph"; do
    for r in 1 2 3; do echo "$n [$f] $(one --matrix gen:powerlaw:$n $f)"; done; done; done > $OUT/sweep.txt
  cut -c1-160 $OUT/sweep.txt
  ;;
s13f)
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; git log --oneline -1 | cut -c1-60
  timeout 260 $B/tests/test_gpu > "$OUT/test_gpu.log" 2>&1; echo "test_gpu (all): exit $? $(grep -E 'test cases' "$OUT/test_gpu.log")"
  grep -B5 -A15 -E "ERROR|FAILED" "$OUT/test_gpu.log" | head -40
  tts() { python3 -c "
import json,sys;d=json.load(open('$OUT/r.json'));t=d['times'];s=sum(t[k] for k in ('reorder_s','build_format_s','preconditioner_s','upload_s'))
print('%-14s %-7s %-6s its %5d tts %.3f setup %.3f upload %.3f precond %.3f solve %.3f' % ('$1','$2','$3', d['result']['iterations'], s+t['solve_s'], s, t['upload_s'], t['preconditioner_s'], t['solve_s']))"; }
  for r in 1 2 3 4 5 6 7; do for m in poisson2d:3000 poisson3d:200; do
    for p in amg jacobi; do
      timeout 60 $B/app/cgsolve --matrix gen:$m --device gpu --precond $p --tol 1e-8 --report $OUT/r.json --quiet > /dev/null 2>&1; tts $m $p $r; done; done; done > $OUT/tts.txt
  python3 - $OUT/tts.txt <<'PY'
import sys, statistics as st, collections
d=collections.defaultdict(list); s=collections.defaultdict(list)
for l in open(sys.argv[1]):
    f=l.split(); d[(f[0],f[1])].append(float(f[6])); s[(f[0],f[1])].append((float(f[8]),float(f[14]),int(f[4])))
for m in sorted({k[0] for k in d}):
    j=st.median(d[(m,'jacobi')]); a=st.median(d[(m,'amg')])
    print('%s amg median tts %.3f (runs %s)  jacobi %.3f (runs %s)  jacobi/amg %.2f' % (m, a, ' '.join('%.3f'%x for x in d[(m,'amg')]), j, ' '.join('%.3f'%x for x in d[(m,'jacobi')]), j/a))
    for v in ('amg','jacobi'):
        print('   %s %s: its %d, setup median %.3f, solve median %.3f' % (m, v, s[(m,v)][0][2], st.median(x[0] for x in s[(m,v)]), st.median(x[1] for x in s[(m,v)])))
PY
  for m in poisson2d:3000 poisson3d:200; do timeout 90 $B/bench/setupbench --device gpu --runs 5 --phases gen:$m > $OUT/sb.txt 2>&1; echo "setupbench $m"; grep -E "fresh|reuse|ratio" $OUT/sb.txt | tail -16; done
  tar czf $OUT/logs.tgz -C $OUT test_gpu.log tts.txt 2>/dev/null
  ;;
s13e)
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  timeout 260 $B/tests/test_gpu > "$OUT/test_gpu.log" 2>&1; echo "test_gpu (all): exit $? $(grep -E 'test cases' "$OUT/test_gpu.log")"
  grep -B5 -A15 -E "ERROR|FAILED" "$OUT/test_gpu.log" | head -40
  tts() { python3 -c "
import json,sys;d=json.load(open('$OUT/r.json'));t=d['times'];s=sum(t[k] for k in ('reorder_s','build_format_s','preconditioner_s','upload_s'))
print('%-14s %-7s %-6s its %5d tts %.3f setup %.3f upload %.3f precond %.3f solve %.3f' % ('$1','$2','$3', d['result']['iterations'], s+t['solve_s'], s, t['upload_s'], t['preconditioner_s'], t['solve_s']))"; }
  for r in 1 2 3 4 5 6 7; do for m in poisson2d:3000 poisson3d:200; do
    for p in amg jacobi; do
      CGSOLVE_DEVICE_TALLY=1 timeout 60 $B/app/cgsolve --matrix gen:$m --device gpu --precond $p --tol 1e-8 --report $OUT/r.json --quiet > /dev/null 2> $OUT/tally.txt; echo "$(tts $m $p $r) | $(grep -E 'to device|allocate' $OUT/tally.txt | awk '{printf "%s %s ms; ", $3, $6}')"; done; done; done > $OUT/tts.txt
  sort -k1,2 -s $OUT/tts.txt
  python3 - $OUT/tts.txt <<'PY'
import sys, statistics as st, collections
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    f=l.split(); d[(f[0],f[1])].append(float(f[6]))
for m in sorted({k[0] for k in d}):
    j=st.median(d[(m,'jacobi')]); a=st.median(d[(m,'amg')])
    print('%s amg median tts %.3f (runs %s)  jacobi %.3f (runs %s)  jacobi/amg %.2f' % (m, a, ' '.join('%.3f'%x for x in d[(m,'amg')]), j, ' '.join('%.3f'%x for x in d[(m,'jacobi')]), j/a))
PY
  M=dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sector_hit_rate.pct,lts__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__t_sector_hit_rate.pct,gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed
  timeout 200 ncu --kernel-name regex:'csr_stream_kernel' --launch-skip 2 --launch-count 2 --metrics $M $B/bench/spmvbench gen:powerlaw:2000000 --devices gpu --sorted no --runs 3 --gpu-kernels csr:stream4 --out-dir $OUT/spn > $OUT/ncu.txt 2>&1; echo "ncu: $?"; grep -E "^  [a-zA-Z_].*\(|dram__|lts__|l1tex__|gpu__time|sm__throughput" $OUT/ncu.txt | cut -c1-150 | head -40
  rm -rf $OUT/spn
  ;;
s13d)
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader
  timeout 90 $B/bench/spmvbench gen:powerlaw:2000000 --devices gpu --sorted no --runs 30 --gpu-kernels csr:cusparse,csr:stream4,csr:balanced,hll:thread --out-dir $OUT/sp > $OUT/sp.log 2>&1; echo "spmvbench: $?"; python3 - $OUT/sp/spmv.csv <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print('  %-34s %10s us   vs cuSPARSE CSR %s' % (r.get('backend'), r.get('median_us'), r.get('speedup_vs_ref', '')))
PY
  M=dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sector_hit_rate.pct,lts__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__t_sector_hit_rate.pct,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,lts__d_sectors_fill_device.sum
  timeout 200 ncu --kernel-name regex:'csr|Csr|spmv|Spmv|stream' --launch-skip 0 --launch-count 8 --metrics $M $B/bench/spmvbench gen:powerlaw:2000000 --devices gpu --sorted no --runs 1 --gpu-kernels csr:cusparse,csr:stream4 --out-dir $OUT/spn > $OUT/ncu.txt 2>&1; echo "ncu: $?"; grep -E "^  [a-zA-Z_].*\(|dram__|lts__|l1tex__|gpu__time|sm__throughput" $OUT/ncu.txt | head -120
  for r in 1 2 3; do for f in "" "--kernel cusparse --gpu-loop generic" "--kernel stream --gpu-loop generic"; do timeout 60 $B/app/cgsolve --matrix gen:powerlaw:2000000 --device gpu --precond jacobi --tol 0 --max-iters 200 $f --report $OUT/cg.json --quiet > /dev/null 2>&1; python3 -c "
import json;d=json.load(open('$OUT/cg.json'));t=d['times'];print('cgsolve powerlaw 2M [$f]', d['plan'].get('kernel'), d['plan'].get('loop'), 'us/it', round(1e6*t['solve_s']/d['result']['iterations'],1), 'spmv med us', round(1e6*d['spmv']['median_s'],1))"; done; done
  tar czf $OUT/ncu.tgz -C $OUT ncu.txt sp.log; rm -rf $OUT/sp $OUT/spn
  ;;
s13c)
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  timeout 150 $B/tests/test_gpu -tc='GPU AMG*' > "$OUT/test_amg.log" 2>&1; echo "test_gpu GPU AMG*: exit $? $(grep -E 'test cases' "$OUT/test_amg.log")"
  grep -B5 -A15 -E "ERROR|FAILED" "$OUT/test_amg.log" | head -40
  CGS_GPU_TESTS_LIGHT=1 timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/test_gpu -tc='GPU AMG: prepare*,GPU AMG: the finest aggregation made ahead*' > "$OUT/memcheck.log" 2>&1; echo "memcheck ahead tests: exit $? $(grep 'ERROR SUMMARY' "$OUT/memcheck.log" | tail -1)"
  tts() { python3 -c "
import json,sys;d=json.load(open('$OUT/r.json'));t=d['times'];s=sum(t[k] for k in ('reorder_s','build_format_s','preconditioner_s','upload_s'))
print('%-14s %-7s %-6s its %5d tts %.3f setup %.3f upload %.3f precond %.3f solve %.3f' % ('$1','$2','$3', d['result']['iterations'], s+t['solve_s'], s, t['upload_s'], t['preconditioner_s'], t['solve_s']))"; }
  for r in 1 2 3 4 5 6 7; do for m in poisson2d:3000 poisson3d:200; do
    for v in ahead plain jacobi; do p=amg; e=""; [ $v = plain ] && e="CGSOLVE_AMG_NO_AHEAD=1"; [ $v = jacobi ] && p=jacobi
      env $e timeout 60 $B/app/cgsolve --matrix gen:$m --device gpu --precond $p --tol 1e-8 --report $OUT/r.json --quiet > /dev/null 2>&1; tts $m $v $r; done; done; done > $OUT/tts.txt
  cat $OUT/tts.txt | sort -k1,2 -s | awk '{print}' | head -50
  python3 - $OUT/tts.txt <<'PY'
import sys, statistics as st, collections
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    f=l.split(); d[(f[0],f[1])].append(float(f[6]))
for m in sorted({k[0] for k in d}):
    j=st.median(d[(m,'jacobi')])
    for v in ('ahead','plain'):
        a=st.median(d[(m,v)]); print('%s %s median tts %.3f (runs %s)  jacobi %.3f  ratio %.2f' % (m, v, a, ' '.join('%.3f'%x for x in d[(m,v)]), j, j/a))
PY
  CGSOLVE_AMG_NO_AHEAD= timeout 60 $B/app/cgsolve --matrix gen:poisson2d:3000 --device gpu --precond amg --tol 1e-8 2>&1 | grep -A30 "phase" | head -24
  ;;
s13b)
  for r in 1 2 3 4 5; do for p in amg jacobi; do CGSOLVE_DEVICE_TALLY=1 timeout 60 $B/app/cgsolve --matrix gen:poisson2d:3000 --device gpu --precond $p --tol 1e-8 --report $OUT/r.json --quiet > $OUT/o.txt 2>&1; python3 -c "
import json;d=json.load(open('$OUT/r.json'));t=d['times'];print('$p', 'its', d['result'].get('iterations'), ' '.join('%s=%.3f'%(k[:-2],v) for k,v in t.items() if isinstance(v,(int,float)) and k not in ('read_s','inspect_s','probe_kept_s','thread_start_s','reorder_s')))"; grep -i -E "alloc|upload|download|sync|free" $OUT/o.txt | tr '\n' ' ' | cut -c1-400; echo; done; done
  cat /proc/cpuinfo | grep "model name" | head -1; free -g | head -2; cat /sys/kernel/mm/transparent_hugepage/enabled
  ;;
s13a)
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc
  timeout 260 $B/tests/test_gpu > "$OUT/test_gpu.log" 2>&1; echo "test_gpu (all): exit $? $(grep -E 'test cases' "$OUT/test_gpu.log")"
  grep -B5 -A15 -E "ERROR|FAILED" "$OUT/test_gpu.log" | head -40
  CGS_GPU_TESTS_LIGHT=1 timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/test_gpu -tc='GPU trials*' > "$OUT/memcheck.log" 2>&1; echo "memcheck GPU trials*: exit $? $(grep 'ERROR SUMMARY' "$OUT/memcheck.log" | tail -1)"
  for r in 1 2 3; do for m in poisson2d:3000 poisson3d:200; do for p in amg jacobi; do timeout 60 $B/app/cgsolve --matrix gen:$m --device gpu --precond $p --tol 1e-8 --report $OUT/r.json --quiet > /dev/null 2>&1; python3 -c "
import json;d=json.load(open('$OUT/r.json'));t=d['times'];print('$m $p', 'its', d['result'].get('iterations'), ' '.join('%s=%.3f'%(k[:-2],v) for k,v in t.items() if isinstance(v,(int,float))), d['preconditioner'].get('phases_s',''))"; done; done; done
  timeout 90 $B/bench/setupbench --device gpu --runs 5 --phases gen:poisson2d:3000 > $OUT/sb.txt 2>&1; tail -14 $OUT/sb.txt
  tar czf $OUT/logs.tgz -C $OUT test_gpu.log memcheck.log 2>/dev/null
  ;;
s12d)
  for fl in --cold-start ""; do echo "== netsolve flags: ${fl:-(warm, the default)}"
    SKIP_BUILD=1 BUILD=$B GPU_ENGINE=trials NETS="BWSN_Network_2 Exnet_EXN Net3 Richmond_standard C-Town Wolf-Cordera_wolf-3" STUDIES=fireflow MAX=1000 DEADLINE=220 NETSOLVE_FLAGS="$fl" SHARED=.gpu-data/shared OUT=$OUT/sg$fl timeout 240 scripts/study-gpu-check.sh > $OUT/sg$fl.txt 2>&1; echo "study-gpu-check: $?"; grep -E "^\| [A-Z]" $OUT/sg$fl.txt | cut -d'|' -f2-6,8-10,12-15
  done
  ;;
s12c)
  nproc; S=$PWD/.gpu-data/shared
  jobs=$OUT/jobs.txt; : > $jobs
  for f in $S/data/networks/*.inp; do n=$(basename $f .inp)
    echo "$n dda --durations '0 86400'" >> $jobs
    echo "$n pda --durations '0 86400' --pda '0 20 0.5'" >> $jobs
    echo "$n gpu --durations 0 --netsolve-flags '--device gpu'" >> $jobs
    echo "$n gpupda --durations 0 --pda '0 20 0.5' --netsolve-flags '--device gpu'" >> $jobs
  done
  run_job() { n=$1 k=$2; shift 2; SHARED=$S timeout 420 scripts/study-check.sh --build $B --max 40 --starts auto --timeout 200 --out $OUT/sc/$n-$k "$@" $S/data/networks/$n.inp > $OUT/sc-$n-$k.txt 2>&1; }
  export -f run_job; export OUT S B
  mkdir -p $OUT/sc
  t1=$SECONDS; cat $jobs | xargs -P 16 -L 1 bash -c 'run_job "$@"' _ ; echo "sweep: $((SECONDS-t1)) s"
  rows() { cat $OUT/sc-*-$1.txt | grep -v ': /' | grep -E '^[A-Za-z0-9_-]+ +(fireflow|closure) +(0|86400) '; }
  for k in dda pda gpu gpupda; do echo "$k: $(rows $k | awk '{print $NF}' | sort | uniq -c | xargs)"; done
  echo "not matching:"; for k in dda pda gpu gpupda; do rows $k | grep -v " match$" | sed "s/ \+/ /g; s/^/$k: /"; done | head -70
  tar czf $OUT/sweep.tgz -C $OUT $(cd $OUT; ls sc-*.txt) 2>/dev/null; rm -rf $OUT/sc
  ;;
s12b)
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  timeout 200 $B/tests/test_gpu > "$OUT/test_gpu.log" 2>&1; echo "test_gpu (all): exit $? $(grep -E 'test cases' "$OUT/test_gpu.log")"
  grep -B5 -A15 -E "ERROR|FAILED" "$OUT/test_gpu.log" | head -40
  S=.gpu-data/shared; N=$S/data/networks
  for st in fireflow closure; do timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 $B/app/netsolve --network $N/Net3.inp --study $st --device gpu --quiet > $OUT/memcheck-$st.log 2>&1; echo "memcheck netsolve Net3 $st --device gpu: exit $? $(grep 'ERROR SUMMARY' $OUT/memcheck-$st.log | tail -1)"; done
  INP=$N/BWSN_Network_2.inp
  awk 'BEGIN{p=0} /^\[/{p=(toupper($1)=="[JUNCTIONS]")} {sub(/;.*/,"")} p && !/^\[/ && NF>0{print $1}' $INP | head -2000 > $OUT/j2000.txt
  awk 'BEGIN{p=0} /^\[/{p=(toupper($1)=="[PIPES]")} {sub(/;.*/,"")} p && !/^\[/ && NF>0 && toupper($8)!="CV"{print $1}' $INP | head -1000 > $OUT/p1000.txt
  timeout 60 $S/tools/epanet/epanet-scenarios $INP --study fireflow --max 2000 --csv $OUT/e-ff.csv > $OUT/e-ff.log 2>&1; echo "EPANET fire flow 2000: $(grep -o '[0-9.]* scenarios/s' $OUT/e-ff.log)"
  for r in 1 2; do for d in gpu cpu; do timeout 120 $B/app/netsolve --network $INP --study fireflow --device $d --study-csv $OUT/ff-$d.csv --report $OUT/ff-$d-$r.json > $OUT/ff-$d.log 2>&1; echo "BWSN fire flow, all junctions, $d run $r: exit $?"; grep -E "^time|^trials|^start" $OUT/ff-$d.log | cut -c1-240; done; done
  timeout 60 $B/app/netsolve --network $INP --study fireflow --elements $OUT/j2000.txt --device gpu --study-csv $OUT/ff2000-gpu.csv --quiet; python3 scripts/compare_study.py $OUT/ff2000-gpu.csv $OUT/e-ff.csv | tail -2
  python3 scripts/compare_study.py $OUT/ff-gpu.csv $OUT/ff-cpu.csv | tail -1
  timeout 60 $S/tools/epanet/epanet-scenarios $INP --study closure --max 1000 --csv $OUT/e-cl.csv > $OUT/e-cl.log 2>&1; echo "EPANET closure 1000: $(grep -o '[0-9.]* scenarios/s' $OUT/e-cl.log)"
  for d in gpu cpu; do timeout 120 $B/app/netsolve --network $INP --study closure --device $d --study-csv $OUT/cl-$d.csv > $OUT/cl-$d.log 2>&1; echo "BWSN closure, all pipes, $d: exit $?"; grep -E "^time|^trials|^start" $OUT/cl-$d.log | cut -c1-240; done
  timeout 60 $B/app/netsolve --network $INP --study closure --elements $OUT/p1000.txt --device gpu --study-csv $OUT/cl1000-gpu.csv --quiet; python3 scripts/compare_study.py $OUT/cl1000-gpu.csv $OUT/e-cl.csv | tail -2
  python3 scripts/compare_study.py $OUT/cl-gpu.csv $OUT/cl-cpu.csv | tail -1
  tar czf $OUT/logs.tgz -C $OUT test_gpu.log memcheck-fireflow.log memcheck-closure.log 2>/dev/null
  ;;
s12a)
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  timeout 150 $B/tests/test_gpu -tc="GPU trials*" -s > "$OUT/test_trials.log" 2>&1; echo "test_gpu trials: exit $? $(grep -E 'test cases' "$OUT/test_trials.log")"
  grep -E "rows identical" "$OUT/test_trials.log" | cut -d: -f4- | head -40; grep -B3 -A8 -E "ERROR|FAILED" "$OUT/test_trials.log" | head -40
  timeout 150 $B/tests/test_gpu -tc='*study*,GPU batch*' > "$OUT/test_study.log" 2>&1; echo "test_gpu study+batch: exit $? $(grep -E 'test cases' "$OUT/test_study.log")"
  grep -B5 -A15 -E "ERROR|FAILED" "$OUT/test_study.log" | head -30
  S=../shared; [ -d $S/data/networks ] || S=.gpu-data/shared
  INP=$S/data/networks/BWSN_Network_2.inp
  for d in gpu cpu gpu; do timeout 120 $B/app/netsolve --network $INP --study fireflow --device $d --study-csv $OUT/bwsn-$d.csv --report $OUT/bwsn-$d.json > $OUT/bwsn-$d.log 2>&1; echo "BWSN fire flow, all junctions, $d: exit $?"; grep -E "^solver|^time|^trials|^batches" $OUT/bwsn-$d.log | cut -c1-300; done
  python3 scripts/compare_study.py $OUT/bwsn-gpu.csv $OUT/bwsn-cpu.csv | tail -3
  SKIP_BUILD=1 BUILD=$B GPU_ENGINE=trials NETS="BWSN_Network_2 Exnet_EXN Net3 Richmond_standard" STUDIES="fireflow closure" MAX=1000 DEADLINE=330 OUT=$OUT/sg timeout 360 scripts/study-gpu-check.sh > $OUT/sg.txt 2>&1; echo "study-gpu-check: $?"; tail -16 $OUT/sg.txt
  tar czf $OUT/logs.tgz -C $OUT test_trials.log test_study.log sg.txt 2>/dev/null
  ;;
s8a)
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  timeout 330 $B/tests/test_gpu > "$OUT/test_gpu.log" 2>&1; echo "test_gpu (all): exit $? $(grep -E 'test cases' "$OUT/test_gpu.log")"
  grep -B5 -A15 -E "ERROR|FAILED" "$OUT/test_gpu.log" | head -60
  CGS_GPU_TESTS_LIGHT=1 timeout 100 env CGSOLVE_NO_DEVICE_CACHE=1 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/test_gpu -tc='GPU AMG: on the backend*,GPU fsai*' > "$OUT/memcheck.log" 2>&1; echo "memcheck AMG lent + fsai: exit $? $(grep 'ERROR SUMMARY' "$OUT/memcheck.log" | tail -1)"
  for l in "" --no-lend; do timeout 90 $B/bench/setupbench --device gpu --runs 5 $l --phases gen:poisson2d:3000 > $OUT/sb$l.txt 2>&1; echo "setupbench poisson2d:3000 $l: $?"; tail -14 $OUT/sb$l.txt; done
  for p in amg jacobi; do timeout 60 $B/app/cgsolve --matrix gen:poisson2d:3000 --device gpu --precond $p --tol 1e-8 --report $OUT/r-$p.json --quiet; python3 -c "
import json;d=json.load(open('$OUT/r-$p.json'));t=d['times'];print('poisson2d:3000 $p', 'its', d['result'].get('iterations'), 'setup', round(sum(t[k] for k in ('reorder_s','build_format_s','preconditioner_s','upload_s')),3), 'solve', round(t['solve_s'],3), d['preconditioner'].get('phases_s'))"; done
  tar czf $OUT/logs.tgz -C $OUT test_gpu.log memcheck.log sb.txt sb--no-lend.txt 2>/dev/null
  ;;
hllv)
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  timeout 100 $B/tests/test_gpu -tc='*HLL*,GPU SpMV*' > "$OUT/test_hll.log" 2>&1; echo "test_gpu HLL+SpMV: exit $? $(grep -E 'test cases' "$OUT/test_hll.log")"
  grep -B5 -A15 -E "ERROR|FAILED" "$OUT/test_hll.log" | head -30
  for v in 0 1 2 3 0 3; do CGSOLVE_HLL_VARIANT=$v timeout 60 $B/bench/spmvbench gen:powerlaw:2000000 --devices gpu --sorted no --runs 30 --gpu-kernels csr:cusparse,hll:thread --out-dir $OUT/sp$v > $OUT/sp$v.log 2>&1; echo "variant $v: $?"; python3 - $OUT/sp$v/spmv.csv <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print('  %-34s %10s us   vs cuSPARSE CSR %s' % (r.get('backend'), r.get('median_us'), r.get('speedup_vs_ref', '')))
PY
  rm -rf $OUT/sp$v; done
  timeout 120 ncu --kernel-name regex:'hll|csrmv|spmv|Spmv' --launch-skip 0 --launch-count 6 --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats $B/bench/spmvbench gen:powerlaw:2000000 --devices gpu --sorted no --runs 1 --gpu-kernels csr:cusparse,hll:thread --out-dir $OUT/spn > $OUT/ncu.txt 2>&1; echo "ncu: $?"; grep -E "^  [a-z_].*\(|Duration|Memory Throughput|DRAM Throughput|L2 Hit|L1/TEX Hit|Achieved Occupancy|Registers Per|Mem Busy|Max Bandwidth|Compute \(SM\)" $OUT/ncu.txt | head -70
  rm -rf $OUT/spn
  ;;
hllv2)
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  timeout 100 $B/tests/test_gpu -tc='*HLL*,GPU SpMV*' > "$OUT/test_hll.log" 2>&1; echo "test_gpu HLL+SpMV: exit $? $(grep -E 'test cases' "$OUT/test_hll.log")"
  for vt in 0: 3: 4: 5: 6: 3:1 4:1 5:1 6:1 3: 5:1; do v=${vt%%:*}; t=${vt#*:}; ( export CGSOLVE_HLL_VARIANT=$v; [ -n "$t" ] && export CGSOLVE_HLL_TAIL_BATCHED=1; timeout 60 $B/bench/spmvbench gen:powerlaw:2000000 --devices gpu --sorted no --runs 30 --gpu-kernels csr:cusparse,hll:thread --out-dir $OUT/sp > $OUT/sp.log 2>&1 ); python3 - $OUT/sp/spmv.csv "$v" "$t" <<'PY'
import csv, sys
rows = {r.get('backend'): r for r in csv.DictReader(open(sys.argv[1]))}
ref = rows.get('cuSPARSE CSR (csr-alg1)'); h = rows.get('hll/cuda')
print('variant %s tail %-2s  cuSPARSE %.1f us  hll %.1f us  ratio %.3f' % (sys.argv[2], sys.argv[3] or '-', float(ref['median_us']), float(h['median_us']), float(h['speedup_vs_ref'])))
PY
  rm -rf $OUT/sp; done
  for vt in 0: 5:1; do v=${vt%%:*}; t=${vt#*:}; ( export CGSOLVE_HLL_VARIANT=$v; [ -n "$t" ] && export CGSOLVE_HLL_TAIL_BATCHED=1; timeout 60 $B/app/cgsolve --matrix gen:powerlaw:2000000 --device gpu --format hll --precond jacobi --tol 0 --max-iters 200 --report $OUT/cg.json --quiet ); python3 -c "
import json;d=json.load(open('$OUT/cg.json'));t=d['times'];print('cgsolve --format hll variant $vt', d['plan'].get('kernel'), d['plan'].get('loop'), 'us/it', round(1e6*t['solve_s']/d['result']['iterations'],1), 'spmv med us', round(1e6*d['spmv']['median_s'],1))"; done
  CGSOLVE_HLL_VARIANT=5 CGSOLVE_HLL_TAIL_BATCHED=1 timeout 120 ncu --kernel-name regex:'hll' --launch-skip 4 --launch-count 2 --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section WarpStateStats $B/bench/spmvbench gen:powerlaw:2000000 --devices gpu --sorted no --runs 1 --gpu-kernels hll:thread --out-dir $OUT/spn > $OUT/ncu.txt 2>&1; echo "ncu: $?"; grep -E "^  [a-z_].*\\(|Duration|DRAM Throughput|L2 Hit|L1/TEX Hit|Achieved Occupancy|Registers Per|Mem Busy|Max Bandwidth|Stall|Warp Cycles Per Issued" $OUT/ncu.txt | head -40
  rm -rf $OUT/spn
  ;;
chol)
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  timeout 200 $B/tests/test_gpu -tc='GPU preconditioners*,Cluster CG with the other*,*HLL*,GPU SpMV*' > "$OUT/test_chol.log" 2>&1; echo "test_gpu precond+cluster+HLL: exit $? $(grep -E 'test cases' "$OUT/test_chol.log")"
  grep -B5 -A15 -E "ERROR|FAILED" "$OUT/test_chol.log" | head -50
  CGS_GPU_TESTS_LIGHT=1 timeout 100 env CGSOLVE_NO_DEVICE_CACHE=1 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/test_gpu -tc='GPU preconditioners: one apply*' > "$OUT/memcheck.log" 2>&1; echo "memcheck precond apply: exit $? $(grep 'ERROR SUMMARY' "$OUT/memcheck.log" | tail -1)"
  RUNS=5 PRECONDS="chol ic0 fsai:2 jacobi" timeout 250 scripts/precond-gpu-study.sh $B .gpu-data > $OUT/study-chol.txt 2>&1; echo "study (systems): $?"; cat $OUT/study-chol.txt
  for l in persistent graph generic; do timeout 30 $B/app/cgsolve --matrix .gpu-data/BWSN_Network_2_step10.mtx.gz --rhs .gpu-data/BWSN_Network_2_step10_b.mtx.gz --device gpu --precond chol --gpu-loop $l --tol 1e-10 --report $OUT/b.json --quiet; python3 -c "
import json;d=json.load(open('$OUT/b.json'));t=d['times'];print('BWSN chol $l its', d['result']['iterations'], 'setup ms', round(1e3*sum(t[k] for k in ('reorder_s','build_format_s','preconditioner_s','upload_s')),2), 'solve ms', round(1e3*t['solve_s'],3), d['preconditioner'].get('phases_s'))"; done
  timeout 60 $B/app/cgsolve --matrix gen:powerlaw:2000000 --device gpu --format hll --precond jacobi --tol 0 --max-iters 200 --report $OUT/h.json --quiet; python3 -c "
import json;d=json.load(open('$OUT/h.json'));t=d['times'];print('cgsolve --format hll powerlaw 2M: us/it', round(1e6*t['solve_s']/d['result']['iterations'],1), 'spmv med us', round(1e6*d['spmv']['median_s'],1))"
  ;;
chol2)
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  timeout 250 $B/tests/test_gpu -tc='GPU preconditioners*,Cluster CG*,GPU ic0*' > "$OUT/test_chol.log" 2>&1; echo "test_gpu precond+cluster: exit $? $(grep -E 'test cases' "$OUT/test_chol.log")"
  grep -B5 -A15 -E "ERROR|FAILED" "$OUT/test_chol.log" | head -50
  CGS_GPU_TESTS_LIGHT=1 timeout 100 env CGSOLVE_NO_DEVICE_CACHE=1 compute-sanitizer --tool racecheck --error-exitcode 9 $B/tests/test_gpu -tc='Cluster CG with the other*' > "$OUT/racecheck.log" 2>&1; echo "racecheck cluster programs (chol incl.): exit $? $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' "$OUT/racecheck.log" | tail -1)"
  RUNS=5 CPU="serial:ic0 serial:chol" PRECONDS="chol ic0 fsai:2 jacobi" timeout 250 scripts/precond-gpu-study.sh $B .gpu-data > $OUT/study-chol.txt 2>&1; echo "study (systems): $?"; cat $OUT/study-chol.txt
  for m in ky2_step4 Exnet_EXN_step3; do for p in jacobi chol; do timeout 30 $B/app/cgsolve --matrix .gpu-data/$m.mtx.gz --rhs .gpu-data/${m}_b.mtx.gz --device gpu --precond $p --tol 1e-10 --report $OUT/b.json --quiet; python3 -c "
import json;d=json.load(open('$OUT/b.json'));t=d['times'];print('$m $p', d['plan'].get('loop'), 'its', d['result']['iterations'], {k: round(v*1e3,3) for k,v in t.items()}, d['preconditioner'].get('phases_s'))"; done; done
  ;;
gal2)
  for m in gen:poisson2d:3000 gen:poisson3d:200; do for g in kernels cusparse; do
    echo "== $m galerkin=$g"; CGSOLVE_AMG_GALERKIN_TIMES=1 CGSOLVE_AMG_GALERKIN=$g timeout 120 $B/bench/setupbench --device gpu --runs 2 --precond amg --phases $m 2>&1 | grep -v "^$" | tail -40
  done; done
  ;;
d2h)
  nvcc -O2 -Xcompiler -fopenmp -arch=sm_90 -o /tmp/d2h scripts/.d2h.cu && OMP_NUM_THREADS=16 /tmp/d2h
  timeout 330 $B/tests/test_gpu > "$OUT/test_gpu.log" 2>&1; echo "test_gpu (all): exit $? $(grep -E 'test cases' "$OUT/test_gpu.log")"
  grep -B5 -A15 -E "ERROR|FAILED" "$OUT/test_gpu.log" | head -60
  tar czf $OUT/logs.tgz -C $OUT test_gpu.log
  ;;
gal3)
  timeout 200 $B/tests/test_gpu -tc='GPU AMG*' > "$OUT/test_amg.log" 2>&1; echo "test_gpu GPU AMG*: exit $? $(grep -E 'test cases' "$OUT/test_amg.log")"
  grep -B5 -A25 -E "ERROR|FAILED" "$OUT/test_amg.log" | head -40
  for m in gen:poisson2d:3000 gen:poisson3d:200; do
    for p in amg amg amg jacobi; do timeout 60 $B/app/cgsolve --matrix $m --device gpu --precond $p --tol 1e-8 --report $OUT/r.json --quiet; python3 -c "
import json;d=json.load(open('$OUT/r.json'));t=d['times'];print('$m $p its', d['result'].get('iterations'), 'tts', round(sum(t[k] for k in ('reorder_s','build_format_s','preconditioner_s','upload_s','solve_s')),3), {k: round(v,4) for k,v in t.items()})"; done
    timeout 120 $B/bench/setupbench --device gpu --runs 5 --precond amg --phases $m > $OUT/sb.txt 2>&1; echo "setupbench $m: $?"; grep -E "amg  |galerkin|download|aggregation|strength|spectra|prolongator|restriction|coarse inverse" $OUT/sb.txt
  done
  ;;
gal4)
  timeout 330 $B/tests/test_gpu > "$OUT/test_gpu.log" 2>&1; echo "test_gpu (all): exit $? $(grep -E 'test cases' "$OUT/test_gpu.log")"
  grep -B5 -A15 -E "ERROR|FAILED" "$OUT/test_gpu.log" | head -40
  for m in gen:poisson2d:3000 gen:poisson3d:200; do
    for p in amg jacobi amg jacobi amg jacobi amg amg; do timeout 60 $B/app/cgsolve --matrix $m --device gpu --precond $p --tol 1e-8 --report $OUT/r.json --quiet; python3 -c "
import json;d=json.load(open('$OUT/r.json'));t=d['times'];print('$m $p its', d['result'].get('iterations'), 'tts', round(sum(t[k] for k in ('reorder_s','build_format_s','preconditioner_s','upload_s','solve_s')),3), {k: round(v,4) for k,v in t.items() if v > 0.0005 and k not in ('read_s',)})"; done
  done
  CGSOLVE_DEVICE_TALLY=1 timeout 60 $B/app/cgsolve --matrix gen:poisson2d:3000 --device gpu --precond jacobi --tol 1e-8 --quiet 2>&1 | tail -5
  tar czf $OUT/logs.tgz -C $OUT test_gpu.log
  ;;
gal5)
  timeout 200 $B/tests/test_gpu -tc='GPU AMG*' > "$OUT/test_amg.log" 2>&1; echo "test_gpu GPU AMG*: exit $? $(grep -E 'test cases' "$OUT/test_amg.log")"
  for m in gen:poisson2d:3000 gen:poisson3d:200; do
    for p in amg jacobi amg jacobi amg jacobi amg jacobi amg jacobi amg; do timeout 60 $B/app/cgsolve --matrix $m --device gpu --precond $p --tol 1e-8 --report $OUT/r.json --quiet; python3 -c "
import json;d=json.load(open('$OUT/r.json'));t=d['times'];print('$m $p its', d['result'].get('iterations'), 'tts', round(sum(t[k] for k in ('reorder_s','build_format_s','preconditioner_s','upload_s','solve_s')),3), 'precond', round(t['preconditioner_s'],3), 'upload', round(t['upload_s'],3), 'solve', round(t['solve_s'],3))"; done
    timeout 120 $B/bench/setupbench --device gpu --runs 5 --precond amg --phases $m > $OUT/sb.txt 2>&1; echo "setupbench $m: $?"; grep -E "amg  |galerkin|download|aggregation|strength|spectra|prolongator|restriction|coarse inverse" $OUT/sb.txt
  done
  ;;
gal6)
  timeout 330 $B/tests/test_gpu > "$OUT/test_gpu.log" 2>&1; echo "test_gpu (all): exit $? $(grep -E 'test cases' "$OUT/test_gpu.log")"
  grep -B5 -A25 -E "ERROR|FAILED" "$OUT/test_gpu.log" | head -60
  CGS_GPU_TESTS_LIGHT=1 timeout 100 env CGSOLVE_NO_DEVICE_CACHE=1 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/test_gpu -tc="GPU AMG: a hierarchy without host copies*,GPU AMG: a solver's set_values*" > "$OUT/memcheck.log" 2>&1; echo "memcheck AMG without host copies + solver set_values: exit $? $(grep 'ERROR SUMMARY' "$OUT/memcheck.log" | tail -1)"
  for m in gen:poisson2d:3000 gen:poisson3d:200; do
    for p in amg jacobi amg jacobi amg jacobi amg jacobi amg jacobi amg; do timeout 60 $B/app/cgsolve --matrix $m --device gpu --precond $p --tol 1e-8 --report $OUT/r.json --quiet; python3 -c "
import json;d=json.load(open('$OUT/r.json'));t=d['times'];print('$m $p its', d['result'].get('iterations'), 'tts', round(sum(t[k] for k in ('reorder_s','build_format_s','preconditioner_s','upload_s','solve_s')),3), 'precond', round(t['preconditioner_s'],3), 'upload', round(t['upload_s'],3), 'solve', round(t['solve_s'],3), 'cx', d['preconditioner'].get('operator_complexity'))"; done
    timeout 120 $B/bench/setupbench --device gpu --runs 5 --precond amg --phases $m > $OUT/sb.txt 2>&1; echo "setupbench $m: $?"; grep -E "amg  |galerkin|download|aggregation|strength|spectra|prolongator|restriction|coarse inverse" $OUT/sb.txt
  done
  tar czf $OUT/logs.tgz -C $OUT test_gpu.log memcheck.log
  ;;
gal7)
  timeout 330 $B/tests/test_gpu > "$OUT/test_gpu.log" 2>&1; echo "test_gpu (all): exit $? $(grep -E 'test cases' "$OUT/test_gpu.log")"
  grep -B5 -A25 -E "ERROR|FAILED" "$OUT/test_gpu.log" | head -60
  CGS_GPU_TESTS_LIGHT=1 timeout 150 env CGSOLVE_NO_DEVICE_CACHE=1 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/test_gpu -tc="GPU AMG*" > "$OUT/memcheck.log" 2>&1; echo "memcheck GPU AMG*: exit $? $(grep 'ERROR SUMMARY' "$OUT/memcheck.log" | tail -1)"
  for p in amg jacobi amg jacobi amg; do timeout 60 $B/app/cgsolve --matrix gen:poisson2d:3000 --device gpu --precond $p --tol 1e-8 --report $OUT/r.json --quiet; python3 -c "
import json;d=json.load(open('$OUT/r.json'));t=d['times'];print('poisson2d:3000 $p its', d['result'].get('iterations'), 'tts', round(sum(t[k] for k in ('reorder_s','build_format_s','preconditioner_s','upload_s','solve_s')),3))"; done
  tar czf $OUT/logs.tgz -C $OUT test_gpu.log memcheck.log
  ;;
s11a)
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc
  for m in gen:poisson2d:3000 gen:poisson3d:200; do
    for p in amg jacobi amg jacobi amg jacobi amg; do timeout 60 $B/app/cgsolve --matrix $m --device gpu --precond $p --tol 1e-8 --report $OUT/r.json --quiet; python3 -c "
import json;d=json.load(open('$OUT/r.json'));t=d['times'];print('$m $p its', d['result'].get('iterations'), 'tts', round(sum(t[k] for k in ('reorder_s','build_format_s','preconditioner_s','upload_s','solve_s')),3), {k: round(v,4) for k,v in t.items() if v > 0.0005})"; done
    timeout 120 $B/bench/setupbench --device gpu --runs 5 --precond amg --phases $m > $OUT/sb.txt 2>&1; echo "setupbench $m: $?"; grep -v "^$" $OUT/sb.txt | tail -40
  done
  ;;
s11b)
  which nsys ncu | head -3
  for m in gen:poisson2d:3000; do
    for e in LAZY EAGER LAZY EAGER LAZY EAGER; do for p in amg; do CUDA_MODULE_LOADING=$e timeout 60 $B/app/cgsolve --matrix $m --device gpu --precond $p --tol 1e-8 --report $OUT/r.json --quiet; python3 -c "
import json;d=json.load(open('$OUT/r.json'));t=d['times'];ph=d['preconditioner'].get('phases_s') or {};print('$m $p $e its', d['result'].get('iterations'), 'tts', round(sum(t[k] for k in ('reorder_s','build_format_s','preconditioner_s','upload_s','solve_s')),3), {k: round(v,4) for k,v in t.items() if v > 0.0005}, {k: round(v,4) for k,v in (ph.items() if isinstance(ph,dict) else [])})"; done; done
  done
  if command -v nsys >/dev/null; then
    timeout 120 nsys profile -t cuda,osrt --stats=false -o $OUT/amg2d $B/app/cgsolve --matrix gen:poisson2d:3000 --device gpu --precond amg --tol 1e-8 --quiet > $OUT/nsys.log 2>&1; echo "nsys: $?"
    nsys stats -r cuda_api_sum,cuda_gpu_kern_sum,cuda_gpu_mem_time_sum $OUT/amg2d.nsys-rep 2>/dev/null | head -90
  fi
  ;;
s11c)
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  timeout 200 $B/tests/test_gpu -tc='GPU AMG*' > "$OUT/test_amg.log" 2>&1; echo "test_gpu GPU AMG*: exit $? $(grep -E 'test cases' "$OUT/test_amg.log")"
  grep -B5 -A25 -E "ERROR|FAILED" "$OUT/test_amg.log" | head -40
  for m in gen:poisson2d:3000 gen:poisson3d:200; do
    for p in amg jacobi amg jacobi amg jacobi amg jacobi amg jacobi amg cusp; do pp=$p; e=""; [ $p = cusp ] && { pp=amg; e=cusparse; }; CGSOLVE_AMG_GALERKIN=${e:-kernels} timeout 60 $B/app/cgsolve --matrix $m --device gpu --precond $pp --tol 1e-8 --report $OUT/r.json --quiet; python3 -c "
import json;d=json.load(open('$OUT/r.json'));t=d['times'];print('$m $p its', d['result'].get('iterations'), 'tts', round(sum(t[k] for k in ('reorder_s','build_format_s','preconditioner_s','upload_s','solve_s')),3), 'precond', round(t['preconditioner_s'],3), 'upload', round(t['upload_s'],3), 'solve', round(t['solve_s'],3))"; done
    timeout 120 $B/bench/setupbench --device gpu --runs 5 --precond amg --phases $m > $OUT/sb.txt 2>&1; echo "setupbench $m: $?"; grep -E "amg  |galerkin|download|aggregation|strength|spectra" $OUT/sb.txt
  done
  tar czf $OUT/logs.tgz -C $OUT test_amg.log
  ;;
s11d)
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  timeout 120 $B/tests/test_gpu -tc="GPU AMG: the greedy's*" > "$OUT/test_greedy.log" 2>&1; echo "test_gpu greedy: exit $? $(grep -E 'test cases' "$OUT/test_greedy.log")"
  grep -B5 -A25 -E "ERROR|FAILED" "$OUT/test_greedy.log" | head -50
  timeout 200 $B/tests/test_gpu -tc='GPU AMG*' > "$OUT/test_amg.log" 2>&1; echo "test_gpu GPU AMG*: exit $? $(grep -E 'test cases' "$OUT/test_amg.log")"
  grep -B5 -A25 -E "ERROR|FAILED" "$OUT/test_amg.log" | head -50
  CGS_GPU_TESTS_LIGHT=1 timeout 150 env CGSOLVE_NO_DEVICE_CACHE=1 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/test_gpu -tc="GPU AMG: the greedy's*" > "$OUT/memcheck.log" 2>&1; echo "memcheck greedy: exit $? $(grep 'ERROR SUMMARY' "$OUT/memcheck.log" | tail -1)"
  for m in gen:poisson2d:3000 gen:poisson3d:200; do
    for p in amg jacobi amg:aggregation=host amg jacobi amg:aggregation=host amg jacobi amg; do timeout 60 $B/app/cgsolve --matrix $m --device gpu --precond $p --tol 1e-8 --report $OUT/r.json --quiet; python3 -c "
import json;d=json.load(open('$OUT/r.json'));t=d['times'];print('$m $p its', d['result'].get('iterations'), 'tts', round(sum(t[k] for k in ('reorder_s','build_format_s','preconditioner_s','upload_s','solve_s')),3), 'precond', round(t['preconditioner_s'],3), 'upload', round(t['upload_s'],3), 'solve', round(t['solve_s'],3))"; done
    for p in amg amg:aggregation=host; do timeout 120 $B/bench/setupbench --device gpu --runs 5 --precond $p --phases $m > $OUT/sb.txt 2>&1; echo "setupbench $m $p: $?"; grep -E "amg|galerkin|download|aggregation|strength|spectra|level" $OUT/sb.txt; done
  done
  tar czf $OUT/logs.tgz -C $OUT test_amg.log test_greedy.log memcheck.log
  ;;
s11e)
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  timeout 330 $B/tests/test_gpu > "$OUT/test_gpu.log" 2>&1; echo "test_gpu (all): exit $? $(grep -E 'test cases' "$OUT/test_gpu.log")"
  grep -B5 -A25 -E "ERROR|FAILED" "$OUT/test_gpu.log" | head -50
  CGS_GPU_TESTS_LIGHT=1 timeout 150 env CGSOLVE_NO_DEVICE_CACHE=1 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/test_gpu -tc="GPU AMG: the finest*,GPU AMG: a solver's*,GPU AMG: the device's R A P*" > "$OUT/memcheck.log" 2>&1; echo "memcheck AMG ahead/solver/RAP: exit $? $(grep 'ERROR SUMMARY' "$OUT/memcheck.log" | tail -1)"
  for m in gen:poisson2d:3000 gen:poisson3d:200; do
    for p in amg jacobi amg jacobi amg jacobi amg jacobi amg jacobi amg; do timeout 60 $B/app/cgsolve --matrix $m --device gpu --precond $p --tol 1e-8 --report $OUT/r.json --quiet; python3 -c "
import json;d=json.load(open('$OUT/r.json'));t=d['times'];ph=d['preconditioner'].get('phases_s') or {};print('$m $p its', d['result'].get('iterations'), 'tts', round(sum(t[k] for k in ('reorder_s','build_format_s','preconditioner_s','upload_s','solve_s')),3), 'precond', round(t['preconditioner_s'],3), 'upload', round(t['upload_s'],3), 'solve', round(t['solve_s'],3), 'cx', d['preconditioner'].get('operator_complexity'))"; done
  done
  timeout 60 $B/app/cgsolve --matrix gen:poisson2d:3000 --device gpu --precond amg --tol 1e-8 > $OUT/summary2d.txt 2>&1; grep -iE "aggregation|strength|level|set-up" $OUT/summary2d.txt | head -20
  tar czf $OUT/logs.tgz -C $OUT test_gpu.log memcheck.log summary2d.txt
  ;;
s11f)
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  timeout 330 $B/tests/test_gpu > "$OUT/test_gpu.log" 2>&1; echo "test_gpu (all): exit $? $(grep -E 'test cases' "$OUT/test_gpu.log")"
  grep -B5 -A25 -E "ERROR|FAILED" "$OUT/test_gpu.log" | head -50
  CGS_GPU_TESTS_LIGHT=1 timeout 200 env CGSOLVE_NO_DEVICE_CACHE=1 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/test_gpu -tc="GPU AMG*" > "$OUT/memcheck.log" 2>&1; echo "memcheck GPU AMG*: exit $? $(grep 'ERROR SUMMARY' "$OUT/memcheck.log" | tail -1)"
  for m in gen:poisson2d:3000 gen:poisson3d:200; do
    for p in amg jacobi amg jacobi amg jacobi amg jacobi amg jacobi amg jacobi amg; do timeout 60 $B/app/cgsolve --matrix $m --device gpu --precond $p --tol 1e-8 --report $OUT/r.json --quiet; python3 -c "
import json;d=json.load(open('$OUT/r.json'));t=d['times'];print('$m $p its', d['result'].get('iterations'), 'tts', round(sum(t[k] for k in ('reorder_s','build_format_s','preconditioner_s','upload_s','solve_s')),3), 'precond', round(t['preconditioner_s'],3), 'upload', round(t['upload_s'],3), 'solve', round(t['solve_s'],3))"; done
    timeout 120 $B/bench/setupbench --device gpu --runs 5 --precond amg --phases $m > $OUT/sb.txt 2>&1; echo "setupbench $m: $?"; grep -E "amg  |galerkin|download|aggregation|strength|spectra|prolongator|restriction|inverse" $OUT/sb.txt
  done
  tar czf $OUT/logs.tgz -C $OUT test_gpu.log memcheck.log
  ;;
s11g)
  for m in gen:poisson2d:3000 gen:poisson3d:200; do
    for p in amg jacobi amg; do CGSOLVE_DEVICE_TALLY=1 timeout 60 $B/app/cgsolve --matrix $m --device gpu --precond $p --tol 1e-8 --report $OUT/r.json --quiet 2> $OUT/tally.txt; python3 -c "
import json;d=json.load(open('$OUT/r.json'));t=d['times'];print('$m $p its', d['result'].get('iterations'), 'tts', round(sum(t[k] for k in ('reorder_s','build_format_s','preconditioner_s','upload_s','solve_s')),3), 'precond', round(t['preconditioner_s'],3), 'upload', round(t['upload_s'],3), 'solve', round(t['solve_s'],3))"; cat $OUT/tally.txt | grep tally; done
    for r in 1 2; do timeout 120 $B/bench/setupbench --device gpu --runs 1 --precond amg --phases $m > $OUT/sb.txt 2>&1; echo "setupbench cold $m: $?"; grep -E "amg  |galerkin|download|aggregation|strength|spectra|prolongator|restriction|inverse|arrays" $OUT/sb.txt; done
  done
  ;;
s11h)
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  timeout 330 $B/tests/test_gpu > "$OUT/test_gpu.log" 2>&1; echo "test_gpu (all, pool): exit $? $(grep -E 'test cases' "$OUT/test_gpu.log")"
  grep -B5 -A25 -E "ERROR|FAILED" "$OUT/test_gpu.log" | head -40
  for np in 1 2; do timeout 200 mpirun -np $np --bind-to none -x LD_LIBRARY_PATH $B/tests/test_gpu_distributed > "$OUT/dist$np.log" 2>&1; echo "test_gpu_distributed -np $np: exit $? $(grep -E 'test cases' "$OUT/dist$np.log" | tail -1 | xargs)"; done
  CGS_GPU_TESTS_LIGHT=1 timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/test_gpu -tc="GPU AMG: a solver's*,GPU AMG: on the backend*,GPU ic0*,GPU fsai*,Cluster CG with the other*" > "$OUT/memcheck.log" 2>&1; echo "memcheck (pool) AMG solver/lent, ic0, fsai, cluster: exit $? $(grep 'ERROR SUMMARY' "$OUT/memcheck.log" | tail -1)"
  for m in gen:poisson2d:3000 gen:poisson3d:200; do
    for pp in amg:1 amg:0 jacobi:1 amg:1 amg:0 jacobi:0 amg:1 amg:0 jacobi:1 amg:1 amg:0 jacobi:0 amg:1 amg:0; do p=${pp%%:*}; e=${pp#*:}; CGSOLVE_DEVICE_POOL=$e timeout 60 $B/app/cgsolve --matrix $m --device gpu --precond $p --tol 1e-8 --report $OUT/r.json --quiet; python3 -c "
import json;d=json.load(open('$OUT/r.json'));t=d['times'];print('$m $p pool=$e its', d['result'].get('iterations'), 'tts', round(sum(t[k] for k in ('reorder_s','build_format_s','preconditioner_s','upload_s','solve_s')),3), 'precond', round(t['preconditioner_s'],3), 'upload', round(t['upload_s'],3), 'solve', round(t['solve_s'],3))"; done
  done
  CGSOLVE_DEVICE_TALLY=1 timeout 60 $B/app/cgsolve --matrix gen:poisson2d:3000 --device gpu --precond amg --tol 1e-8 --quiet 2>&1 | grep tally
  for e in 1 0; do CGSOLVE_DEVICE_POOL=$e timeout 120 $B/bench/setupbench --device gpu --runs 5 --precond amg gen:poisson2d:3000 2>&1 | grep -E "amg  "; done
  tar czf $OUT/logs.tgz -C $OUT test_gpu.log memcheck.log dist1.log dist2.log
  ;;
gal8)
  timeout 200 $B/tests/test_gpu -tc='GPU AMG*' > "$OUT/test_amg.log" 2>&1; echo "test_gpu GPU AMG*: exit $? $(grep -E 'test cases' "$OUT/test_amg.log")"
  grep -B5 -A25 -E "ERROR|FAILED" "$OUT/test_amg.log" | head -40
  CGS_GPU_TESTS_LIGHT=1 timeout 150 env CGSOLVE_NO_DEVICE_CACHE=1 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/test_gpu -tc="GPU AMG: strength and MIS(2)*,GPU AMG: aggregation=device*,GPU AMG: a hierarchy without host copies*" > "$OUT/memcheck.log" 2>&1; echo "memcheck MIS(2) + without host copies: exit $? $(grep 'ERROR SUMMARY' "$OUT/memcheck.log" | tail -1)"
  for p in amg amg:aggregation=device; do timeout 60 $B/app/cgsolve --matrix gen:poisson2d:3000 --device gpu --precond $p --tol 1e-8 --report $OUT/r.json --quiet; python3 -c "
import json;d=json.load(open('$OUT/r.json'));t=d['times'];print('poisson2d:3000 $p its', d['result'].get('iterations'), 'tts', round(sum(t[k] for k in ('reorder_s','build_format_s','preconditioner_s','upload_s','solve_s')),3))"; done
  ;;
rev)
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  timeout 330 $B/tests/test_gpu > "$OUT/test_gpu.log" 2>&1; echo "test_gpu (all): exit $? $(grep -E 'test cases' "$OUT/test_gpu.log")"
  grep -B5 -A25 -E "ERROR|FAILED" "$OUT/test_gpu.log" | head -40
  CGS_GPU_TESTS_LIGHT=1 timeout 200 env CGSOLVE_NO_DEVICE_CACHE=1 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/test_gpu -tc="GPU AMG*,GPU ic0*,GPU fsai*" > "$OUT/memcheck.log" 2>&1; echo "memcheck GPU AMG*, ic0*, fsai*: exit $? $(grep 'ERROR SUMMARY' "$OUT/memcheck.log" | tail -1)"
  for p in amg jacobi amg jacobi amg; do timeout 60 $B/app/cgsolve --matrix gen:poisson2d:3000 --device gpu --precond $p --tol 1e-8 --report $OUT/r.json --quiet; python3 -c "
import json;d=json.load(open('$OUT/r.json'));t=d['times'];print('poisson2d:3000 $p its', d['result'].get('iterations'), 'tts', round(sum(t[k] for k in ('reorder_s','build_format_s','preconditioner_s','upload_s','solve_s')),3))"; done
  tar czf $OUT/logs.tgz -C $OUT test_gpu.log memcheck.log
  ;;
gal)
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  timeout 200 $B/tests/test_gpu -tc='GPU AMG*' > "$OUT/test_amg.log" 2>&1; echo "test_gpu GPU AMG*: exit $? $(grep -E 'test cases' "$OUT/test_amg.log")"
  grep -B5 -A25 -E "ERROR|FAILED" "$OUT/test_amg.log" | head -80
  CGS_GPU_TESTS_LIGHT=1 timeout 100 env CGSOLVE_NO_DEVICE_CACHE=1 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/test_gpu -tc="GPU AMG: the device's R A P*,GPU AMG: the GPU set-up's hierarchy*" > "$OUT/memcheck.log" 2>&1; echo "memcheck R A P + hierarchy: exit $? $(grep 'ERROR SUMMARY' "$OUT/memcheck.log" | tail -1)"
  timeout 100 compute-sanitizer --tool racecheck --error-exitcode 9 $B/tests/test_gpu -tc="GPU AMG: the device's R A P*" > "$OUT/racecheck.log" 2>&1; echo "racecheck R A P: exit $? $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' "$OUT/racecheck.log" | tail -1)"
  for m in gen:poisson2d:3000 gen:poisson3d:200; do
    for r in 1 2 3; do for g in kernels cusparse; do CGSOLVE_AMG_GALERKIN=$g timeout 60 $B/app/cgsolve --matrix $m --device gpu --precond amg --tol 1e-8 --report $OUT/r.json --quiet; python3 -c "
import json;d=json.load(open('$OUT/r.json'));t=d['times'];ph=d['preconditioner'].get('phases_s') or {};print('$m amg galerkin=$g its', d['result'].get('iterations'), 'setup', round(sum(t[k] for k in ('reorder_s','build_format_s','preconditioner_s','upload_s')),3), 'precond', round(t['preconditioner_s'],3), 'solve', round(t['solve_s'],3), 'tts', round(sum(t[k] for k in ('reorder_s','build_format_s','preconditioner_s','upload_s','solve_s')),3), {k: round(v,3) for k,v in (ph.items() if isinstance(ph,dict) else [])})"; done; done
    timeout 60 $B/app/cgsolve --matrix $m --device gpu --precond jacobi --tol 1e-8 --report $OUT/r.json --quiet; python3 -c "
import json;d=json.load(open('$OUT/r.json'));t=d['times'];print('$m jacobi its', d['result'].get('iterations'), 'setup', round(sum(t[k] for k in ('reorder_s','build_format_s','preconditioner_s','upload_s')),3), 'precond', round(t['preconditioner_s'],3), 'solve', round(t['solve_s'],3), 'tts', round(sum(t[k] for k in ('reorder_s','build_format_s','preconditioner_s','upload_s','solve_s')),3))"
  done
  for m in gen:poisson2d:3000 gen:poisson3d:200; do for g in kernels cusparse; do CGSOLVE_AMG_GALERKIN=$g timeout 120 $B/bench/setupbench --device gpu --runs 5 --precond amg --phases $m > $OUT/sb-$g-${m#gen:}.txt 2>&1; echo "setupbench $m galerkin=$g: $?"; grep -E "amg  |galerkin|download|aggregation|strength|spectra" $OUT/sb-$g-${m#gen:}.txt; done; done
  tar czf $OUT/logs.tgz -C $OUT test_amg.log memcheck.log racecheck.log sb-*.txt 2>/dev/null
  ;;
amgh)
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  SKIP_BUILD=1 BUILD=$B OUT=$OUT/amg timeout 420 bash scripts/amg-setup-gpu-check.sh .gpu-data > $OUT/amg.txt 2>&1; echo "amg check: exit $?"; tail -60 $OUT/amg.txt
  mv $OUT/amg/amg-setup-logs.tgz $OUT/ 2>/dev/null; rm -rf $OUT/amg
  CGS_GPU_TESTS_LIGHT=1 timeout 100 env CGSOLVE_NO_DEVICE_CACHE=1 compute-sanitizer --tool racecheck --error-exitcode 9 $B/tests/test_gpu -tc='Cluster CG with chol*' > "$OUT/racecheck.log" 2>&1; echo "racecheck cluster chol: exit $? $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' "$OUT/racecheck.log" | tail -1)"
  ;;
autoc)
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  timeout 150 $B/tests/test_gpu -tc='GPU --precond auto*,GPU preconditioners*' > "$OUT/test_auto.log" 2>&1; echo "test_gpu auto+precond: exit $? $(grep -E 'test cases' "$OUT/test_auto.log")"
  grep -B5 -A15 -E "ERROR|FAILED" "$OUT/test_auto.log" | head -40
  SKIP_BUILD=1 BUILD=$B OUT=$OUT/auto RUNS=3 timeout 400 scripts/auto-gpu-check.sh .gpu-data > $OUT/auto.txt 2>&1; echo "auto check: exit $?"; tail -45 $OUT/auto.txt
  tar czf $OUT/auto-logs.tgz -C $OUT auto 2>/dev/null; rm -rf $OUT/auto
  ;;
finA)
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  timeout 360 $B/tests/test_gpu > "$OUT/test_gpu.log" 2>&1; echo "test_gpu (all): exit $? $(grep -E 'test cases' "$OUT/test_gpu.log")"
  grep -B5 -A15 -E "ERROR|FAILED" "$OUT/test_gpu.log" | head -60
  CGS_GPU_TESTS_LIGHT=1 timeout 150 env CGSOLVE_NO_DEVICE_CACHE=1 compute-sanitizer --tool racecheck --error-exitcode 9 $B/tests/test_gpu -tc='Cluster CG with chol*' > "$OUT/racecheck.log" 2>&1; echo "racecheck cluster chol: exit $? $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' "$OUT/racecheck.log" | tail -1)"
  tar czf $OUT/logs.tgz -C $OUT test_gpu.log racecheck.log 2>/dev/null
  ;;
finB)
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  CGS_GPU_TESTS_LIGHT=1 timeout 100 env CGSOLVE_NO_DEVICE_CACHE=1 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/test_gpu -tc='Cluster CG with chol*,GPU --precond auto: the first*' > "$OUT/memcheck-chol.log" 2>&1; echo "memcheck cluster chol + auto: exit $? $(grep 'ERROR SUMMARY' "$OUT/memcheck-chol.log" | tail -1)"
  SKIP_BUILD=1 BUILD=$B OUT=$OUT/ic0 timeout 330 scripts/ic0-setup-gpu-check.sh .gpu-data > $OUT/ic0.txt 2>&1; echo "ic0 check: exit $?"; tail -45 $OUT/ic0.txt
  tar czf $OUT/ic0-logs.tgz -C $OUT ic0 2>/dev/null; rm -rf $OUT/ic0
  SKIP_BUILD=1 BUILD=$B OUT=$OUT/auto RUNS=3 timeout 200 scripts/auto-gpu-check.sh .gpu-data > $OUT/auto.txt 2>&1; echo "auto check: exit $?"; tail -18 $OUT/auto.txt
  tar czf $OUT/auto-logs.tgz -C $OUT auto 2>/dev/null; rm -rf $OUT/auto
  ;;
finC)
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  SKIP_BUILD=1 BUILD=$B OUT=$OUT/auto RUNS=5 timeout 300 scripts/auto-gpu-check.sh .gpu-data > $OUT/auto.txt 2>&1; echo "auto check: exit $?"; tail -18 $OUT/auto.txt
  tar czf $OUT/auto-logs.tgz -C $OUT auto 2>/dev/null; rm -rf $OUT/auto
  ;;
fin)
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  timeout 85 $B/tests/test_gpu -tc='GPU AMG*,GPU fsai*,GPU --precond auto*,GPU SpMV: the HLL kernels*,GPU HLL*' > "$OUT/test_gpu.log" 2>&1; echo "test_gpu (AMG, fsai, auto, HLL): exit $? $(grep -E 'test cases' "$OUT/test_gpu.log")"
  grep -B4 -A12 -E "ERROR|FAILED" "$OUT/test_gpu.log" | head -40
  timeout 40 $B/bench/setupbench --device gpu --runs 3 --phases gen:poisson2d:3000 > $OUT/setupbench.txt 2>&1; echo "setupbench amg poisson2d:3000: $?"; tail -22 $OUT/setupbench.txt
  timeout 40 $B/bench/spmvbench gen:powerlaw:2000000 --devices gpu --sorted no --runs 15 --gpu-kernels csr:cusparse,csr:stream4,csr:stream4-plain,csr:stream4-keepx,hll:thread@sigma=0,hll:thread --out-dir $OUT/sp > $OUT/sp.log 2>&1; echo "spmvbench: $?"; python3 - $OUT/sp/spmv.csv <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print('  %-34s %10s us   vs cuSPARSE CSR %s' % (r.get('backend'), r.get('median_us'), r.get('speedup_vs_ref', '')))
PY
  rm -rf $OUT/sp
  ONLY='Exnet|ky2|Richmond|Wolf' RUNS=3 PRECONDS="fsai:2 auto" timeout 40 scripts/precond-gpu-study.sh $B .gpu-data > $OUT/study.txt 2>&1; echo "study: $?"; cat $OUT/study.txt
  ;;
intA)
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  SKIP_BUILD=1 BUILD=$B OUT=$OUT timeout 400 scripts/fsai-setup-gpu-check.sh .gpu-data > $OUT/fsai.txt 2>&1; echo "fsai script: $?"; tail -40 $OUT/fsai.txt
  for r in 1 2 3; do timeout 60 $B/app/cgsolve --matrix gen:poisson2d:3000 --device gpu --precond ic0 --max-iters 1 --report $OUT/ic0-$r.json --quiet >/dev/null 2>&1; python3 -c "
import json;d=json.load(open('$OUT/ic0-$r.json'));t=d['times'];pr=d['preconditioner']
print('poisson2d:3000 gpu ic0 set-up', round(sum(t[k] for k in ('reorder_s','build_format_s','preconditioner_s','upload_s')),3), 'reorder', round(t['reorder_s'],3), 'precond', round(t['preconditioner_s'],3), pr.get('phases_s'))"; done
  ONLY='Exnet|ky2|Richmond|Wolf|BWSN' RUNS=3 PRECONDS="fsai:2 ic0 auto" timeout 200 scripts/precond-gpu-study.sh $B .gpu-data > $OUT/study-auto.txt 2>&1; echo "study auto (systems): $?"; cat $OUT/study-auto.txt
  RUNS=3 CPU=' ' GEN="$(ls data/matrices/*.mtx | tr '\n' ' ')" PRECONDS="jacobi fsai:2 ic0 cheb:8 bjacobi:64 auto" timeout 200 scripts/precond-gpu-study.sh $B none > $OUT/study-auto-data.txt 2>&1; echo "study auto (data/matrices): $?"; cat $OUT/study-auto-data.txt
  ;;
l2)
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  for on in 0 1 0 1; do
    CGSOLVE_L2_PERSIST_X=$on timeout 150 $B/bench/spmvbench gen:powerlaw:2000000 --devices gpu --sorted no --runs 30 --gpu-kernels csr:cusparse,csr:stream --out-dir $OUT/sp$on > $OUT/sp$on.log 2>&1
    echo "spmvbench persist=$on: $?"; python3 - $OUT/sp$on/spmv.csv <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print('  %-28s %10s us   vs reference %s' % (r.get('backend'), r.get('median_us'), r.get('speedup_vs_ref', '')))
PY
    CGSOLVE_L2_PERSIST_X=$on timeout 60 $B/app/cgsolve --matrix gen:powerlaw:2000000 --device gpu --precond jacobi --tol 0 --max-iters 200 --report $OUT/cg$on.json --quiet; python3 -c "
import json;d=json.load(open('$OUT/cg$on.json'));t=d['times'];print('  cgsolve default persist=$on', d['plan'].get('kernel'), 'us/it', round(1e6*t['solve_s']/d['result']['iterations'],1), 'spmv med us', round(1e6*d['spmv']['median_s'],1))" 2>&1 | tail -1
    rm -rf $OUT/sp$on
  done
  ;;
lean)
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  timeout 200 $B/tests/test_gpu -tc='Cluster CG*' > "$OUT/test_cluster.log" 2>&1; echo "test_gpu Cluster CG*: exit $? $(grep -E 'test cases' "$OUT/test_cluster.log")"
  grep -B5 -A20 -E "ERROR|FAILED" "$OUT/test_cluster.log" | head -50
  CGS_GPU_TESTS_LIGHT=1 timeout 150 env CGSOLVE_NO_DEVICE_CACHE=1 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/test_gpu -tc='Cluster CG: a batch in the lean*' > "$OUT/memcheck-lean.log" 2>&1; echo "memcheck lean: exit $? $(grep 'ERROR SUMMARY' "$OUT/memcheck-lean.log" | tail -1)"
  D=.gpu-data
  for lean in 1 0; do CGSOLVE_CLUSTER_LEAN=$lean timeout 120 $B/bench/batchbench $D/BWSN_Network_2_step10.mtx.gz $D/Exnet_EXN_step3.mtx.gz --batch 64 --repeats 5 --max-iters 20000 > $OUT/batch-lean$lean.txt 2>&1; echo "batchbench lean=$lean: $?"; tail -5 $OUT/batch-lean$lean.txt; done
  CGSOLVE_CLUSTER_LEAN=1 timeout 120 $B/bench/batchbench $D/BWSN_Network_2_step10.mtx.gz --batch 128 --repeats 3 --max-iters 20000 2>&1 | tail -3
  ;;
sweep)
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  timeout 200 $B/tests/test_gpu -tc='Cluster CG with*' > "$OUT/test_cluster_program.log" 2>&1; echo "test_gpu cluster programs: exit $? $(grep -E 'test cases' "$OUT/test_cluster_program.log")"
  grep -B5 -A20 -E "ERROR|FAILED" "$OUT/test_cluster_program.log" | head -60
  CGS_GPU_TESTS_LIGHT=1 timeout 150 env CGSOLVE_NO_DEVICE_CACHE=1 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/test_gpu -tc='Cluster CG with ic0: the sweeps*' > "$OUT/memcheck.log" 2>&1; echo "memcheck sweeps: exit $? $(grep 'ERROR SUMMARY' "$OUT/memcheck.log" | tail -1)"
  ONLY='Exnet|ky2|Richmond|Wolf' RUNS=5 PRECONDS="fsai:2 ic0 auto" timeout 200 scripts/precond-gpu-study.sh $B .gpu-data > $OUT/study-sweeps.txt 2>&1; echo "study (sweeps): $?"; cat $OUT/study-sweeps.txt | tail -25
  CGSOLVE_CLUSTER_SWEEPS=counter ONLY='Exnet|ky2|Richmond|Wolf' RUNS=5 CPU=' ' PRECONDS="ic0" timeout 120 scripts/precond-gpu-study.sh $B .gpu-data > $OUT/study-counter.txt 2>&1; echo "study (sweeps, counter): $?"; tail -4 $OUT/study-counter.txt
  CGSOLVE_CLUSTER_SWEEPS=0 ONLY='Exnet|ky2|Richmond|Wolf' RUNS=5 CPU=' ' PRECONDS="ic0" timeout 120 scripts/precond-gpu-study.sh $B .gpu-data > $OUT/study-levels.txt 2>&1; echo "study (levels one by one): $?"; cat $OUT/study-levels.txt | tail -12
  ;;
sb)
  nvidia-smi --query-gpu=name --format=csv,noheader
  INP=.gpu-data/shared/data/networks/BWSN_Network_2.inp
  python3 - "$INP" 3000 > $OUT/el.txt <<'PY'
import sys
sec=None; out=[]
for line in open(sys.argv[1], errors='replace'):
    t=line.split(';')[0].strip()
    if not t: continue
    if t.startswith('['): sec=t.upper(); continue
    if sec=='[JUNCTIONS]': out.append(t.split()[0])
print('\n'.join(out[:int(sys.argv[2])]))
PY
  wc -l < $OUT/el.txt
  for nb in 512 1024 2048 3000; do
    timeout 100 $B/app/netsolve --network $INP --study fireflow --elements $OUT/el.txt --device gpu --study-batch $nb --report $OUT/sb-$nb.json > $OUT/sb-$nb.log 2>&1; echo "batch $nb: exit $?"
    grep -E "^time|^batches|^solver" $OUT/sb-$nb.log | cut -c1-260
  done
  timeout 60 $B/app/netsolve --network $INP --study fireflow --elements $OUT/el.txt --device cpu --report $OUT/sb-cpu.json > $OUT/sb-cpu.log 2>&1; echo "cpu: exit $?"; grep -E "^time" $OUT/sb-cpu.log | cut -c1-260
  ;;
tgpu)
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  timeout 300 $B/tests/test_gpu > "$OUT/test_gpu.log" 2>&1; echo "test_gpu (all): exit $? $(grep -E 'test cases' "$OUT/test_gpu.log")"
  grep -B5 -A15 -E "ERROR|FAILED" "$OUT/test_gpu.log" | head -60
  CGS_GPU_TESTS_LIGHT=1 timeout 200 env CGSOLVE_NO_DEVICE_CACHE=1 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/test_gpu -tc='GPU AMG*,GPU batch*,GPU set-up*,Cluster CG: the persistent*' > "$OUT/memcheck.log" 2>&1; echo "memcheck AMG+batch Cholesky+cluster: exit $? $(grep 'ERROR SUMMARY' "$OUT/memcheck.log" | tail -1)"
  ;;
final2)
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  timeout 300 $B/tests/test_gpu > "$OUT/test_gpu.log" 2>&1; echo "test_gpu (all): exit $? $(grep -E 'test cases' "$OUT/test_gpu.log")"
  grep -B5 -A15 -E "ERROR|FAILED" "$OUT/test_gpu.log" | head -40
  D=.gpu-data
  timeout 120 $B/bench/cgbench gen:poisson2d:122 --devices gpu --gpu-kernels csr:scalar --gpu-loops persistent,cluster --precond none --iterations 2000 --repeats 3 --no-auto --out-dir $OUT/cg1 > $OUT/cg-none.txt 2>&1; echo "cgbench none: $?"; grep -E 'poisson|cuSPARSE' $OUT/cg-none.txt | head -6
  timeout 150 $B/bench/cgbench $D/BWSN_Network_2_step10.mtx.gz $D/Exnet_EXN_step3.mtx.gz --devices gpu --gpu-kernels csr:scalar --gpu-loops persistent,cluster --precond jacobi --iterations 2000 --repeats 3 --no-auto --out-dir $OUT/cg2 > $OUT/cg-jac.txt 2>&1; echo "cgbench jacobi: $?"; grep -E 'BWSN|Exnet' $OUT/cg-jac.txt | head -8
  rm -rf $OUT/cg1 $OUT/cg2
  timeout 90 $B/bench/batchbench $D/BWSN_Network_2_step10.mtx.gz --batch 64 --repeats 3 --max-iters 20000 2>&1 | tail -3
  for p in amg jacobi; do timeout 60 $B/app/cgsolve --matrix gen:poisson2d:3000 --device gpu --precond $p --tol 1e-8 --report $OUT/r-$p.json --quiet; python3 -c "
import json;d=json.load(open('$OUT/r-$p.json'));t=d['times'];print('poisson2d:3000 $p', 'its', d['result'].get('iterations'), 'setup', round(sum(t[k] for k in ('reorder_s','build_format_s','preconditioner_s','upload_s')),3), 'solve', round(t['solve_s'],3))"; done
  for p in amg jacobi; do timeout 60 $B/app/cgsolve --matrix gen:poisson3d:200 --device gpu --precond $p --tol 1e-8 --report $OUT/r3-$p.json --quiet; python3 -c "
import json;d=json.load(open('$OUT/r3-$p.json'));t=d['times'];print('poisson3d:200 $p', 'its', d['result'].get('iterations'), 'setup', round(sum(t[k] for k in ('reorder_s','build_format_s','preconditioner_s','upload_s')),3), 'solve', round(t['solve_s'],3))"; done
  ;;
integC)
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  timeout 300 $B/tests/test_gpu > "$OUT/test_gpu.log" 2>&1; echo "test_gpu (all): exit $? $(grep -E 'test cases' "$OUT/test_gpu.log")"
  grep -B5 -A15 -E "ERROR|FAILED" "$OUT/test_gpu.log" | head -60
  SKIP_BUILD=1 BUILD=$B OUT=$OUT/ps timeout 330 scripts/precond-setup-gpu-check.sh > $OUT/ps.txt 2>&1; echo "precond-setup: exit $?"; tail -40 $OUT/ps.txt
  tar czf $OUT/ps-logs.tgz -C $OUT ps && rm -rf $OUT/ps
  for p in amg jacobi; do timeout 60 $B/app/cgsolve --matrix gen:poisson2d:3000 --device gpu --precond $p --tol 1e-8 --report $OUT/r-$p.json --quiet; python3 -c "
import json;d=json.load(open('$OUT/r-$p.json'));t=d['times'];print('$p', 'setup', round(sum(t[k] for k in ('reorder_s','build_format_s','preconditioner_s','upload_s')),3), 'solve', round(t['solve_s'],3))"; done
  ;;
integA)
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  timeout 300 $B/tests/test_gpu > "$OUT/test_gpu.log" 2>&1; echo "test_gpu (all): exit $? $(grep -E 'test cases' "$OUT/test_gpu.log")"
  grep -B5 -A15 -E "ERROR|FAILED" "$OUT/test_gpu.log" | head -60
  SKIP_BUILD=1 BUILD=$B OUT=$OUT/amg timeout 400 bash scripts/amg-setup-gpu-check.sh .gpu-data > $OUT/amg.txt 2>&1; echo "amg check: exit $?"; tail -40 $OUT/amg.txt
  tar czf $OUT/amg-logs.tgz -C $OUT amg && rm -rf $OUT/amg
  ;;
integB)
  [ -e ../shared ] || ln -s "$PWD/.gpu-data/shared" ../shared
  SKIP_BUILD=1 BUILD=$B NETS="BWSN_Network_2 Exnet_EXN Net3" STUDIES=fireflow OUT=$OUT/study timeout 450 scripts/study-gpu-check.sh > $OUT/study.txt 2>&1; echo "study: exit $?"; tail -30 $OUT/study.txt
  tar czf $OUT/study-logs.tgz -C $OUT study && rm -rf $OUT/study
  timeout 90 $B/bench/batchbench .gpu-data/BWSN_Network_2_step10.mtx.gz --batch 64 --repeats 3 --max-iters 20000 2>&1 | tail -3
  ;;
clu)
  SKIP_BUILD=1 BUILD=$B OUT=$OUT timeout 540 scripts/cluster-variants.sh .gpu-data > $OUT/clu.txt 2>&1; tail -45 $OUT/clu.txt
  cat $OUT/cluster-variants/summary.txt | head -30
  tar czf $OUT/clu-logs.tgz -C $OUT cluster-variants && rm -rf $OUT/cluster-variants
  ;;
ic0fast)
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  timeout 200 $B/tests/test_gpu -tc='Cluster*,GPU --precond auto*' > "$OUT/test_cluster.log" 2>&1; echo "test_gpu Cluster*: exit $? $(grep -E 'test cases' "$OUT/test_cluster.log")"
  grep -B5 -A15 -E "ERROR|FAILED" "$OUT/test_cluster.log" | head -60
  timeout 120 env CGSOLVE_NO_DEVICE_CACHE=1 compute-sanitizer --tool racecheck --error-exitcode 9 $B/tests/test_gpu -tc='Cluster CG with ic0 in one block*' > "$OUT/racecheck.log" 2>&1; echo "racecheck: exit $? $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' "$OUT/racecheck.log" | tail -1)"
  PRECONDS="ic0 auto" RUNS=3 ONLY="${ONLY:-Exnet|ky2|Richmond|Wolf}" timeout 300 scripts/precond-gpu-study.sh $B .gpu-data > "$OUT/study.txt" 2>&1; echo "study: exit $?"
  tail -20 "$OUT/study.txt"
  ;;
prof2)
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  D=.gpu-data
  timeout 150 $NCU --set full --import-source yes -o "$OUT/ncu-ic0" -f --kernel-name regex:cluster_cg_kernel --launch-count 1 \
      $B/app/cgsolve --matrix $D/Richmond_standard_step4.mtx.gz --rhs $D/Richmond_standard_step4_b.mtx.gz --device gpu --precond ic0 --gpu-loop cluster --max-iters 40 --tol 1e-30 --quiet > "$OUT/ncu-ic0.log" 2>&1
  echo "ncu ic0: exit $?"
  $NCU -i "$OUT/ncu-ic0.ncu-rep" --page details --print-details all > "$OUT/ncu-ic0-details.txt" 2>&1
  $NCU -i "$OUT/ncu-ic0.ncu-rep" --page source --csv --print-source sass > "$OUT/ncu-ic0-sass.csv" 2>&1; gzip -f "$OUT/ncu-ic0-sass.csv"
  rm -f "$OUT/ncu-ic0.ncu-rep"
  grep -E "Duration|Warp Cycles Per Issued|No Eligible|Stall" "$OUT/ncu-ic0-details.txt" | head -14
  PRECONDS="fsai:2 ic0 auto" RUNS=3 timeout 400 scripts/precond-gpu-study.sh $B $D > "$OUT/study.txt" 2>&1; echo "study: exit $?"
  tail -30 "$OUT/study.txt"
  ;;
prof)
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  D=.gpu-data
  prof1() { # name blocks matrix precond
    CGSOLVE_CLUSTER_BLOCKS=$2 timeout 150 $NCU --set full --import-source yes -o "$OUT/ncu-$1" -f --kernel-name regex:cluster_cg_kernel --launch-count 1 \
      $B/app/cgsolve --matrix "$3" --device gpu --precond $4 --gpu-loop cluster --max-iters 300 --tol 1e-30 --quiet > "$OUT/ncu-$1.log" 2>&1
    echo "ncu $1: exit $?"
    $NCU -i "$OUT/ncu-$1.ncu-rep" --page details --print-details all > "$OUT/ncu-$1-details.txt" 2>&1
    $NCU -i "$OUT/ncu-$1.ncu-rep" --page source --csv --print-source sass > "$OUT/ncu-$1-sass.csv" 2>&1; gzip -f "$OUT/ncu-$1-sass.csv"
    grep -E "Duration|Elapsed Cycles|Warp Cycles Per Issued|No Eligible|Issued Warp Per|Stall" "$OUT/ncu-$1-details.txt" | head -20
  }
  prof1 p122-16 16 gen:poisson2d:122 none
  prof1 exnet-1 1 $D/Exnet_EXN_step3.mtx.gz jacobi
  prof1 bwsn-16 16 $D/BWSN_Network_2_step10.mtx.gz jacobi
  if command -v nsys >/dev/null || [ -x /usr/local/cuda/bin/nsys ]; then
    NSYS=$(command -v nsys || echo /usr/local/cuda/bin/nsys)
    for p in cheb:8 amg fsai:2; do
      tag=${p%%:*}
      timeout 150 $NSYS profile -o "$OUT/nsys-$tag" -f true --sample=cpu --cpuctxsw=none --trace=cuda,osrt $B/app/cgsolve --matrix gen:poisson2d:3000 --device gpu --precond $p --max-iters 1 --report "$OUT/setup-$tag.json" > "$OUT/nsys-$tag.log" 2>&1
      echo "nsys $p: exit $?"
      $NSYS stats --report cuda_gpu_kern_sum,cuda_api_sum,cuda_gpu_mem_time_sum --format csv -o "$OUT/nsys-$tag" "$OUT/nsys-$tag.nsys-rep" > /dev/null 2>&1
      rm -f "$OUT/nsys-$tag.sqlite"
    done
  else echo "no nsys"; fi
  ls -la $OUT | head -40
  ;;
base)
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  timeout 240 $B/tests/test_gpu > "$OUT/test_gpu.log" 2>&1; echo "test_gpu (all): exit $? $(grep -E 'test cases' "$OUT/test_gpu.log")"
  grep -B5 -A15 -E "ERROR|FAILED" "$OUT/test_gpu.log" | head -80
  timeout 120 mpirun -np 1 --bind-to none -x LD_LIBRARY_PATH $B/tests/test_gpu_distributed > "$OUT/dist-np1.log" 2>&1; echo "test_gpu_distributed np1: exit $? $(grep -E 'test cases' "$OUT/dist-np1.log")"
  grep -B5 -A15 -E "ERROR|FAILED" "$OUT/dist-np1.log" | head -40
  timeout 100 mpirun -np 1 --bind-to none -x LD_LIBRARY_PATH compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/test_gpu_distributed > "$OUT/dist-memcheck.log" 2>&1; echo "memcheck distributed np1: exit $? $(grep 'ERROR SUMMARY' "$OUT/dist-memcheck.log" | tail -1)"
  for k in cusparse stream balanced; do timeout 60 $B/app/cgsolve --matrix data/matrices/bcsstk13.mtx --device gpu --kernel $k --gpu-loop generic --precond jacobi --tol 1e-8 2>&1 | grep -E "iterations|converged|PASS|FAIL|error" | head -3 | sed "s/^/  $k: /"; done
  timeout 60 $B/app/cgsolve --matrix gen:poisson3d:40 --device gpu --precond amg --tol 1e-8 2>&1 | grep -E "iterations|PASS|FAIL|error" | head -3 | sed 's/^/  amg: /'
  ;;
b2)
  timeout 240 $B/tests/test_gpu > "$OUT/test_gpu.log" 2>&1; echo "test_gpu (all): exit $? $(grep -E 'test cases' "$OUT/test_gpu.log")"
  grep -B5 -A15 -E "ERROR|FAILED" "$OUT/test_gpu.log" | head -60
  timeout 100 mpirun -np 1 --bind-to none -x LD_LIBRARY_PATH compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 $B/tests/test_gpu_distributed > "$OUT/dist-memcheck.log" 2>&1; echo "memcheck distributed np1 (API errors not reported: NCCL probes kernels): exit $? $(grep 'ERROR SUMMARY' "$OUT/dist-memcheck.log" | tail -1)"
  timeout 90 env CGSOLVE_NO_DEVICE_CACHE=1 compute-sanitizer --tool racecheck --kernel-name-exclude kns=cusparse --error-exitcode 9 $B/tests/test_gpu -tc='GPU AMG: set_values*' > "$OUT/amg-racecheck.log" 2>&1; echo "racecheck AMG set_values, cuSPARSE's kernels excluded: exit $? $(grep -E 'RACECHECK SUMMARY' "$OUT/amg-racecheck.log" | tail -1)"
  one() { local label=$1; shift; timeout 120 $B/app/cgsolve "$@" --device gpu --precond jacobi --tol 0 --max-iters 200 --quiet --report $OUT/r.json >/dev/null 2>>$OUT/cg-err.log
    python3 -c "
import json,sys; j=json.load(open('$OUT/r.json')); t=j['times']; s=j['spmv']; p=j['plan']
print('%-44s %-9s %-10s %9.1f us/it %9.1f spmv us' % ('$label', p.get('kernel'), p['loop'], t['per_iteration_s']*1e6, (s['median_s'] or 0)*1e6))" || echo "$label failed"; }
  m=gen:powerlaw:2000000
  for r in 1 2 3; do one "powerlaw2M default" --matrix $m; done
  for r in 1 2 3; do one "powerlaw2M csr/cusparse generic" --matrix $m --kernel cusparse --gpu-loop generic; done
  for k in stream balanced; do for l in graph persistent; do one "powerlaw2M csr/$k $l" --matrix $m --kernel $k --gpu-loop $l; done; done
  one "powerlaw2M --format hll (auto tail)" --matrix $m --format hll
  one "powerlaw2M --format hll --hll-tail 10" --matrix $m --format hll --hll-tail 10
  one "powerlaw2M --format hll graph (auto tail)" --matrix $m --format hll --gpu-loop graph
  one "powerlaw200k --format hll (auto tail)" --matrix gen:powerlaw:200000 --format hll
  one "powerlaw200k csr/cusparse generic" --matrix gen:powerlaw:200000 --kernel cusparse --gpu-loop generic
  $B/app/cgsolve --matrix $m --format hll --device gpu --precond jacobi --tol 0 --max-iters 2 2>&1 | grep -i "tail" | head -2
  timeout 150 $B/bench/spmvbench $m --devices gpu --sorted no --runs 30 --gpu-kernels csr:cusparse,csr:stream,hll:thread --out-dir $OUT/spmvbench > $OUT/spmvbench.log 2>&1
  python3 -c "
import csv
for r in csv.DictReader(open('$OUT/spmvbench/spmv.csv')): print('  spmvbench %-26s %10.1f us  vs cuSPARSE %.3f' % (r['backend'], float(r['median_us']), float(r.get('speedup_vs_ref') or 0)))" || tail -5 $OUT/spmvbench.log
  ;;
final)
  SKIP_BUILD=1 BUILD=$B OUT=$OUT/amg timeout 260 bash scripts/amg-gpu-check.sh 2>&1 | sed -n '/===== SUMMARY/,$p'
  echo "== auto on the GPU (fsai:2 beside it; CPU serial ic0 the reference)"
  PRECONDS="fsai:2 auto" RUNS=3 timeout 150 scripts/precond-gpu-study.sh $B .gpu-data 2>&1 | tail -12
  [ -e ../shared ] || ln -s "$PWD/.gpu-data/shared" ../shared
  DEVICES=cpu NETS="${NETS:-BWSN_Network_2 Net3 Exnet_EXN Richmond_standard}" SKIP_BUILD=1 BUILD=$B OUT=$OUT/study DEADLINE=200 timeout 230 scripts/study-gpu-check.sh 2>&1 | tail -14
  echo "== one thread against EPANET (BWSN_Network_2, 200 scenarios)"
  DEVICES=cpu CPU_THREADS=1 MAX=200 NETS=BWSN_Network_2 SKIP_BUILD=1 BUILD=$B OUT=$OUT/study1 DEADLINE=100 timeout 120 scripts/study-gpu-check.sh 2>&1 | tail -4
  ;;
s5base)
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  timeout 240 $B/tests/test_gpu > "$OUT/test_gpu.log" 2>&1; echo "test_gpu (all): exit $? $(grep -E 'test cases' "$OUT/test_gpu.log")"
  grep -B5 -A15 -E "ERROR|FAILED" "$OUT/test_gpu.log" | head -60
  echo "== gen:poisson2d:1000 tol 1e-10: cuSPARSE IC(0)-PCG (cgbench, same call) against ours"
  timeout 100 $B/bench/cgbench gen:poisson2d:1000 --devices gpu --gpu-kernels csr:scalar --precond ic0 --cusparse-ic0 --iterations 0 --tol 1e-10 --no-auto --repeats 1 --out-dir "$OUT/ref-poisson" > "$OUT/ref-poisson.txt" 2>&1
  echo "cgbench exit $?"; grep -i -E "cusparse|ic0" "$OUT/ref-poisson.txt" | tail -8
  tts() { local label=$1; shift; timeout 100 $B/app/cgsolve "$@" --report $OUT/t.json --quiet >/dev/null 2>>$OUT/tts-err.log
    python3 -c "
import json; j=json.load(open('$OUT/t.json')); t=j['times']; r=j['result']
setup=sum(t[k] for k in ('reorder_s','build_format_s','inspect_s','preconditioner_s','upload_s','thread_start_s'))
print('%-40s its %6d  set-up %8.3f s  solve %8.3f s  tts %8.3f s  conv %s' % ('$label', r['iterations'], setup, t['solve_s'], setup+t['solve_s'], r['converged']))" || echo "$label failed"; }
  for pc in jacobi amg ic0:colour fsai:2 cheb:8; do for i in 1 2 3; do tts "poisson2d:1000 gpu $pc" --matrix gen:poisson2d:1000 --device gpu --precond $pc --tol 1e-10; done; done
  echo "== plain CG per iteration, gen:poisson2d:122 (H100 target 6.6 us)"
  for loop in auto persistent cluster; do for i in 1 2 3; do
    $B/app/cgsolve --matrix gen:poisson2d:122 --device gpu --precond none --gpu-loop $loop --max-iters 2000 --tol 1e-30 --report "$OUT/r.json" --quiet > /dev/null 2>&1
    python3 -c "import json;j=json.load(open('$OUT/r.json'));print('  $loop', j['plan']['loop'], j['result']['iterations'], '%.2f us/iter' % (j['times']['per_iteration_s']*1e6))"
  done; done
  ;;
irr3)
  one() { local label=$1; shift; timeout 120 $B/app/cgsolve "$@" --device gpu --precond jacobi --tol 0 --max-iters 200 --quiet --report $OUT/r.json >/dev/null 2>>$OUT/cg-err.log
    python3 -c "
import json,sys; j=json.load(open('$OUT/r.json')); t=j['times']; s=j['spmv']; p=j['plan']
print('%-50s %-9s %-10s %9.1f us/it %9.1f spmv us  reorder %.3f s' % ('$label', p.get('kernel'), p['loop'], t['per_iteration_s']*1e6, (s['median_s'] or 0)*1e6, t['reorder_s']))" || echo "$label failed"; }
  m=gen:powerlaw:2000000
  for f in "" "--rcm" "--sort-rows"; do
    for k in "" "--kernel cusparse --gpu-loop generic" "--kernel stream --gpu-loop generic" "--kernel balanced --gpu-loop graph" "--kernel scalar --gpu-loop graph"; do
      one "2M $f $k" --matrix $m $f $k; done; done
  one "2M --rcm --format hll" --matrix $m --rcm --format hll
  ;;
sanbuild)
  # scripts/sanitize.sh's build, on all cores (the suite itself: part santest)
  S=build-sanitize; mkdir -p $S
  cmake -S . -B $S -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCGSOLVE_WITH_CUDA=OFF -DCGSOLVE_SANITIZE=address,undefined > $OUT/san-configure.log 2>&1 || { tail -20 $OUT/san-configure.log; exit 1; }
  grep -E "cgsolve:" $OUT/san-configure.log | head
  cmake --build $S -j16 --target cgsolve netsolve test_formats test_spmv test_solver test_gpu test_network test_app test_distributed > $OUT/san-build.log 2>&1; echo "sanitized build: exit $? $((SECONDS-t0)) s"; grep -E "error" $OUT/san-build.log | head
  ;;
santest)
  if [ ! -d ../shared/data ]; then rm -f ../shared; mkdir -p ../shared && tar xzf .gpu-data/shared-data.tgz -C ../shared && cp -r .gpu-data/shared/tools ../shared/; fi
  ls ../shared ../shared/data | head
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 LSAN_OPTIONS=suppressions=$PWD/tests/sanitizer/lsan.supp:print_suppressions=0 OMPI_MCA_mca_base_component_disable_dlclose=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  (cd build-sanitize && timeout 570 ctest --output-on-failure -j16 --timeout 560 ${SAN_FILTER:+-R "$SAN_FILTER"} ${SAN_EXCLUDE:+-E "$SAN_EXCLUDE"}) > $OUT/san-test.log 2>&1; echo "sanitized suite: exit $?"
  grep -E "tests passed|tests failed|Total Test time" $OUT/san-test.log; grep -E "\*\*\*Failed|\*\*\*Timeout|Exception|runtime error|ERROR: AddressSanitizer" $OUT/san-test.log | head -20
  sort -t' ' -k1 $OUT/san-test.log | grep -E "Passed +[0-9.]+ sec" | awk '{print $(NF-1), $0}' | sort -rn | head -5 | cut -c1-160
  ;;
integA)
  nvidia-smi --query-gpu=name --format=csv,noheader
  timeout 200 $B/tests/test_gpu > "$OUT/test_gpu.log" 2>&1; echo "test_gpu (all): exit $? $(grep -E 'test cases' "$OUT/test_gpu.log")"
  grep -B5 -A20 -E "ERROR|FAILED" "$OUT/test_gpu.log" | head -80
  SKIP_BUILD=1 BUILD=$B OUT=$OUT/cic0 timeout 330 bash scripts/cluster-ic0-check.sh .gpu-data 2>&1 | tail -40
  ;;
integB)
  SKIP_BUILD=1 BUILD=$B OUT=$OUT/ps timeout 270 bash scripts/precond-setup-gpu-check.sh 2>&1 | tail -30
  SKIP_BUILD=1 BUILD=$B OUT=$OUT/amg timeout 290 bash scripts/amg-setup-gpu-check.sh .gpu-data 2>&1 | tail -40
  ;;
integD)
  nvidia-smi --query-gpu=name --format=csv,noheader
  timeout 200 $B/tests/test_gpu > "$OUT/test_gpu.log" 2>&1; echo "test_gpu (all): exit $? $(grep -E 'test cases' "$OUT/test_gpu.log")"
  grep -B5 -A20 -E "ERROR|FAILED" "$OUT/test_gpu.log" | head -60
  PHASES="sanitize table" SKIP_BUILD=1 BUILD=$B OUT=$OUT/cic0 timeout 300 bash scripts/cluster-ic0-check.sh .gpu-data > $OUT/cic0.out 2>&1
  grep -E "SUMMARY|exit" $OUT/cic0.out | head; cat $OUT/cic0/table.txt 2>/dev/null | cut -c1-120
  ;;
autochk)
  echo "== auto on the GPU (fsai:2 and ic0 beside it; CPU serial ic0 the reference)"
  PRECONDS="fsai:2 ic0 auto" RUNS=3 timeout 300 scripts/precond-gpu-study.sh $B .gpu-data 2>&1 | tail -16
  ;;
fixed)
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  row() { local label=$1; shift; "$@" --report $OUT/t.json --quiet >/dev/null 2>>$OUT/err.log || { echo "$label failed"; return; }
    python3 -c "
import json; j=json.load(open('$OUT/t.json')); t=j['times']; r=j['result']; p=j['preconditioner']
ks=('reorder_s','build_format_s','inspect_s','preconditioner_s','upload_s','thread_start_s')
setup=sum(t.get(k,0) for k in ks)
ph=' '.join('%s=%.3f'%(k,v*1e3) for k,v in (p.get('phases_s') or {}).items())
print('%-34s its %4d fmt %.3f pre %.3f up %.3f solve %.3f tts %.3f ms | %s | %s' % ('$label', r['iterations'], t['build_format_s']*1e3, t['preconditioner_s']*1e3, t['upload_s']*1e3, t['solve_s']*1e3, (setup+t['solve_s'])*1e3, ph, j['plan'].get('loop')))"; }
  for s in ky2_step4 Richmond_standard_step4; do
    a="--matrix .gpu-data/$s.mtx.gz --rhs .gpu-data/${s}_b.mtx.gz --tol 1e-10"
    for i in 1 2 3; do
      row "$s cpu ic0" $B/app/cgsolve $a --device cpu --precond ic0
      row "$s cpu chol" $B/app/cgsolve $a --device cpu --precond chol
      row "$s gpu chol LAZY" $B/app/cgsolve $a --device gpu --precond chol
      CUDA_MODULE_LOADING=EAGER row "$s gpu chol EAGER" $B/app/cgsolve $a --device gpu --precond chol
      row "$s gpu jacobi LAZY" $B/app/cgsolve $a --device gpu --precond jacobi
      CUDA_MODULE_LOADING=EAGER row "$s gpu jacobi EAGER" $B/app/cgsolve $a --device gpu --precond jacobi
    done
  done
  for i in 1 2 3; do /usr/bin/time -f "cgsolve wall %e s (LAZY, ky2 chol)" $B/app/cgsolve --matrix .gpu-data/ky2_step4.mtx.gz --device gpu --precond chol --quiet > /dev/null; CUDA_MODULE_LOADING=EAGER /usr/bin/time -f "cgsolve wall %e s (EAGER, ky2 chol)" $B/app/cgsolve --matrix .gpu-data/ky2_step4.mtx.gz --device gpu --precond chol --quiet >/dev/null; done
  head -5 $OUT/err.log
  ;;
fixed2)
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  row() { local label=$1; shift; "$@" --report $OUT/t.json --quiet >/dev/null 2>>$OUT/err.log || { echo "$label failed"; return; }
    python3 -c "
import json; j=json.load(open('$OUT/t.json')); t=j['times']; r=j['result']; p=j['preconditioner']
ks=('reorder_s','build_format_s','inspect_s','preconditioner_s','upload_s','thread_start_s')
setup=sum(t.get(k,0) for k in ks)
ph=' '.join('%s=%.3f'%(k,v*1e3) for k,v in (p.get('phases_s') or {}).items())
print('%-34s its %4d fmt %.3f pre %.3f up %.3f solve %.3f tts %.3f ms | %s | %s' % ('$label', r['iterations'], t['build_format_s']*1e3, t['preconditioner_s']*1e3, t['upload_s']*1e3, t['solve_s']*1e3, (setup+t['solve_s'])*1e3, ph, j['plan'].get('loop')))" | tee -a $OUT/rows.txt; }
  for s in ky2_step4 Richmond_standard_step4 Exnet_EXN_step3 Wolf-Cordera_wolf-3_step5; do
    a="--matrix .gpu-data/$s.mtx.gz --rhs .gpu-data/${s}_b.mtx.gz --tol 1e-10"
    CGSOLVE_DEVICE_TALLY=1 $B/app/cgsolve $a --device gpu --precond chol --quiet 2>&1 | grep tally | sed "s/^/$s plain: /"
    CGSOLVE_DEVICE_POOL=1 CGSOLVE_DEVICE_TALLY=1 $B/app/cgsolve $a --device gpu --precond chol --quiet 2>&1 | grep tally | sed "s/^/$s pool: /"
    for i in 1 2 3 4 5; do
      row "$s cpu-serial ic0" $B/app/cgsolve $a --device serial --precond ic0
      row "$s gpu chol" $B/app/cgsolve $a --device gpu --precond chol
      CGSOLVE_DEVICE_POOL=1 row "$s gpu chol POOL" $B/app/cgsolve $a --device gpu --precond chol
    done
  done
  python3 - $OUT/rows.txt <<'PY'
import sys, re, statistics, collections
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    m=re.match(r'(.{34}) its.*tts ([0-9.]+) ms', l)
    if m: d[m.group(1).strip()].append(float(m.group(2)))
for k,v in d.items(): print('median %-36s %.3f ms (n=%d)' % (k, statistics.median(v), len(v)))
PY
  head -5 $OUT/err.log
  ;;
tally)
  for s in ky2_step4 Richmond_standard_step4; do
    a="--matrix .gpu-data/$s.mtx.gz --rhs .gpu-data/${s}_b.mtx.gz --tol 1e-10"
    for i in 1 2; do CGSOLVE_DEVICE_TALLY=1 $B/app/cgsolve $a --device gpu --precond chol --report $OUT/t.json --quiet 2>&1 | sed "s/^/$s chol: /"
    python3 -c "
import json; j=json.load(open('$OUT/t.json')); t=j['times']
print({k: round(v*1e3,3) for k,v in t.items() if isinstance(v,float) and v>0})"; done
    CGSOLVE_DEVICE_TALLY=1 $B/app/cgsolve $a --device gpu --precond jacobi --quiet 2>&1 | sed "s/^/$s jacobi: /"
    CGSOLVE_DEVICE_TALLY=1 CUDA_MODULE_LOADING=EAGER $B/app/cgsolve $a --device gpu --precond chol --report $OUT/t.json --quiet 2>&1 | sed "s/^/$s chol EAGER: /"
    python3 -c "
import json; j=json.load(open('$OUT/t.json')); t=j['times']
print({k: round(v*1e3,3) for k,v in t.items() if isinstance(v,float) and v>0})"
  done
  ;;
integ1)
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  timeout 200 $B/tests/test_gpu -tc='GPU preconditioners*,Cluster CG*' > "$OUT/test_chol.log" 2>&1; echo "test_gpu precond+cluster: exit $? $(grep -E 'test cases' "$OUT/test_chol.log")"
  grep -B5 -A15 -E "ERROR|FAILED" "$OUT/test_chol.log" | head -40
  for s in ky2_step4 Richmond_standard_step4; do
    timeout 60 $B/bench/cgbench .gpu-data/$s.mtx.gz --rhs .gpu-data/${s}_b.mtx.gz --devices gpu --gpu-kernels csr:scalar --gpu-loops cluster --precond chol --iterations 0 --tol 1e-10 --no-auto --repeats 20 --out-dir $OUT/cgb-$s > $OUT/cgb-$s.txt 2>&1; echo "cgbench $s: $?"; tail -4 $OUT/cgb-$s.txt | cut -c1-200
  done
  SOLVE_LIMIT=10 SKIP_BUILD=1 BUILD=$B OUT=$OUT/ic0 timeout 400 bash scripts/ic0-setup-gpu-check.sh .gpu-data 2>&1 | tail -45
  tar czf $OUT/logs.tgz -C $OUT test_chol.log ic0 cgb-ky2_step4.txt 2>/dev/null
  ;;
slab)
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  timeout 330 $B/tests/test_gpu > "$OUT/test_gpu.log" 2>&1; echo "test_gpu (all): exit $? $(grep -E 'test cases' "$OUT/test_gpu.log")"
  grep -B5 -A15 -E "ERROR|FAILED" "$OUT/test_gpu.log" | head -50
  row() { local label=$1; shift; "$@" --report $OUT/t.json --quiet >/dev/null 2>>$OUT/err.log || { echo "$label failed"; return; }
    python3 -c "
import json; j=json.load(open('$OUT/t.json')); t=j['times']; r=j['result']
ks=('reorder_s','build_format_s','inspect_s','preconditioner_s','upload_s','thread_start_s')
setup=sum(t.get(k,0) for k in ks)
print('%s|its %d fmt %.3f pre %.3f up %.3f solve %.3f|tts %.3f' % ('$label', r['iterations'], t['build_format_s']*1e3, t['preconditioner_s']*1e3, t['upload_s']*1e3, t['solve_s']*1e3, (setup+t['solve_s'])*1e3))" >> $OUT/rows.txt; }
  for i in 1 2 3 4 5; do for s in ky2_step4 Richmond_standard_step4 Exnet_EXN_step3 Wolf-Cordera_wolf-3_step5; do
    a="--matrix .gpu-data/$s.mtx.gz --rhs .gpu-data/${s}_b.mtx.gz --tol 1e-10"
    row "$s cpu-serial ic0" $B/app/cgsolve $a --device serial --precond ic0
    row "$s gpu chol cache" $B/app/cgsolve $a --device gpu --precond chol
    CGSOLVE_NO_DEVICE_CACHE=1 row "$s gpu chol nocache" $B/app/cgsolve $a --device gpu --precond chol
  done; done
  python3 - $OUT/rows.txt <<'PY'
import sys, statistics, collections
d=collections.defaultdict(list); parts={}
for l in open(sys.argv[1]):
    k,mid,t=l.strip().split('|'); d[k].append(float(t.split()[1])); parts[k]=mid
for k,v in d.items(): print('median %-40s %.3f ms (n=%d)   last: %s' % (k, statistics.median(v), len(v), parts[k]))
PY
  CGSOLVE_DEVICE_TALLY=1 $B/app/cgsolve --matrix .gpu-data/ky2_step4.mtx.gz --device gpu --precond chol --quiet 2>&1 | grep tally
  head -3 $OUT/err.log
  tar czf $OUT/logs.tgz -C $OUT test_gpu.log rows.txt
  ;;
autoc2)
  SKIP_BUILD=1 BUILD=$B OUT=$OUT/auto RUNS=5 timeout 520 scripts/auto-gpu-check.sh .gpu-data 2>&1 | tail -40
  tar czf $OUT/auto-logs.tgz -C $OUT/auto auto-logs 2>/dev/null; rm -rf $OUT/auto
  ;;
wt)
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  timeout 240 $B/tests/test_gpu > "$OUT/test_gpu.log" 2>&1; echo "test_gpu (all): exit $? $(grep -E 'test cases' "$OUT/test_gpu.log")"
  grep -B5 -A15 -E "ERROR|FAILED" "$OUT/test_gpu.log" | head -40
  SKIP_BUILD=1 BUILD=$B OUT=$OUT/wt timeout 420 bash scripts/warptail-check.sh .gpu-data 2>&1 | tail -50
  tar czf $OUT/logs.tgz -C $OUT test_gpu.log wt 2>/dev/null; rm -rf $OUT/wt
  ;;
fin9)
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  timeout 240 $B/tests/test_gpu > "$OUT/test_gpu.log" 2>&1; echo "test_gpu (all): exit $? $(grep -E 'test cases' "$OUT/test_gpu.log")"
  grep -B5 -A15 -E "ERROR|FAILED" "$OUT/test_gpu.log" | head -30
  echo "== chol on the GPU against CPU serial ic0 (medians of 5)"
  RUNS=5 CPU="serial:ic0 serial:chol" PRECONDS="chol jacobi" timeout 150 scripts/precond-gpu-study.sh $B .gpu-data 2>&1 | tail -9
  SKIP_BUILD=1 BUILD=$B OUT=$OUT/auto RUNS=5 timeout 300 scripts/auto-gpu-check.sh .gpu-data 2>&1 | tail -16
  tar czf $OUT/logs.tgz -C $OUT test_gpu.log auto 2>/dev/null; rm -rf $OUT/auto
  ;;
tab)
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  RUNS=5 CPU="serial:ic0 serial:chol" PRECONDS="chol" timeout 200 scripts/precond-gpu-study.sh $B .gpu-data > $OUT/tab.txt 2>&1; echo "study: $?"
  cat $OUT/tab.txt | tail -30
  ;;
race)
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  t1=$SECONDS
  CGS_GPU_TESTS_LIGHT=1 timeout 470 env CGSOLVE_NO_DEVICE_CACHE=1 compute-sanitizer --tool racecheck --error-exitcode 86 $B/tests/test_gpu -tc='Cluster CG with chol*' > $OUT/race-chol.log 2>&1
  echo "racecheck 'Cluster CG with chol*' (light): exit $? $((SECONDS-t1)) s $(grep -E 'RACECHECK SUMMARY|test cases' $OUT/race-chol.log | xargs)"
  tail -5 $OUT/race-chol.log
  ;;
util)
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  timeout 240 $B/tests/test_gpu > "$OUT/test_gpu.log" 2>&1; echo "test_gpu (all): exit $? $(grep -E 'test cases' "$OUT/test_gpu.log")"
  grep -B5 -A15 -E "ERROR|FAILED" "$OUT/test_gpu.log" | head -30
  CGS_GPU_TESTS_LIGHT=1 timeout 200 env CGSOLVE_NO_DEVICE_CACHE=1 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/test_gpu -tc='GPU ic0*,GPU fsai*,GPU set-up*,GPU AMG: the GPU set-up*' > $OUT/memcheck.log 2>&1; echo "memcheck ic0/fsai/set-up/AMG: exit $? $(grep 'ERROR SUMMARY' $OUT/memcheck.log | tail -1) $(grep 'test cases' $OUT/memcheck.log)"
  ;;
irregular) SKIP_BUILD=1 OUT=$OUT/irregular timeout 560 scripts/irregular2-check.sh $B ;;
study) [ -e ../shared ] || ln -s "$PWD/.gpu-data/shared" ../shared; SKIP_BUILD=1 BUILD=$B OUT=$OUT/study DEADLINE=430 timeout 560 scripts/study-gpu-check.sh ;;
amg) SKIP_BUILD=1 BUILD=$B OUT=$OUT/amg timeout 560 scripts/amg-gpu-check.sh ;;
esac
echo "part $1 total $((SECONDS-t0)) s"
