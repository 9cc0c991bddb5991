// The device side of the fused GPU CG loops (fused_cg_impl.cuh) besides the passes themselves:
// how a pass walks the rows of each format, the deterministic grid-wide reductions, and the
// clocks. Included by the fused loop's sources only.
//
// Reductions: each block writes one partial per sum; after the sync every block adds all
// partials in block order itself (the same reduction in every block, block_sums), so every block
// gets the same scalars bit for bit and takes the same decisions (solver/cg_step.hpp) without
// another sync. Nothing uses floating-point atomics: results repeat exactly for a given grid.
#pragma once

#include <cooperative_groups.h>

#include "solver/cg_step.hpp"
#include "spmv/cuda/coo_device.cuh"
#include "spmv/cuda/csr_balanced.cuh"
#include "spmv/cuda/csr_device.cuh"
#include "spmv/cuda/cuda_common.cuh"
#include "spmv/cuda/ell_device.cuh"
#include "spmv/cuda/hll_device.cuh"

namespace cgs::fused {

namespace cgrp = cooperative_groups;

constexpr int kBlock = 256;
// At least 4 blocks (1024 threads) per SM: caps registers at 64, so the bandwidth-bound passes
// keep enough loads in flight at n ~ 10^7 (the compiler would otherwise take up to 255).
constexpr int kMinBlocksPerSm = 4;
constexpr int kSlots = 4;  // partial sums per block: r.r, r.z, p.q, b.b
constexpr int kRr = 0, kRz = 1, kPq = 2, kBb = 3;

__device__ __forceinline__ bool leader() { return blockIdx.x == 0 && threadIdx.x == 0; }
__device__ __forceinline__ double load(const double* p) { return __ldcg(p); }
__device__ __forceinline__ long long load(const long long* p) { return __ldcg(p); }

template <typename Row>
__device__ __forceinline__ void for_each_row(long long n, Row row) {
  for (long long i = blockIdx.x * (long long)kBlock + threadIdx.x; i < n;
       i += (long long)gridDim.x * kBlock) {
    row(i);
  }
}

// How a pass multiplies: products(n, x_at, body) calls body(row, (A x)_row) once for every row,
// with x_at(j) giving the vector's entry j (computed on the fly in pass A). A thread per row
// for the views with a one-thread row function; a group of G lanes per row for CSR with long
// rows (body then runs on the group's first lane).
template <typename View>
struct ThreadPerRow {
  View A;
  template <typename XAt, typename Body>
  __device__ __forceinline__ void products(long long n, XAt x_at, Body body) const {
    for_each_row(n, [&](long long i) { body(i, cuda::row_product(A, i, x_at)); });
  }
};

template <typename T, int G>
struct LanesPerRow {
  CsrView<T> A;
  template <typename XAt, typename Body>
  __device__ __forceinline__ void products(long long n, XAt x_at, Body body) const {
    cuda::for_each_row_group<G>(n, [&](long long row, int lane, bool valid) {
      const double sum = cuda::row_product_group<G>(A, row, lane, valid, x_at);
      if (lane == 0 && valid) body(row, sum);
    });
  }
};

// CSR by units of about equal nonzeros (the balanced kernel, spmv/cuda/csr_balanced.cuh): long
// rows split across warps and combined inside the pass.
template <typename T>
struct BalancedRows {
  static_assert(kBlock <= cuda::kBalancedBlock, "the units' shared stage holds 8 warps");
  CsrView<T> A;
  template <typename XAt, typename Body>
  __device__ __forceinline__ void products(long long, XAt x_at, Body body) const {
    cuda::balanced_products(A, x_at, body);
  }
};

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

// This block's sums of `local` into partials[slot[i]][block] (add: added to what is there).
template <int N>
__device__ void write_partials(const double (&local)[N], const int (&slot)[N], double* partials,
                               bool add = false) {
  Sums<N> mine;
  for (int i = 0; i < N; ++i) mine.v[i] = local[i];
  const Sums<N> sums = block_sums(mine);
  if (threadIdx.x < N) {
    double& out = partials[slot[threadIdx.x] * gridDim.x + blockIdx.x];
    out = add ? out + sums.v[threadIdx.x] : sums.v[threadIdx.x];
  }
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

// Nanoseconds of the GPU's global timer (the same on every SM; coarse, see fused_cg_impl.cuh).
__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

}  // namespace cgs::fused
