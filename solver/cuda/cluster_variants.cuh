// The latency pieces of the cluster CG loop's variants (issue 27, BENCHMARKS.md §13b), included
// by cluster_cg.cu only. §13 found an iteration latency-bound (87% of cycles with no eligible
// warp): a pass is a chain of dependent loads and of barriers. These pieces shorten the chain:
//   - loads through explicit state spaces: the block's own entries by ld.shared (a 32-bit
//     shared address, no generic-to-shared check), another block's by mapa + ld.shared::cluster;
//   - a row's entries loaded kChunk at a time, all their loads issued before the first use, so
//     that they are in flight together instead of one after the other;
//   - the cluster's totals summed by every warp (an xor butterfly: every lane the same bits), so
//     that every thread takes the CG decision itself: no thread-0 decision and block barrier.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace cgs::cluster::fast {

// The 32-bit shared-state-space address of a pointer into this block's shared memory.
__device__ __forceinline__ unsigned shared_address(const void* p) {
  return unsigned(__cvta_generic_to_shared(p));
}

// The same shared address in block `rank`'s shared memory, as a shared::cluster address.
__device__ __forceinline__ unsigned map_rank(unsigned address, unsigned rank) {
  unsigned out;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(out) : "r"(address), "r"(rank));
  return out;
}

// Loads from this block's shared memory (ld.shared) and from the cluster's (ld.shared::cluster).
// volatile: never merged or moved across the barriers (the values change between passes).
template <typename T>
__device__ __forceinline__ T load_shared(unsigned address);
template <>
__device__ __forceinline__ double load_shared<double>(unsigned address) {
  double v;
  asm volatile("ld.shared.f64 %0, [%1];" : "=d"(v) : "r"(address));
  return v;
}
template <>
__device__ __forceinline__ float load_shared<float>(unsigned address) {
  float v;
  asm volatile("ld.shared.f32 %0, [%1];" : "=f"(v) : "r"(address));
  return v;
}
template <>
__device__ __forceinline__ int load_shared<int>(unsigned address) {
  int v;
  asm volatile("ld.shared.s32 %0, [%1];" : "=r"(v) : "r"(address));
  return v;
}

template <typename T>
__device__ __forceinline__ T load_cluster(unsigned address);
template <>
__device__ __forceinline__ double load_cluster<double>(unsigned address) {
  double v;
  asm volatile("ld.shared::cluster.f64 %0, [%1];" : "=d"(v) : "r"(address));
  return v;
}
template <>
__device__ __forceinline__ float load_cluster<float>(unsigned address) {
  float v;
  asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(address));
  return v;
}

// Entry `local` of a vector whose shared address (the same in every block) is `base`, owned by
// block `owner`: ld.shared when it is this block's, else the mapped remote load.
template <typename T>
__device__ __forceinline__ T vector_entry(unsigned base, unsigned rank, unsigned owner,
                                          unsigned local) {
  const unsigned at = base + local * unsigned(sizeof(T));
  return owner == rank ? load_shared<T>(at) : load_cluster<T>(map_rank(at, owner));
}

// Where a block's sliced rows are: shared memory (32-bit addresses) or global memory (a batch:
// the rows read from L2 by every cluster).
template <typename T>
struct SlicedRows {
  bool in_shared;
  unsigned cols_at, values_at, slice_ptr_at, width_at;  // in_shared
  const int* cols;                                      // otherwise
  const T* values;
  const int* slice_ptr;
  const int* width;

  __device__ __forceinline__ int col(int k) const {
    return in_shared ? load_shared<int>(cols_at + 4u * unsigned(k)) : __ldg(cols + k);
  }
  __device__ __forceinline__ T value(int k) const {
    return in_shared ? load_shared<T>(values_at + unsigned(sizeof(T)) * unsigned(k))
                     : __ldg(values + k);
  }
  __device__ __forceinline__ int first(int slice) const {
    return in_shared ? load_shared<int>(slice_ptr_at + 4u * unsigned(slice))
                     : __ldg(slice_ptr + slice);
  }
  __device__ __forceinline__ int slice_width(int slice) const {
    return in_shared ? load_shared<int>(width_at + 4u * unsigned(slice)) : __ldg(width + slice);
  }
};

// Entries of a row loaded together: 4 (two vectors' entries each in pass A) keeps the kernel
// near its 64 registers at 1,024 threads; the one-reduction pass loads three or four vectors'
// entries per column and takes 2.
constexpr int kDefaultChunk = 4;

// (A v)_i for local row li of slices of kSlice rows; v_at(owner, local) loads v's entry. Each
// chunk's columns and values are loaded first, then its vector entries, then summed in order
// (the same sum as the base variant's, entry by entry).
template <int kSlice, int kLocalBits, int kChunk = kDefaultChunk, typename T, typename VAt>
__device__ __forceinline__ double row_product(const SlicedRows<T>& m, int li, VAt v_at) {
  const int slice = li / kSlice;
  const int base = m.first(slice) + li % kSlice, width = m.slice_width(slice);
  constexpr int kMask = (1 << kLocalBits) - 1;
  double sum = 0;
  for (int j0 = 0; j0 < width; j0 += kChunk) {
    int c[kChunk];
    T a[kChunk];
#pragma unroll
    for (int u = 0; u < kChunk; ++u) {
      const bool real = j0 + u < width;
      const int k = base + (j0 + u) * kSlice;
      c[u] = real ? m.col(k) : -1;
      a[u] = real ? m.value(k) : T(0);
    }
    T v[kChunk];
#pragma unroll
    for (int u = 0; u < kChunk; ++u)
      v[u] = c[u] < 0 ? T(0) : v_at(unsigned(c[u]) >> kLocalBits, unsigned(c[u] & kMask));
#pragma unroll
    for (int u = 0; u < kChunk; ++u) sum += double(a[u]) * double(v[u]);
  }
  return sum;
}

// The sum of `partial` over the cluster's first `blocks` blocks (lane b loads block b's), in
// every lane of the calling warp, the same bits in every warp of every block: an xor butterfly
// adds a + b in one lane and b + a in its partner, which are equal.
__device__ __forceinline__ double cluster_total(const double* partial, unsigned blocks) {
  const unsigned lane = threadIdx.x % 32;
  double v = lane < blocks ? load_cluster<double>(map_rank(shared_address(partial), lane)) : 0.0;
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

}  // namespace cgs::cluster::fast
