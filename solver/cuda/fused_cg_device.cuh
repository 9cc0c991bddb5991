// The device side of the fused GPU CG loops (fused_cg.cu) besides the passes themselves: the
// solve's state, the work vectors, the deterministic grid-wide reductions and the stopping
// decision. Included by fused_cg.cu only.
//
// Reductions: each block writes one partial per sum; after the sync every block adds all
// partials in block order itself (the same reduction in every block, block_sums), so every block
// gets the same scalars bit for bit and takes the same decisions (stop, breakdown) without another
// sync. Nothing uses floating-point atomics: results repeat exactly for a given grid.
// Block 0, thread 0 (the leader) records the scalars, the history and the outcome in device
// memory, where the next pass, the next launch and the host read them.
#pragma once

#include <cooperative_groups.h>

#include "solver/cuda/fused_cg.hpp"
#include "spmv/cuda/cuda_common.cuh"
#include "spmv/cuda/fused_spmv.cuh"

namespace cgs::fused {

namespace cgrp = cooperative_groups;
using cuda::CsrView;
using cuda::DeviceArray;
using cuda::EllView;
using cuda::HllView;
using cuda::stream;

constexpr int kBlock = 256;
// At least 4 blocks (1024 threads) per SM: caps registers at 64, so the bandwidth-bound passes
// keep enough loads in flight at n ~ 10^7 (the compiler would otherwise take up to 255).
constexpr int kMinBlocksPerSm = 4;
constexpr int kSlots = 4;  // partial sums per block: r.r, r.z, p.q, b.b
constexpr int kRr = 0, kRz = 1, kPq = 2, kBb = 3;

// The solve's state in device memory. Written only by the leader; a value is read by other
// blocks only in a later pass (after a sync), never in the pass that writes it, hence rz kept
// by iteration parity (pass A(k) reads rz_{k-2} while it writes rz_{k-1}).
struct FusedScalars {
  double rr, rz, pq, bb;
  double tol, atol, threshold;  // threshold on r.r, set by pass A(1) from b.b
  double rz_by_parity[2];       // rz_k at [k % 2]
  double alpha;                 // alpha of the latest completed iteration
  long long max_iters;
  long long breakdown_at, converged_at;  // -1: none / not yet
  long long iterations;                  // completed iterations
  long long recorded;                    // history entries written
  long long stop_phase;                  // pass (2k for A(k), 2k+1 for B(k)) that stopped; -1
  long long base;                        // graph loop: the iteration of the next replay
};

template <typename T, typename View>
struct Work {
  View A;
  long long n;
  const T* b;
  const T* inv_diag;  // null: no preconditioner, z is r
  // Written during a pass and read by other blocks after it: plain (coherent) loads, never the
  // read-only path, hence no __restrict__.
  T* x;
  T* r;
  T* z;
  T* p[2];  // p_k in p[k % 2]
  T* q;
  FusedScalars* s;
  double* partials;  // kSlots * gridDim.x
  double* history;
  long long history_capacity;
};

__device__ __forceinline__ bool leader() { return blockIdx.x == 0 && threadIdx.x == 0; }
__device__ __forceinline__ double load(const double* p) { return __ldcg(p); }
__device__ __forceinline__ long long load(const long long* p) { return __ldcg(p); }

// The one rounding of p = z + beta p, used for the stored p and for the p the SpMV reads.
template <typename T>
__device__ __forceinline__ T next_p(T z, T beta, T p) {
  if constexpr (sizeof(T) == 4) {
    return __fmaf_rn(beta, p, z);
  } else {
    return __fma_rn(beta, p, z);
  }
}

// Block-wide sums of N values at once, in a fixed order (warps by shuffles, then the warps'
// sums in warp order), so every block that reduces the same inputs gets the same bits. One
// barrier round for all N sums: on small systems an iteration is a chain of such latencies,
// and separate reductions per sum cost a pair of barriers each.
constexpr int kWarps = kBlock / 32;

template <int N>
struct Sums {
  double v[N];
};

template <int N>
__device__ Sums<N> block_sums(Sums<N> local) {
  __shared__ double warp_sums[N][kWarps];
  for (int i = 0; i < N; ++i) {
    for (int offset = 16; offset > 0; offset /= 2)
      local.v[i] += __shfl_down_sync(0xffffffffu, local.v[i], offset);
    if (threadIdx.x % 32 == 0) warp_sums[i][threadIdx.x / 32] = local.v[i];
  }
  __syncthreads();
  Sums<N> total{};
  for (int i = 0; i < N; ++i) {
    for (int w = 0; w < kWarps; ++w) total.v[i] += warp_sums[i][w];
  }
  __syncthreads();  // warp_sums is reused by the next call
  return total;
}

// This block's sums of `local` into partials[slot[i]][block].
template <int N>
__device__ void write_partials(const double (&local)[N], const int (&slot)[N], double* partials) {
  Sums<N> mine;
  for (int i = 0; i < N; ++i) mine.v[i] = local[i];
  const Sums<N> sums = block_sums(mine);
  if (threadIdx.x < N) partials[slot[threadIdx.x] * gridDim.x + blockIdx.x] = sums.v[threadIdx.x];
}

// The sums of N slots over all blocks, in block order: the same values in every block.
template <int N>
__device__ Sums<N> grid_totals(const double* partials, const int (&slot)[N]) {
  Sums<N> mine{};
  for (unsigned b = threadIdx.x; b < gridDim.x; b += kBlock) {
    for (int i = 0; i < N; ++i) mine.v[i] += load(&partials[slot[i] * gridDim.x + b]);  // L2
  }
  return block_sums(mine);
}

template <typename Row>
__device__ __forceinline__ void for_each_row(long long n, Row row) {
  for (long long i = blockIdx.x * (long long)kBlock + threadIdx.x; i < n;
       i += (long long)gridDim.x * kBlock) {
    row(i);
  }
}

// Records r.r of iteration k - 1 and decides whether the solve stops before iteration k.
// bb_total: the grid total of b.b (used at k = 1 only).
template <typename T, typename View>
__device__ bool check_before(const Work<T, View>& w, long long k, double rr, double rz,
                             double bb_total) {
  FusedScalars& s = *w.s;
  double threshold = 0, bb = 0;
  if (k == 1) {  // as conjugate_gradient(): tolerance from ||b||, in the same arithmetic
    bb = bb_total;
    const double limit = fmax(load(&s.tol) * sqrt(bb), load(&s.atol));
    threshold = limit * limit;
  } else {
    threshold = load(&s.threshold);
  }
  const bool converged = rr <= threshold;
  const bool non_finite = !converged && (!isfinite(rr) || !isfinite(rz));
  const bool stop = (k == 1 && bb == 0) || converged || non_finite || k > load(&s.max_iters);
  if (leader()) {
    if (k == 1) {
      s.bb = bb;
      s.threshold = threshold;
    }
    s.rr = rr;
    s.rz = rz;
    s.rz_by_parity[(k - 1) % 2] = rz;
    s.iterations = k - 1;
    if (k - 1 < w.history_capacity) {
      w.history[k - 1] = rr;
      s.recorded = k;
    }
    if (converged && s.converged_at < 0) s.converged_at = k - 1;
    if (non_finite) s.breakdown_at = max(k - 1, 1LL);
    if (stop) s.stop_phase = 2 * k;
  }
  return stop;
}

// True when an earlier pass stopped the solve (read at a kernel's start: a later launch, a
// later graph node or a chunk enqueued before the host saw the stop does nothing).
__device__ bool stopped_before(const FusedScalars* s, long long phase) {
  const long long stop = load(&s->stop_phase);
  return stop >= 0 && stop < phase;
}

}  // namespace cgs::fused
