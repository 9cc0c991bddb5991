#!/usr/bin/env bash
# Issue 26: the distributed CG on the GPUs of one host, in one call (BENCHMARKS.md section 18).
#
#   scripts/multigpu-bench.sh [build-dir]      # on a host with 2 or more GPUs; $OUT gets the logs
#
# Phases (PHASES, default all): build, test (the GPU-rank tests on 1 and G ranks), weak (3D
# Poisson 200^3 per GPU: gen:poisson3d:200:200:200G), strong (300^3 on every GPU count), agree
# (tol 1e-8 solves: iterations and x of G GPUs against the single-GPU solve). GPUS lists the
# counts (default 1 and every power of two up to the GPUs present). Every timed run does ITERS
# iterations (--tol 0) with Jacobi, median of REPEATS processes. The summary, last, sets each
# multi-GPU time per iteration beside the overlap model of docs/DISTRIBUTED.md:
#   t(G) = max(local SpMV, halo exchange) + halo SpMV + allreduce + vector work,
# the first four measured on the slowest rank of the same run, the vector work taken from the
# 1-GPU run (the same rows per GPU in weak scaling, scaled by rows per GPU in strong scaling).
set -uo pipefail
cd "$(dirname "$0")/.."
B=${1:-build-gpu}
OUT=${OUT:-$(mktemp -d)}
L=$OUT/multigpu
mkdir -p "$L"
PHASES=${PHASES:-"build test weak strong agree"}
REPEATS=${REPEATS:-3}
ITERS=${ITERS:-400}
export PATH=/usr/local/cuda/bin:$PATH
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
NCCL_ROOT=${NCCL_ROOT:-/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl}
[[ -d $NCCL_ROOT ]] && export LD_LIBRARY_PATH=$NCCL_ROOT/lib:${LD_LIBRARY_PATH:-}
devices=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if [[ -z ${GPUS:-} ]]; then
  GPUS=1
  for ((g = 2; g <= devices; g *= 2)); do GPUS="$GPUS $g"; done
fi
has() { [[ " $PHASES " == *" $1 "* ]]; }
echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(hostname): $devices GPU(s): $(nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c | xargs)"
echo "# NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-unset}; counts: $GPUS; $ITERS iterations, median of $REPEATS"
nvidia-smi topo -m > "$L/topology.txt" 2>&1

if has build; then
  t0=$SECONDS
  cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DNCCL_ROOT="$NCCL_ROOT" > "$L/configure.log" 2>&1
  cmake --build "$B" -j"$(nproc)" --target cgsolve test_gpu_distributed > "$L/build.log" 2>&1 ||
    { grep -B2 -A12 -E "error" "$L/build.log" | head -40; exit 1; }
  echo "build: $((SECONDS - t0)) s ($(grep -E 'cgsolve: (MPI|NCCL)' "$L/configure.log" | xargs))"
fi
CGSOLVE=$B/app/cgsolve

if has test; then
  for g in $GPUS; do
    timeout 300 mpirun -np "$g" --bind-to none -x LD_LIBRARY_PATH "$B/tests/test_gpu_distributed" \
      > "$L/test-np$g.log" 2>&1
    echo "test_gpu_distributed, mpirun -np $g: exit $? ($(grep -E 'test cases' "$L/test-np$g.log" | tail -1 | xargs))"
  done
fi

# One timed process: GPUs ("single": cgsolve on one GPU without mpirun, its own loop), matrix,
# variant, repeat -> the JSON report's path.
run() {
  local g=$1 matrix=$2 variant=$3 k=$4 extra=${5:-}
  local report="$L/$(echo "$matrix-$g-$variant-$k" | tr ':/' '__').json"
  local args=(--matrix "$matrix" --device gpu --precond jacobi --report "$report" --quiet $extra)
  [[ $extra == *--tol* ]] || args+=(--tol 0 --max-iters "$ITERS")
  if [[ $g == single ]]; then
    timeout 300 "$CGSOLVE" "${args[@]}" > /dev/null 2>> "$L/stderr.log"
  else
    timeout 300 mpirun -np "$g" --bind-to none -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE "$CGSOLVE" \
      "${args[@]}" --distributed --cg-variant "$variant" > /dev/null 2>> "$L/stderr.log"
  fi
  echo "$report"
}

weak_matrix() { echo "gen:poisson3d:200:200:$((200 * $1))"; }  # a 200^3 slab per GPU
strong_matrix() { echo "gen:poisson3d:300"; }

# Median of REPEATS per (GPUs, variant), one JSON line each in $L/rows.jsonl.
measure() {  # kind: weak | strong
  local kind=$1 g variant matrix reports k
  for g in single $GPUS; do
    matrix=$("${kind}_matrix" "${g/single/1}")
    for variant in classic single-reduction; do
      [[ $g == single && $variant != classic ]] && continue
      reports=()
      for ((k = 0; k < REPEATS; ++k)); do reports+=("$(run "$g" "$matrix" "$variant" "$k")"); done
      python3 scripts/process_multigpu.py row "$kind" "$g" "$matrix" "$variant" "${reports[@]}" \
        >> "$L/rows.jsonl"
    done
  done
}
rm -f "$L/rows.jsonl"
has weak && measure weak
has strong && measure strong

# Agreement: tol 1e-8 solves, iterations and x of every GPU count against the single GPU's.
if has agree; then
  for matrix in gen:poisson3d:150 gen:poisson3d:300; do
    reports=()
    out_single=
    [[ $matrix == gen:poisson3d:150 ]] && out_single="--output $L/x-single.mtx"
    reports+=("$(run single "$matrix" classic agree "--tol 1e-8 $out_single")")
    for g in $GPUS; do
      for variant in classic single-reduction; do
        out=
        [[ $matrix == gen:poisson3d:150 ]] && out="--output $L/x-$g-$variant.mtx"
        reports+=("$(run "$g" "$matrix" "$variant" agree "--tol 1e-8 $out")")
      done
    done
    python3 scripts/process_multigpu.py agree "$matrix" "$L" "${reports[@]}" >> "$L/agree.txt"
  done
  rm -f "$L"/x-*.mtx
fi

python3 scripts/process_multigpu.py summary "$L/rows.jsonl" "$L/agree.txt"
