#!/usr/bin/env bash
# Issue 27, BENCHMARKS.md §13b: the cluster CG loop's kernel variants (CGSOLVE_CLUSTER_VARIANT =
# base, select, loads, decide, fast, onered) measured side by side in one call on a GPU machine:
#   1. test_gpu -tc='Cluster*' (every variant against the persistent loop, inside the tests);
#   2. compute-sanitizer racecheck and synccheck on one small run of each variant (n = 81 in a
#      cluster of 2 blocks: remote reads and a block boundary);
#   3. per CG iteration: cgbench (the persistent loop, the cluster loop and the cuSPARSE + cuBLAS
#      anchor in the same process) once per variant, and cgsolve's per_iteration_s (median of 3)
#      on gen:poisson2d:122 plain, BWSN_Network_2 step 10 Jacobi, Exnet step 3 Jacobi;
#   4. batchbench: 64 BWSN_Network_2 systems at once per variant (rate against one persistent
#      system in the same process; --max-iters 20000 so the call stays short);
# then a table, last. Whole call: about 4-6 minutes on an H100 host.
# Usage: OUT=dir [SKIP_BUILD=1] [BUILD=build-gpu] scripts/cluster-variants.sh [data dir (.gpu-data)]
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-gpu-out}
DATA=${1:-.gpu-data}
BUILD=${BUILD:-build-gpu}
VARIANTS=${VARIANTS:-"base select loads decide fast onered"}
LOGS=$OUT/cluster-variants
T_START=$SECONDS
mkdir -p "$LOGS"
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader | tee "$LOGS/machine.txt"
BWSN=$DATA/BWSN_Network_2_step10.mtx.gz
EXNET=$DATA/Exnet_EXN_step3.mtx.gz
[[ -f $EXNET ]] || EXNET=data/systems/Exnet_EXN_step3.mtx.gz  # also in the repository
SUMMARY=$LOGS/summary.txt
: > "$SUMMARY"
note() { echo "$*" | tee -a "$SUMMARY"; }

if [[ ${SKIP_BUILD:-0} != 1 ]]; then
  t0=$SECONDS
  gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
  { cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
      -DCGSOLVE_WITH_MPI=OFF -DCGSOLVE_WITH_NCCL=OFF "${gen[@]}" &&
    cmake --build "$BUILD" -j "$(nproc)" --target cgsolve test_gpu cgbench batchbench; } \
    > "$LOGS/build.log" 2>&1 || { grep -B3 -A12 "error" "$LOGS/build.log" | head -80; exit 1; }
  echo "build: $((SECONDS - t0)) s"
fi

# 1. The tests (every variant inside each cluster test case).
t0=$SECONDS
timeout 300 "$BUILD/tests/test_gpu" -tc='Cluster*' > "$LOGS/test_cluster.log" 2>&1
note "test_gpu -tc='Cluster*': exit $? ($((SECONDS - t0)) s); $(grep -E '^\[doctest\] test cases' "$LOGS/test_cluster.log" | tail -1)"
grep -B4 -A14 "ERROR\|FAILED" "$LOGS/test_cluster.log" | head -60

# 2. compute-sanitizer, one small run per variant: n = 81 in a cluster of 2 blocks (remote reads,
# a block boundary), Jacobi.
for v in $VARIANTS; do
  for tool in racecheck synccheck; do
    log=$LOGS/sanitize-$tool-$v.log
    CGSOLVE_CLUSTER_VARIANT=$v CGSOLVE_CLUSTER_BLOCKS=2 timeout 60 compute-sanitizer \
      --tool $tool --error-exitcode 86 "$BUILD/app/cgsolve" --matrix gen:poisson2d:9 \
      --device gpu --precond jacobi --gpu-loop cluster --tol 1e-12 --quiet > "$log" 2>&1
    rc=$?
    note "compute-sanitizer $tool $v: exit $rc; $(grep -hE 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tr '\n' ' ')"
  done
done

# 3. Per CG iteration. cgbench: our loops beside the cuSPARSE + cuBLAS anchor, one process per
# variant (the variant is read at every solve; the anchor and the persistent loop ignore it).
for v in $VARIANTS; do
  CGSOLVE_CLUSTER_VARIANT=$v timeout 150 "$BUILD/bench/cgbench" gen:poisson2d:122 "$BWSN" "$EXNET" \
    --devices gpu --gpu-kernels csr:scalar --gpu-loops persistent,cluster --precond jacobi \
    --iterations 2000 --repeats 3 --no-auto --out-dir "$LOGS/cg-$v" > "$LOGS/cgbench-$v.txt" 2>&1
  echo "== cgbench $v (Jacobi): exit $?"; tail -12 "$LOGS/cgbench-$v.txt"
