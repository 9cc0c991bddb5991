// P's and R's patterns on the device (solver/precond/amg_gpu.cu): the arrays prolongator_pattern
// and transpose_with_map make on the host, P's one thread a row, R's by a stable sort of P's
// entries by column. Included by amg_gpu.cu only (its kernels and helpers live in an unnamed
// namespace there).
#pragma once

#include <cstdint>
#include <vector>

#include "solver/precond/amg_gpu_common.cuh"

namespace cgs::precond::amg {
namespace {

// ---- P's and R's patterns on the device (prolongator_pattern and transpose_with_map's arrays)

// Row i's candidates for P's columns: the aggregates of its own and its strong neighbours'
// entries (t < end: entry t of A), and its own aggregate again (t == end: also where A lacks
// the diagonal entry); -1 where the entry is weak or its row unaggregated.
__device__ index_t candidate(index_t i, index_t t, index_t end, const index_t* a_col,
                             const char* strong, const index_t* of) {
  if (t == end) return of[i];
  const index_t j = a_col[t];
  return j == i || strong[t] ? of[j] : -1;
}

// Whether candidate t of row i is the first of its value in the row (so each column once).
__device__ bool first_of_its_value(index_t i, index_t t, index_t begin, index_t end, index_t c,
                                   const index_t* a_col, const char* strong, const index_t* of) {
  for (index_t u = begin; u < t; ++u)
    if (candidate(i, u, end, a_col, strong, of) == c) return false;
  return true;
}

// visit(c) once for each distinct aggregate row i reaches (P's columns of row i), in A's order.
template <typename Visit>
__device__ void for_each_column_of_p(index_t i, index_t begin, index_t end, const index_t* a_col,
                                     const char* strong, const index_t* of, Visit visit) {
  for (index_t t = begin; t <= end; ++t) {
    const index_t c = candidate(i, t, end, a_col, strong, of);
    if (c >= 0 && first_of_its_value(i, t, begin, end, c, a_col, strong, of)) visit(c);
  }
}

// counts[i] = the number of P's columns in row i (distinct aggregates row i reaches).
__global__ void prolongator_count_kernel(index_t n, const index_t* a_ptr, const index_t* a_col,
                                         const char* strong, const index_t* of, index_t* counts) {
  for (index_t i = index_t(blockIdx.x) * kBlock + index_t(threadIdx.x); i < n;
       i += index_t(gridDim.x) * kBlock) {
    const index_t begin = a_ptr[i], end = a_ptr[i + 1];
    index_t count = 0;
    for_each_column_of_p(i, begin, end, a_col, strong, of, [&](index_t) { ++count; });
    counts[i] = count;
  }
}

// P's columns (ascending in each row) and where each entry of A adds into P (-1: nowhere): the
// row's distinct aggregates written, sorted in place (rows are short: 5-30 entries on
// Poisson), each entry's found by bisection. Quadratic in the row's length, no memory.
__global__ void prolongator_fill_kernel(index_t n, const index_t* a_ptr, const index_t* a_col,
                                        const char* strong, const index_t* of, const index_t* p_ptr,
                                        index_t* p_col, index_t* position) {
  for (index_t i = index_t(blockIdx.x) * kBlock + index_t(threadIdx.x); i < n;
       i += index_t(gridDim.x) * kBlock) {
    const index_t begin = a_ptr[i], end = a_ptr[i + 1], first = p_ptr[i];
    index_t last = first;
    for_each_column_of_p(i, begin, end, a_col, strong, of, [&](index_t c) { p_col[last++] = c; });
    for (index_t k = first + 1; k < last; ++k) {  // insertion sort
      const index_t c = p_col[k];
      index_t at = k;
      for (; at > first && p_col[at - 1] > c; --at) p_col[at] = p_col[at - 1];
      p_col[at] = c;
    }
    for (index_t t = begin; t < end; ++t) {
      const index_t c = candidate(i, t, end, a_col, strong, of);
      index_t lo = first, hi = last;
      while (lo < hi) {
        const index_t mid = lo + (hi - lo) / 2;
        if (p_col[mid] < c)
          lo = mid + 1;
        else
          hi = mid;
      }
      position[t] = c < 0 ? -1 : lo;
    }
  }
}

// size[a] = how many rows aggregate a holds (integer atomics: the same counts every time).
__global__ void aggregate_size_kernel(index_t n, const index_t* of, index_t* size) {
  for (index_t i = index_t(blockIdx.x) * kBlock + index_t(threadIdx.x); i < n;
       i += index_t(gridDim.x) * kBlock)
    if (of[i] >= 0) atomicAdd(size + of[i], index_t(1));
}

// The tentative values 1 / sqrt(size) (IEEE division and square root, as the host's).
__global__ void tentative_weight_kernel(index_t count, const index_t* size, double* weight) {
  for (index_t a = index_t(blockIdx.x) * kBlock + index_t(threadIdx.x); a < count;
       a += index_t(gridDim.x) * kBlock)
    weight[a] = 1 / sqrt(double(size[a]));
}

// For R = P^T: each entry's row (what becomes its column in R) and its own index (what the
// stable sort by column carries along).
__global__ void entry_rows_kernel(index_t n, const index_t* p_ptr, index_t* row_of,
                                  index_t* entry) {
  for (index_t i = index_t(blockIdx.x) * kBlock + index_t(threadIdx.x); i < n;
       i += index_t(gridDim.x) * kBlock)
    for (index_t k = p_ptr[i]; k < p_ptr[i + 1]; ++k) {
      row_of[k] = i;
      entry[k] = k;
    }
}

// counts[J] = entries of P in column J (R's row lengths).
__global__ void column_count_kernel(std::int64_t nnz, const index_t* p_col, index_t* counts) {
  for (std::int64_t k = std::int64_t(blockIdx.x) * kBlock + threadIdx.x; k < nnz;
       k += std::int64_t(gridDim.x) * kBlock)
    atomicAdd(counts + p_col[k], index_t(1));
}

// R's columns and P's map into R from the entries sorted by column (stably: rows ascend within
// a column, as transpose_with_map's): slot m of R holds P's entry order[m].
__global__ void restriction_fill_kernel(std::int64_t nnz, const index_t* order,
                                        const index_t* row_of, index_t* r_col, index_t* to_r) {
  for (std::int64_t m = std::int64_t(blockIdx.x) * kBlock + threadIdx.x; m < nnz;
       m += std::int64_t(gridDim.x) * kBlock) {
    const index_t k = order[m];
    r_col[m] = row_of[k];
    to_r[k] = index_t(m);
  }
}

// The last entry of a device array of row pointers: the matrix's nonzeros.
index_t last_of(const DeviceArray<index_t>& row_ptr) {
  index_t last = 0;
  cuda::copy_to_host(&last, row_ptr.data() + (row_ptr.size() - 1), sizeof(index_t));
  return last;
}

// Bits needed for keys 0 .. count-1 (the radix sort's passes).
int key_bits(index_t count) {
  int bits = 1;
  while (bits < 31 && (index_t(1) << bits) < count) ++bits;
  return bits;
}

// host = the device array (cuda::download_into: pages faulted in on every core first).
template <typename V>
void download_to(std::vector<V>& host, const DeviceArray<V>& device) {
  cuda::download_into(host, device.data(), device.size());
}

}  // namespace
}  // namespace cgs::precond::amg
