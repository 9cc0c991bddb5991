// Strength of connection and MIS(2) aggregation on the device (solver/precond/amg_gpu.cu), equal to
// the host's strong_connections and mis2_aggregate (amg_aggregate.hpp), and the greedy's pass 2 on
// values the device holds. Included by amg_gpu.cu only (its kernels and helpers live in an unnamed
// namespace there).
#pragma once

#include <cstdint>
#include <cub/device/device_scan.cuh>

#include "solver/precond/amg_gpu_common.cuh"

namespace cgs::precond::amg {
namespace {

// ---- strength and MIS(2) aggregation on the device (strong_connections, mis2_aggregate)

// d[i] = the sum of row i's diagonal entries (diagonal_of's, in the row's order).
__global__ void diagonal_kernel(index_t n, const index_t* a_ptr, const index_t* a_col,
                                const double* a_val, double* d) {
  for (index_t i = index_t(blockIdx.x) * kBlock + index_t(threadIdx.x); i < n;
       i += index_t(gridDim.x) * kBlock) {
    double sum = 0;
    for (index_t k = a_ptr[i]; k < a_ptr[i + 1]; ++k)
      if (a_col[k] == i) sum += a_val[k];
    d[i] = sum;
  }
}

// strong[k] = j != i and |a_ij| >= theta sqrt(|d_i d_j|), the host's expression term by term.
__global__ void strength_kernel(index_t n, const index_t* a_ptr, const index_t* a_col,
                                const double* a_val, const double* d, double theta, char* strong) {
  for (index_t i = index_t(blockIdx.x) * kBlock + index_t(threadIdx.x); i < n;
       i += index_t(gridDim.x) * kBlock)
    for (index_t k = a_ptr[i]; k < a_ptr[i + 1]; ++k) {
      const index_t j = a_col[k];
      strong[k] = j != i && fabs(a_val[k]) >= __dmul_rn(theta, sqrt(fabs(__dmul_rn(d[i], d[j]))));
    }
}

// MIS(2) states and keys as amg_setup.cpp's: a larger key wins; (state, priority, index).
constexpr std::uint64_t kOut = 0, kUndecided = 1, kIn = 2;

__device__ std::uint64_t mis_priority(index_t i) {  // splitmix64 of the index, 31 bits
  std::uint64_t z = std::uint64_t(i) + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return (z ^ (z >> 31)) & 0x7fffffffull;
}

__device__ bool has_strong(index_t i, const index_t* a_ptr, const char* strong) {
  for (index_t k = a_ptr[i]; k < a_ptr[i + 1]; ++k)
    if (strong[k]) return true;
  return false;
}

__device__ std::uint64_t strong_max(index_t i, const index_t* a_ptr, const index_t* a_col,
                                    const char* strong, const std::uint64_t* keys) {
  std::uint64_t best = keys[i];
  for (index_t k = a_ptr[i]; k < a_ptr[i + 1]; ++k)
    if (strong[k] && keys[a_col[k]] > best) best = keys[a_col[k]];
  return best;
}

__global__ void mis_start_kernel(index_t n, const index_t* a_ptr, const char* strong,
                                 std::uint64_t* state) {
  for (index_t i = index_t(blockIdx.x) * kBlock + index_t(threadIdx.x); i < n;
       i += index_t(gridDim.x) * kBlock)
    state[i] = has_strong(i, a_ptr, strong) ? kUndecided : kOut;
}

__global__ void mis_keys_kernel(index_t n, const std::uint64_t* state, std::uint64_t* keys) {
  for (index_t i = index_t(blockIdx.x) * kBlock + index_t(threadIdx.x); i < n;
       i += index_t(gridDim.x) * kBlock)
    keys[i] = (state[i] << 62) | (mis_priority(i) << 31) | std::uint64_t(i);
}

__global__ void mis_near_kernel(index_t n, const index_t* a_ptr, const index_t* a_col,
                                const char* strong, const std::uint64_t* keys,
                                std::uint64_t* near) {
  for (index_t i = index_t(blockIdx.x) * kBlock + index_t(threadIdx.x); i < n;
       i += index_t(gridDim.x) * kBlock)
    near[i] = strong_max(i, a_ptr, a_col, strong, keys);
}

// One round's decisions (distance2_independent_set's): the largest key within two steps joins,
// a row within two steps of a joined one drops out; *undecided = 1 if any row is left.
__global__ void mis_decide_kernel(index_t n, const index_t* a_ptr, const index_t* a_col,
                                  const char* strong, const std::uint64_t* keys,
                                  const std::uint64_t* near, std::uint64_t* state, int* undecided) {
  for (index_t i = index_t(blockIdx.x) * kBlock + index_t(threadIdx.x); i < n;
       i += index_t(gridDim.x) * kBlock) {
    if (state[i] != kUndecided) continue;
    const std::uint64_t best = strong_max(i, a_ptr, a_col, strong, near);
    if (best == keys[i])
      state[i] = kIn;
    else if ((best >> 62) == kIn)
      state[i] = kOut;
    else
      *undecided = 1;
  }
}

__global__ void root_flag_kernel(index_t n, const std::uint64_t* state, index_t* flag) {
  for (index_t i = index_t(blockIdx.x) * kBlock + index_t(threadIdx.x); i < n;
       i += index_t(gridDim.x) * kBlock)
    flag[i] = state[i] == kIn;
}

// A root's aggregate (roots numbered in row order: the exclusive scan of the flags), and each
// other row's first strong neighbour that is a root.
__global__ void join_roots_kernel(index_t n, const index_t* a_ptr, const index_t* a_col,
                                  const char* strong, const index_t* flag, const index_t* number,
                                  index_t* first) {
  for (index_t i = index_t(blockIdx.x) * kBlock + index_t(threadIdx.x); i < n;
       i += index_t(gridDim.x) * kBlock) {
    index_t f = flag[i] ? number[i] : -1;
    for (index_t k = a_ptr[i]; k < a_ptr[i + 1] && f < 0; ++k)
      if (strong[k] && flag[a_col[k]]) f = number[a_col[k]];
    first[i] = f;
  }
}

// A row without an aggregate in `first` joins its strongest aggregated strong neighbour's, the
// first on ties, and with tie > 0 on near-ties within that relative tolerance: MIS(2)'s pass
// (mis2_aggregate, tie 0) and the greedy's pass 2 (join_strongest, tie 1e-10, for a coarse level
// whose values stay on the device), each the host's test (best * 1 is best), so the same choice bit
// for bit. flag (where given)[i] = 1 where a row with strong neighbours is left over all the same.
__global__ void join_strongest_kernel(index_t n, const index_t* a_ptr, const index_t* a_col,
                                      const double* a_val, const char* strong, const index_t* first,
                                      double tie, index_t* of, index_t* flag) {
  for (index_t i = index_t(blockIdx.x) * kBlock + index_t(threadIdx.x); i < n;
       i += index_t(gridDim.x) * kBlock) {
    index_t a = first[i];
    if (a < 0) {
      double best = -1;
      for (index_t k = a_ptr[i]; k < a_ptr[i + 1]; ++k)
        if (strong[k] && first[a_col[k]] >= 0 && fabs(a_val[k]) > best * (1 + tie)) {
          best = fabs(a_val[k]);
          a = first[a_col[k]];
        }
    }
    of[i] = a;
    if (flag) flag[i] = a < 0 && has_strong(i, a_ptr, strong);
  }
}

// Leftovers (a strong graph that is not symmetric) each an aggregate, numbered after the others
// in row order.
__global__ void number_leftovers_kernel(index_t n, index_t base, const index_t* flag,
                                        const index_t* number, index_t* of) {
  for (index_t i = index_t(blockIdx.x) * kBlock + index_t(threadIdx.x); i < n;
       i += index_t(gridDim.x) * kBlock)
    if (flag[i]) of[i] = base + number[i];
}

// number = the exclusive scan of flag; returns the flags' total.
index_t exclusive_numbers(const DeviceArray<index_t>& flag, DeviceArray<index_t>& number) {
  const int n = int(flag.size());
  if (n == 0) return 0;
  std::size_t bytes = 0;
  CGS_CUDA_CHECK(
      cub::DeviceScan::ExclusiveSum(nullptr, bytes, flag.data(), number.data(), n, cuda::stream()));
  DeviceArray<char> scratch(bytes, "amg scan scratch");
  CGS_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(scratch.data(), bytes, flag.data(), number.data(), n,
                                               cuda::stream()));
  index_t last_number = 0, last_flag = 0;
  cuda::copy_to_host(&last_number, number.data() + (n - 1), sizeof(index_t));
  cuda::copy_to_host(&last_flag, flag.data() + (n - 1), sizeof(index_t));
  return last_number + last_flag;
}

}  // namespace
}  // namespace cgs::precond::amg