done
CGBENCH_NONE=$LOGS/cgbench-none.txt
timeout 100 "$BUILD/bench/cgbench" gen:poisson2d:122 --devices gpu --gpu-kernels csr:scalar \
  --gpu-loops persistent --precond none --iterations 2000 --repeats 3 --no-auto \
  --out-dir "$LOGS/cg-none" > "$CGBENCH_NONE" 2>&1
echo "== cgbench poisson2d:122 plain, the persistent loop and the anchor: exit $?"; tail -8 "$CGBENCH_NONE"

# cgsolve's per_iteration_s, median of 3: "name precond variant" -> microseconds.
median_us() {  # matrix precond variant [blocks]
  local m=$1 pc=$2 v=$3 loop=cluster
  [[ $v == persistent ]] && loop=persistent
  for _ in 1 2 3; do
    CGSOLVE_CLUSTER_VARIANT=${v/persistent/base} "$BUILD/app/cgsolve" --matrix "$m" --device gpu \
      --precond "$pc" --gpu-loop $loop --max-iters 2000 --tol 1e-30 --report "$LOGS/r.json" \
      --quiet > /dev/null 2>&1 &&
      python3 -c "import json;j=json.load(open('$LOGS/r.json'));print('%.3f' % (j['times']['per_iteration_s']*1e6), j['plan']['loop'])"
  done | sort -n | awk 'NR == 2 { print $1 " (" $2 ")" } END { if (NR < 2) print "failed" }'
}
declare -A PERITER
SYSTEMS=("gen:poisson2d:122 none" "$BWSN jacobi" "$EXNET jacobi")
for entry in "${SYSTEMS[@]}"; do
  read -r m pc <<< "$entry"
  for v in persistent $VARIANTS; do
    PERITER["$(basename "$m") $pc $v"]=$(median_us "$m" "$pc" "$v")
  done
done
rm -f "$LOGS/r.json"

# 4. The batch: 64 BWSN_Network_2 systems, one per cluster.
declare -A RATIO
for v in $VARIANTS; do
  CGSOLVE_CLUSTER_VARIANT=$v timeout 120 "$BUILD/bench/batchbench" "$BWSN" --batch 64 \
    --repeats 3 --max-iters 20000 > "$LOGS/batch-$v.txt" 2>&1
  echo "== batchbench $v: exit $?"; tail -3 "$LOGS/batch-$v.txt"
  # After the row's last "|": batch, its, ms, its/s, ratio (then maybe "(not all converged)").
  RATIO[$v]=$(awk '/BWSN/ { for (i = 1; i <= NF; ++i) if ($i == "|") bar = i;
                            print $(bar + 5) "x, " $(bar + 4) " its/s, " $(bar + 3) " ms" }' \
              "$LOGS/batch-$v.txt" | head -1)
done

{
  echo
  echo "== per CG iteration, us (cgsolve per_iteration_s, median of 3, 2000 iterations; $(head -1 "$LOGS/machine.txt"))"
  printf "%-34s %-7s %-22s" system precond persistent
  for v in $VARIANTS; do printf " %-22s" "$v"; done
  echo
  for entry in "${SYSTEMS[@]}"; do
    read -r m pc <<< "$entry"
    printf "%-34s %-7s %-22s" "$(basename "$m")" "$pc" "${PERITER["$(basename "$m") $pc persistent"]}"
    for v in $VARIANTS; do printf " %-22s" "${PERITER["$(basename "$m") $pc $v"]}"; done
    echo
  done
  echo "targets: poisson2d:122 plain <= 2.5 us; BWSN_Network_2 step 10 Jacobi <= 3 us"
  echo "== batch of 64 BWSN_Network_2 systems (batchbench --max-iters 20000): x one persistent system's rate"
  for v in $VARIANTS; do echo "$v: ${RATIO[$v]}"; done
  echo "target: >= 20x"
  echo "(whole call: $((SECONDS - T_START)) s; logs in $LOGS)"
} | tee -a "$SUMMARY"
