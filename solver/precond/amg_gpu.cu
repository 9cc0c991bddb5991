// AMG's numeric set-up phases on the GPU (solver/precond/amg_gpu.hpp).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <numeric>
#include <string>

#include "base/tuning.hpp"
#include "solver/precond/galerkin_gpu.cuh"
#include "solver/precond/setup_util.cuh"
#include "solver/precond/amg_gpu.hpp"
#include "solver/precond/amg_setup.hpp"
#include "solver/precond/amg_start.hpp"
#include "solver/precond/spectrum.hpp"
#include "spmv/cuda/cuda_common.cuh"
#include "spmv/cuda/cusparse_api.hpp"

namespace cgs::precond::amg {
namespace {

using cuda::counts_to_row_pointers;
using cuda::DeviceArray;
using Clock = std::chrono::steady_clock;

constexpr int kBlock = 256;
constexpr cusparseOperation_t kPlain = CUSPARSE_OPERATION_NON_TRANSPOSE;
constexpr cusparseSpGEMMAlg_t kAlg = CUSPARSE_SPGEMM_DEFAULT;

double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

int blocks_for(std::int64_t items) {
  return int(std::clamp<std::int64_t>((items + kBlock - 1) / kBlock, 1, 1 << 20));
}

// One thread a row of P, in the host's order (smooth_prolongator in amg_setup.cpp) and with its
// roundings (no fused multiply-adds), so that P agrees with the host's bit for bit: the row set
// to zero, T's entry, then - omega D_F^-1 A_F T through the positions of A's entries in P.
__global__ void smooth_prolongator_kernel(index_t n, const index_t* a_ptr, const index_t* a_col,
                                          const double* a_val, const index_t* position,
                                          const index_t* of, const double* weight,
                                          const double* diagonal, double omega,
                                          const index_t* p_ptr, const index_t* p_col,
                                          double* p_val) {
  for (index_t i = index_t(blockIdx.x) * kBlock + index_t(threadIdx.x); i < n;
       i += index_t(gridDim.x) * kBlock) {
    const index_t begin = p_ptr[i], end = p_ptr[i + 1];
    for (index_t k = begin; k < end; ++k) p_val[k] = 0;
    if (of[i] >= 0) {  // T's entry: the column of row i's aggregate (columns sorted)
      index_t lo = begin, hi = end;
      while (lo < hi) {
        const index_t mid = lo + (hi - lo) / 2;
        if (p_col[mid] < of[i])
          lo = mid + 1;
        else
          hi = mid;
      }
      p_val[lo] = __dadd_rn(p_val[lo], weight[of[i]]);
    }
    const double scale = __ddiv_rn(omega, diagonal[i]);
    for (index_t k = a_ptr[i]; k < a_ptr[i + 1]; ++k) {
      const index_t at = position[k];
      if (at < 0) continue;
      const index_t j = a_col[k];
      const double a = j == i ? diagonal[i] : a_val[k];
      p_val[at] = __dsub_rn(p_val[at], __dmul_rn(__dmul_rn(scale, a), weight[of[j]]));
    }
  }
}

// into[to[k]] = from[k]: P's values into R = P^T (to is a permutation, so no two threads write
// one entry).
__global__ void scatter_kernel(std::int64_t n, const double* from, const index_t* to,
                               double* into) {
  for (std::int64_t k = std::int64_t(blockIdx.x) * kBlock + threadIdx.x; k < n;
       k += std::int64_t(gridDim.x) * kBlock)
    into[to[k]] = from[k];
}

// y = S A_F S x with S = diag(scale): A's strong entries, the diagonal D_F, the weak entries
// dropped (spectrum_bounds's EntryFilter), one thread a row in the host's order.
__global__ void filtered_product_kernel(index_t n, const index_t* a_ptr, const index_t* a_col,
                                        const double* a_val, const char* strong,
                                        const double* diagonal, const double* scale,
                                        const double* x, double* y) {
  for (index_t i = index_t(blockIdx.x) * kBlock + index_t(threadIdx.x); i < n;
       i += index_t(gridDim.x) * kBlock) {
    double s = 0;
    for (index_t k = a_ptr[i]; k < a_ptr[i + 1]; ++k) {
      const index_t j = a_col[k];
      const double a = j == i ? diagonal[i] : strong[k] ? a_val[k] : 0.0;
      s += a * scale[j] * x[j];
    }
    y[i] = scale[i] * s;
  }
}

// Lanczos's vector steps: scale = D_F^-1/2; w -= a v + b v_old; to = from / divisor.
__global__ void inverse_sqrt_kernel(index_t n, const double* d, double* scale) {
  for (index_t i = index_t(blockIdx.x) * kBlock + index_t(threadIdx.x); i < n;
       i += index_t(gridDim.x) * kBlock)
    scale[i] = 1 / sqrt(d[i]);
}

__global__ void orthogonalize_kernel(index_t n, double a, double b, const double* v,
                                     const double* v_old, double* w) {
  for (index_t i = index_t(blockIdx.x) * kBlock + index_t(threadIdx.x); i < n;
       i += index_t(gridDim.x) * kBlock)
    w[i] -= a * v[i] + b * v_old[i];
}

// The hashed start vector's entries before normalization (hashed_lanczos_start's, amg_start.hpp).
__global__ void lanczos_start_kernel(index_t n, double* v) {
  for (index_t i = index_t(blockIdx.x) * kBlock + index_t(threadIdx.x); i < n;
       i += index_t(gridDim.x) * kBlock)
    v[i] = lanczos_start_entry(i);
}

__global__ void divide_kernel(index_t n, const double* from, double divisor, double* to) {
  for (index_t i = index_t(blockIdx.x) * kBlock + index_t(threadIdx.x); i < n;
       i += index_t(gridDim.x) * kBlock)
    to[i] = from[i] / divisor;
}

// Dot products in a fixed order: kReduceBlocks partial sums (a fixed grid, a tree in each
// block), summed on the host in block order; the same bits at every call.
constexpr int kReduceBlocks = 264;

__global__ void partial_dot_kernel(index_t n, const double* x, const double* y, double* partial) {
  __shared__ double sums[kBlock];
  double s = 0;
  for (index_t i = index_t(blockIdx.x) * kBlock + index_t(threadIdx.x); i < n;
       i += index_t(gridDim.x) * kBlock)
    s += x[i] * y[i];
  sums[threadIdx.x] = s;
  __syncthreads();
  for (int half = kBlock / 2; half > 0; half /= 2) {
    if (int(threadIdx.x) < half) sums[threadIdx.x] += sums[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = sums[0];
}

// ---- a level's own numbers on the device (no host pass over its rows, no copy of its diagonals)

// D_F (filtered_diagonal's): a_ii plus the row's weak entries, in the row's order; a_ii alone
// where that sum is not positive.
__global__ void filtered_diagonal_kernel(index_t n, const index_t* a_ptr, const index_t* a_col,
                                         const double* a_val, const char* strong, double* d) {
  for (index_t i = index_t(blockIdx.x) * kBlock + index_t(threadIdx.x); i < n;
       i += index_t(gridDim.x) * kBlock) {
    double a_ii = 0, weak = 0;
    for (index_t k = a_ptr[i]; k < a_ptr[i + 1]; ++k) {
      if (a_col[k] == i)
        a_ii += a_val[k];
      else if (!strong[k])
        weak += a_val[k];
    }
    d[i] = a_ii + weak > 0 ? a_ii + weak : a_ii;
  }
}

// Per block, the largest row sum of |diag(scale) M diag(scale)| (spectrum_bounds's Gershgorin
// pass, term by term: (m_ij s_i) s_j), M = A, or with `strong` A_F (the diagonal `diagonal`, the
// weak entries dropped: spectrum_bounds's EntryFilter). The maximum is exact in any order.
__global__ void partial_gershgorin_kernel(index_t n, const index_t* a_ptr, const index_t* a_col,
                                          const double* a_val, const char* strong,
                                          const double* diagonal, const double* scale,
                                          double* partial) {
  __shared__ double largest[kBlock];
  double mine = 0;
  for (index_t i = index_t(blockIdx.x) * kBlock + index_t(threadIdx.x); i < n;
       i += index_t(gridDim.x) * kBlock) {
    double s = 0;
    for (index_t k = a_ptr[i]; k < a_ptr[i + 1]; ++k) {
      const index_t j = a_col[k];
      const double m = !strong ? a_val[k] : j == i ? diagonal[i] : strong[k] ? a_val[k] : 0.0;
      s += fabs(__dmul_rn(__dmul_rn(m, scale[i]), scale[j]));
    }
    mine = fmax(mine, s);
  }
  largest[threadIdx.x] = mine;
  __syncthreads();
  for (int half = kBlock / 2; half > 0; half /= 2) {
    if (int(threadIdx.x) < half)
      largest[threadIdx.x] = fmax(largest[threadIdx.x], largest[threadIdx.x + half]);
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = largest[0];
}

// The smoothers' scale factor / d_i (amg.cpp's smoother_scale: D^-1 for Chebyshev, omega D^-1
// for Jacobi), IEEE division as the host's.
__global__ void scaled_inverse_kernel(index_t n, const double* d, double factor, double* out) {
  for (index_t i = index_t(blockIdx.x) * kBlock + index_t(threadIdx.x); i < n;
       i += index_t(gridDim.x) * kBlock)
    out[i] = __ddiv_rn(factor, d[i]);
}

// to[k] = from[order[k]]: R A P's values in the host's (ascending) column order.
__global__ void gather_kernel(std::int64_t n, const double* from, const std::int64_t* order,
                              double* to) {
  for (std::int64_t k = std::int64_t(blockIdx.x) * kBlock + threadIdx.x; k < n;
       k += std::int64_t(gridDim.x) * kBlock)
    to[k] = from[order[k]];
}

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

// A CSR matrix in device memory: its own arrays, or arrays lent by another owner (lend: read in
// place, never written or freed here). Its cuSPARSE descriptor is made on first request only
// (cusparse_descr: the SpGEMM side-by-side), so that the default set-up, on the project's own
// kernels, never loads the cuSPARSE library.
struct DeviceCsr {
  index_t rows = 0, cols = 0;
  std::int64_t nnz = 0;
  DeviceArray<index_t> row_ptr, col_idx;
  DeviceArray<double> values;
  CsrArrays lent;                                // all null unless lend()
  bool present = false;                          // uploaded or lent
  mutable cusparseSpMatDescr_t descr = nullptr;  // cusparse_descr() makes it

  DeviceCsr() = default;
  const index_t* ptr() const { return lent.row_ptr ? lent.row_ptr : row_ptr.data(); }
  const index_t* col() const { return lent.col_idx ? lent.col_idx : col_idx.data(); }
  const double* val() const { return lent.values ? lent.values : values.data(); }
  bool is_lent() const { return lent.values != nullptr; }
  CsrArrays arrays() const { return {ptr(), col(), val(), nnz}; }
  DeviceCsr(const DeviceCsr&) = delete;
  DeviceCsr& operator=(const DeviceCsr&) = delete;
  ~DeviceCsr() {
    if (descr) cuda::cusparse_api().destroy_sp_mat(descr);
  }

  // Pattern and values of M.
  void upload(const CsrMatrix<double>& M, const char* what) {
    rows = M.rows;
    cols = M.cols;
    nnz = std::int64_t(M.col_idx.size());
    row_ptr = DeviceArray<index_t>(M.row_ptr, what);
    col_idx = DeviceArray<index_t>(M.col_idx, what);
    values = DeviceArray<double>(M.values, what);
    arrays_changed();
  }
  // M's shape on arrays another owner keeps on the device with M's pattern (and, at each set-up,
  // its values; cuSPARSE only reads an SpGEMM's inputs).
  void lend(const CsrMatrix<double>& M, const CsrArrays& arrays) {
    const std::int64_t entries = std::int64_t(M.col_idx.size());  // values may stay on the device
    if (!arrays.row_ptr || !arrays.col_idx || !arrays.values || arrays.nnz != entries)
      throw DeviceError(
          "amg GPU set-up: a lent operator without all its arrays, or of another size");
    rows = M.rows;
    cols = M.cols;
    nnz = entries;
    lent = arrays;
    arrays_changed();
  }
  // After new arrays (uploaded, lent, or made on the device): a descriptor made before is stale.
  void arrays_changed() {
    present = true;
    if (descr) cuda::cusparse_api().destroy_sp_mat(descr);
    descr = nullptr;
  }
  // The cuSPARSE descriptor of the arrays here, made on first request.
  cusparseSpMatDescr_t cusparse_descr() const {
    if (descr) return descr;
    CGS_CUSPARSE_CHECK(cuda::cusparse_api().create_csr(
        &descr, rows, cols, nnz, const_cast<index_t*>(ptr()), const_cast<index_t*>(col()),
        const_cast<double*>(val()), CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
        CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    return descr;
  }
  void upload_values(const std::vector<double>& v) {
    if (is_lent()) throw std::logic_error("amg GPU set-up: values uploaded over a lent operator");
    if (std::int64_t(v.size()) != nnz)
      throw DeviceError("amg GPU set-up: new values for a pattern of another size");
    cuda::copy_to_device(values.data(), v.data(), values.bytes());
  }
};

// C = A B by cuSPARSE's SpGEMM with pattern reuse: the constructor runs the symbolic passes
// (work estimation, C's row counts, C's columns); compute() the numbers, as often as A's and B's
// values change on the same patterns. The buffers compute() needs stay with the object.
class ReusedProduct {
 public:
  ReusedProduct(const DeviceCsr& a, const DeviceCsr& b) : a_(a), b_(b) {
    cusparseHandle_t handle = cuda::cuda_context().cusparse();
    CGS_CUSPARSE_CHECK(cuda::cusparse_api().spgemm_create_descr(&plan_));
    c_.rows = a.rows;
    c_.cols = b.cols;
    c_.row_ptr = DeviceArray<index_t>(std::size_t(a.rows) + 1, "amg R A P row pointers");
    CGS_CUSPARSE_CHECK(cuda::cusparse_api().create_csr(
        &c_.descr, c_.rows, c_.cols, 0, c_.row_ptr.data(), nullptr, nullptr, CUSPARSE_INDEX_32I,
        CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    std::size_t size1 = 0;
    CGS_CUSPARSE_CHECK(cuda::cusparse_api().spgemm_reuse_work_estimation(
        handle, kPlain, kPlain, a.cusparse_descr(), b.cusparse_descr(), c_.descr, kAlg, plan_,
        &size1, nullptr));
    DeviceArray<char> buffer1(size1, "SpGEMM work estimation buffer");
    CGS_CUSPARSE_CHECK(cuda::cusparse_api().spgemm_reuse_work_estimation(
        handle, kPlain, kPlain, a.cusparse_descr(), b.cusparse_descr(), c_.descr, kAlg, plan_,
        &size1, buffer1.data()));
    std::size_t size2 = 0, size3 = 0, size4 = 0;
    CGS_CUSPARSE_CHECK(cuda::cusparse_api().spgemm_reuse_nnz(
        handle, kPlain, kPlain, a.cusparse_descr(), b.cusparse_descr(), c_.descr, kAlg, plan_,
        &size2, nullptr, &size3, nullptr, &size4, nullptr));
    DeviceArray<char> buffer2(size2, "SpGEMM nnz buffer");
    DeviceArray<char> buffer3(size3, "SpGEMM nnz buffer");
    buffer4_ = DeviceArray<char>(size4, "SpGEMM compute buffer");
    CGS_CUSPARSE_CHECK(cuda::cusparse_api().spgemm_reuse_nnz(
        handle, kPlain, kPlain, a.cusparse_descr(), b.cusparse_descr(), c_.descr, kAlg, plan_,
        &size2, buffer2.data(), &size3, buffer3.data(), &size4, buffer4_.data()));
    std::int64_t rows = 0, cols = 0, nnz = 0;
    CGS_CUSPARSE_CHECK(cuda::cusparse_api().sp_mat_get_size(c_.descr, &rows, &cols, &nnz));
    c_.nnz = nnz;
    c_.col_idx = DeviceArray<index_t>(std::size_t(nnz), "amg R A P columns");
    c_.values = DeviceArray<double>(std::size_t(nnz), "amg R A P values");
    CGS_CUSPARSE_CHECK(cuda::cusparse_api().csr_set_pointers(c_.descr, c_.row_ptr.data(),
                                                             c_.col_idx.data(), c_.values.data()));
    std::size_t size5 = 0;
    CGS_CUSPARSE_CHECK(cuda::cusparse_api().spgemm_reuse_copy(
        handle, kPlain, kPlain, a.cusparse_descr(), b.cusparse_descr(), c_.descr, kAlg, plan_,
        &size5, nullptr));
    buffer5_ = DeviceArray<char>(size5, "SpGEMM copy buffer");
    CGS_CUSPARSE_CHECK(cuda::cusparse_api().spgemm_reuse_copy(
        handle, kPlain, kPlain, a.cusparse_descr(), b.cusparse_descr(), c_.descr, kAlg, plan_,
        &size5, buffer5_.data()));
  }
  ReusedProduct(const ReusedProduct&) = delete;
  ReusedProduct& operator=(const ReusedProduct&) = delete;
  ~ReusedProduct() { cuda::cusparse_api().spgemm_destroy_descr(plan_); }

  void compute() {
    const double one = 1, zero = 0;
    CGS_CUSPARSE_CHECK(cuda::cusparse_api().spgemm_reuse_compute(
        cuda::cuda_context().cusparse(), kPlain, kPlain, &one, a_.cusparse_descr(),
        b_.cusparse_descr(), &zero, c_.descr, CUDA_R_64F, kAlg, plan_));
  }
  const DeviceCsr& result() const { return c_; }

 private:
  const DeviceCsr& a_;
  const DeviceCsr& b_;
  cusparseSpGEMMDescr_t plan_ = nullptr;
  DeviceCsr c_;
  DeviceArray<char> buffer4_, buffer5_;
};

// R A P by cuSPARSE's SpGEMM instead of the project's kernels (galerkin_gpu.cuh), for the
// side-by-side measurement (BENCHMARKS 20i): Tuning::amg_galerkin (CGSOLVE_AMG_GALERKIN=cusparse).
bool cusparse_galerkin() { return tuning().amg_galerkin == AmgGalerkin::cusparse; }

// Where each entry of C goes so that every row's columns ascend (the host's R A P has them so,
// and the next level's aggregation walks rows in column order); empty when they already do.
std::vector<std::int64_t> ascending_order(const CsrMatrix<double>& C) {
  bool sorted = true;
  for (index_t i = 0; i < C.rows && sorted; ++i)
    for (index_t k = C.row_ptr[i] + 1; k < C.row_ptr[i + 1]; ++k)
      if (C.col_idx[k - 1] >= C.col_idx[k]) sorted = false;
  if (sorted) return {};
  std::vector<std::int64_t> order(C.col_idx.size());
  std::iota(order.begin(), order.end(), 0);
  for (index_t i = 0; i < C.rows; ++i)
    std::sort(order.begin() + C.row_ptr[i], order.begin() + C.row_ptr[i + 1],
              [&](std::int64_t x, std::int64_t y) { return C.col_idx[x] < C.col_idx[y]; });
  return order;
}

template <typename V>
std::vector<V> permuted(const std::vector<V>& v, const std::vector<std::int64_t>& order) {
  if (order.empty()) return v;
  std::vector<V> out(v.size());
  for (std::size_t k = 0; k < v.size(); ++k) out[k] = v[std::size_t(order[k])];
  return out;
}

// Lanczos's work vectors on the device (made for each estimate and freed after it: 5 vectors of
// the level's rows would otherwise stay beside the hierarchy).
struct LanczosVectors {
  DeviceArray<double> scale, v, v_old, w, partial;

  explicit LanczosVectors(index_t n)
      : scale(std::size_t(n), "amg Lanczos scale"),
        v(std::size_t(n), "amg Lanczos vector"),
        v_old(std::size_t(n), "amg Lanczos vector"),
        w(std::size_t(n), "amg Lanczos vector"),
        partial(std::size_t(kReduceBlocks), "amg Lanczos partial sums") {}

  double dot(index_t n, const DeviceArray<double>& x, const DeviceArray<double>& y) {
    partial_dot_kernel<<<kReduceBlocks, kBlock, 0, cuda::stream()>>>(n, x.data(), y.data(),
                                                                     partial.data());
    CGS_CHECK_LAUNCH();
    std::vector<double> sums(static_cast<std::size_t>(kReduceBlocks));
    cuda::copy_to_host(sums.data(), partial.data(), partial.bytes());
    double total = 0;
    for (double s : sums) total += s;
    return total;
  }
};

class CudaLevelValues final : public GpuLevelValues {
 public:
  double filtered_radius(const CsrMatrix<double>& A, const std::vector<char>& strong,
                         const std::vector<double>& diagonal, int steps) override {
    operator_current_ = false;  // new values (or a new D_F) may have come since the last call
    upload_operator(A, diagonal);
    if (strong_.size() != strong.size())
      strong_ = DeviceArray<char>(strong, "amg strong couplings");
    return lanczos_radius(A.rows, steps);
  }

  // ---- the set-up's device path (amg_setup.cpp's level_values with gpu): no host pass over
  // the level's rows, D and D_F never copied, the next operator left on the device

  double operator_gershgorin(const CsrMatrix<double>& A) override {
    refresh_values(A);
    const index_t n = A.rows;
    if (d_.size() != std::size_t(n)) {  // kept: the smoothers' scale is made from it
      d_ = DeviceArray<double>(std::size_t(n), "amg diagonal");
      scale_ = DeviceArray<double>(std::size_t(n), "amg smoother scale");
    }
    diagonal_kernel<<<blocks_for(n), kBlock, 0, cuda::stream()>>>(n, a_.ptr(), a_.col(), a_.val(),
                                                                  d_.data());
    CGS_CHECK_LAUNCH();
    return gershgorin(n, nullptr, d_);
  }

  const double* smoother_scale(double factor) override {
    if (d_.size() == 0) throw std::logic_error("amg GPU set-up: a smoother scale before its D");
    const index_t n = index_t(d_.size());
    scaled_inverse_kernel<<<blocks_for(n), kBlock, 0, cuda::stream()>>>(n, d_.data(), factor,
                                                                        scale_.data());
    CGS_CHECK_LAUNCH();
    // The program (another stream, perhaps) reads it next, with the levels' arrays the set-up
    // wrote in place before it: all of them done here.
    CGS_CUDA_CHECK(cudaStreamSynchronize(cuda::stream()));
    return scale_.data();
  }

  double device_filtered_radius(const CsrMatrix<double>& A, int steps) override {
    refresh_values(A);
    const index_t n = A.rows;
    if (strong_.size() != std::size_t(a_.nnz))
      throw std::logic_error("amg GPU set-up: the filtered radius before the level's strength");
    if (diagonal_.size() != std::size_t(n))
      diagonal_ = DeviceArray<double>(std::size_t(n), "amg filtered diagonal");
    filtered_diagonal_kernel<<<blocks_for(n), kBlock, 0, cuda::stream()>>>(
        n, a_.ptr(), a_.col(), a_.val(), strong_.data(), diagonal_.data());
    CGS_CHECK_LAUNCH();
    return steps > 0 ? lanczos_radius(n, steps) : gershgorin(n, strong_.data(), diagonal_);
  }

  GpuPhaseSeconds device_compute(const CsrMatrix<double>& A, double omega, Level& level,
                                 CsrMatrix<double>& next, bool next_on_host) override {
    refresh_values(A);
    values_current_ = false;                              // the next set-up's values are new
    return numbers(A, omega, level, next, next_on_host);  // the pattern comes down at the first
  }

  CsrArrays device_next() const override {
    if (!planned_) return {};
    if (galerkin_) return galerkin_->arrays();  // rows already ascending
    const DeviceCsr& c = rap_->result();
    if (order_.empty()) return c.arrays();
    return {c.row_ptr.data(), next_columns_.data(), next_values_.data(), c.nnz};
  }

  void strength(const CsrMatrix<double>& A, double theta, std::vector<char>& strong) override {
    if (!a_.present) a_.upload(A, "amg level operator");
    values_with_pattern_ = true;
    const index_t n = A.rows;
    const int grid = blocks_for(n);
    DeviceArray<double> d(std::size_t(n), "amg diagonal");
    diagonal_kernel<<<grid, kBlock, 0, cuda::stream()>>>(n, a_.ptr(), a_.col(), a_.val(), d.data());
    strong_ = DeviceArray<char>(std::size_t(a_.nnz), "amg strong couplings");
    strength_kernel<<<grid, kBlock, 0, cuda::stream()>>>(n, a_.ptr(), a_.col(), a_.val(), d.data(),
                                                         theta, strong_.data());
    CGS_CHECK_LAUNCH();
    download_to(strong, strong_);
    strong_theta_ = theta;
  }

  void join_strongest(const std::vector<index_t>& first, std::vector<index_t>& of) override {
    const index_t n = a_.rows;
    if (first.size() != std::size_t(n) || strong_.size() != std::size_t(a_.nnz))
      throw std::logic_error("amg GPU set-up: the greedy's pass 2 before the level's strength");
    const DeviceArray<index_t> first_d(first, "amg greedy pass 1");
    DeviceArray<index_t> of_d(std::size_t(n), "amg greedy pass 2");
    join_strongest_kernel<<<blocks_for(n), kBlock, 0, cuda::stream()>>>(
        n, a_.ptr(), a_.col(), a_.val(), strong_.data(), first_d.data(), kGreedyTie, of_d.data(),
        nullptr);
    CGS_CHECK_LAUNCH();
    download_to(of, of_d);
  }

  void download_next_values(CsrMatrix<double>& next) override {
    const CsrArrays c = device_next();
    if (!c.values || std::size_t(c.nnz) != next.col_idx.size())
      throw std::logic_error("amg GPU set-up: no next operator on the device to download");
    cuda::download_into(next.values, c.values, std::size_t(c.nnz));
  }

  Aggregates mis2_aggregate(const CsrMatrix<double>& A) override {
    const index_t n = A.rows;
    const int grid = blocks_for(n);
    const index_t* ptr = a_.ptr();
    const index_t* col = a_.col();
    DeviceArray<std::uint64_t> state(std::size_t(n), "amg MIS(2) states");
    {
      DeviceArray<std::uint64_t> keys(std::size_t(n), "amg MIS(2) keys");
      DeviceArray<std::uint64_t> near(std::size_t(n), "amg MIS(2) keys");
      DeviceArray<int> undecided(1, "amg MIS(2) flag");
      mis_start_kernel<<<grid, kBlock, 0, cuda::stream()>>>(n, ptr, strong_.data(), state.data());
      for (int left = 1; left;) {  // rounds until no row is undecided
        CGS_CUDA_CHECK(cudaMemsetAsync(undecided.data(), 0, sizeof(int), cuda::stream()));
        mis_keys_kernel<<<grid, kBlock, 0, cuda::stream()>>>(n, state.data(), keys.data());
        mis_near_kernel<<<grid, kBlock, 0, cuda::stream()>>>(n, ptr, col, strong_.data(),
                                                             keys.data(), near.data());
        mis_decide_kernel<<<grid, kBlock, 0, cuda::stream()>>>(
            n, ptr, col, strong_.data(), keys.data(), near.data(), state.data(), undecided.data());
        CGS_CHECK_LAUNCH();
        cuda::copy_to_host(&left, undecided.data(), sizeof(int));
      }
    }
    DeviceArray<index_t> flag(std::size_t(n), "amg aggregation flags");
    DeviceArray<index_t> number(std::size_t(n), "amg aggregation numbers");
    DeviceArray<index_t> first(std::size_t(n), "amg aggregation roots");
    root_flag_kernel<<<grid, kBlock, 0, cuda::stream()>>>(n, state.data(), flag.data());
    CGS_CHECK_LAUNCH();
    Aggregates g;
    g.count = exclusive_numbers(flag, number);
    join_roots_kernel<<<grid, kBlock, 0, cuda::stream()>>>(n, ptr, col, strong_.data(), flag.data(),
                                                           number.data(), first.data());
    of_ = DeviceArray<index_t>(std::size_t(n), "amg aggregates");
    join_strongest_kernel<<<grid, kBlock, 0, cuda::stream()>>>(
        n, ptr, col, a_.val(), strong_.data(), first.data(), 0.0, of_.data(), flag.data());
    CGS_CHECK_LAUNCH();
    const index_t leftovers = exclusive_numbers(flag, number);
    number_leftovers_kernel<<<grid, kBlock, 0, cuda::stream()>>>(n, g.count, flag.data(),
                                                                 number.data(), of_.data());
    CGS_CHECK_LAUNCH();
    g.count += leftovers;
    download_to(g.of, of_);
    return g;
  }

  void keep_host_copies(bool keep) override { host_copies_ = keep; }

  void lend_operator(const CsrMatrix<double>& A, const CsrArrays& on_device) override {
    if (a_.present) throw std::logic_error("amg GPU set-up: A lent after its upload");
    a_.lend(A, on_device);
  }

  GpuPatternSeconds make_patterns(const CsrMatrix<double>& A, Level& level) override {
    GpuPatternSeconds seconds;
    auto start = Clock::now();
    upload_pattern_inputs(A, level);
    const index_t n = A.rows, aggregates = level.aggregates.count;
    p_.rows = n;
    p_.cols = aggregates;
    {
      DeviceArray<index_t> counts(std::size_t(n), "amg prolongator row counts");
      prolongator_count_kernel<<<blocks_for(n), kBlock, 0, cuda::stream()>>>(
          n, a_.ptr(), a_.col(), strong_.data(), of_.data(), counts.data());
      CGS_CHECK_LAUNCH();
      p_.row_ptr = DeviceArray<index_t>(std::size_t(n) + 1, "amg prolongator");
      counts_to_row_pointers(counts, p_.row_ptr);
    }
    p_.nnz = last_of(p_.row_ptr);
    p_.col_idx = DeviceArray<index_t>(std::size_t(p_.nnz), "amg prolongator");
    p_.values = DeviceArray<double>(std::size_t(p_.nnz), "amg prolongator");
    position_ = DeviceArray<index_t>(std::size_t(a_.nnz), "amg prolongator positions");
    prolongator_fill_kernel<<<blocks_for(n), kBlock, 0, cuda::stream()>>>(
        n, a_.ptr(), a_.col(), strong_.data(), of_.data(), p_.row_ptr.data(), p_.col_idx.data(),
        position_.data());
    CGS_CHECK_LAUNCH();
    p_.arrays_changed();
    {
      DeviceArray<index_t> size(std::size_t(aggregates), "amg aggregate sizes");
      CGS_CUDA_CHECK(cudaMemsetAsync(size.data(), 0, size.bytes(), cuda::stream()));
      aggregate_size_kernel<<<blocks_for(n), kBlock, 0, cuda::stream()>>>(n, of_.data(),
                                                                          size.data());
      weight_ = DeviceArray<double>(std::size_t(aggregates), "amg tentative weights");
      tentative_weight_kernel<<<blocks_for(aggregates), kBlock, 0, cuda::stream()>>>(
          aggregates, size.data(), weight_.data());
      CGS_CHECK_LAUNCH();
    }
    download_prolongator(level);
    seconds.prolongator = since(start);
    start = Clock::now();
    transpose_prolongator();
    download_restriction(level);
    seconds.restriction = since(start);
    patterns_on_device_ = true;
    return seconds;
  }

  GpuPhaseSeconds compute(const CsrMatrix<double>& A, const std::vector<double>& diagonal,
                          double omega, Level& level, CsrMatrix<double>& next) override {
    const auto start = Clock::now();
    if (!operator_current_) upload_operator(A, diagonal);  // filtered_radius may have
    operator_current_ = false;                             // the next set-up's are new
    const double upload = since(start);
    GpuPhaseSeconds seconds = numbers(A, omega, level, next, true);
    seconds.prolongator += upload;
    return seconds;
  }

  CsrArrays device_operator() const override { return planned_ ? a_.arrays() : CsrArrays{}; }
  CsrArrays device_prolongator() const override { return planned_ ? p_.arrays() : CsrArrays{}; }
  CsrArrays device_restriction() const override { return planned_ ? r_.arrays() : CsrArrays{}; }

 private:
  // A's values of this set-up on the device, once per set-up: uploaded unless strength() or
  // make_patterns() just did, or A is lent (its owner wrote them).
  void refresh_values(const CsrMatrix<double>& A) {
    if (!a_.present)
      a_.upload(A, "amg level operator");
    else if (!values_current_ && !values_with_pattern_ && !a_.is_lent())
      a_.upload_values(A.values);
    values_with_pattern_ = false;
    values_current_ = true;
  }

  // Gershgorin's bound of D^-1/2 M D^-1/2 (M = A, or A_F where strong is given, D = d): the
  // partial maxima of a fixed grid, the largest taken on the host.
  // Its scratch is kept with the object (cudaFree waits for the whole device: not once per call
  // at every set_values).
  double gershgorin(index_t n, const char* strong, const DeviceArray<double>& d) {
    if (gershgorin_scale_.size() != std::size_t(n))
      gershgorin_scale_ = DeviceArray<double>(std::size_t(n), "amg Gershgorin scale");
    if (gershgorin_partial_.size() != std::size_t(kReduceBlocks))
      gershgorin_partial_ =
          DeviceArray<double>(std::size_t(kReduceBlocks), "amg Gershgorin partial maxima");
    inverse_sqrt_kernel<<<blocks_for(n), kBlock, 0, cuda::stream()>>>(n, d.data(),
                                                                      gershgorin_scale_.data());
    partial_gershgorin_kernel<<<kReduceBlocks, kBlock, 0, cuda::stream()>>>(
        n, a_.ptr(), a_.col(), a_.val(), strong, d.data(), gershgorin_scale_.data(),
        gershgorin_partial_.data());
    CGS_CHECK_LAUNCH();
    std::vector<double> largest(std::size_t(kReduceBlocks), 0.0);
    cuda::copy_to_host(largest.data(), gershgorin_partial_.data(), gershgorin_partial_.bytes());
    return *std::max_element(largest.begin(), largest.end());
  }

  // rho(D_F^-1 A_F) by `steps` Lanczos steps on A, strong_ and diagonal_ as the device holds them.
  double lanczos_radius(index_t n, int steps) {
    steps = int(std::min<index_t>(n, steps));
    LanczosVectors L(n);
    const int grid = blocks_for(n);
    inverse_sqrt_kernel<<<grid, kBlock, 0, cuda::stream()>>>(n, diagonal_.data(), L.scale.data());
    // The host's hashed start, made here (the host's serial mt19937 stream took ~0.1 s at 9M
    // rows, and its upload more); normalized by a device sum: equal to the host's to rounding.
    lanczos_start_kernel<<<grid, kBlock, 0, cuda::stream()>>>(n, L.w.data());
    CGS_CHECK_LAUNCH();
    const double root = std::sqrt(L.dot(n, L.w, L.w));
    divide_kernel<<<grid, kBlock, 0, cuda::stream()>>>(n, L.w.data(), root, L.v.data());
    CGS_CHECK_LAUNCH();
    CGS_CUDA_CHECK(cudaMemsetAsync(L.v_old.data(), 0, L.v_old.bytes(), cuda::stream()));
    std::vector<double> alpha, beta;
    double beta_prev = 0;
    for (int j = 0; j < steps; ++j) {  // spectrum_bounds's loop
      filtered_product_kernel<<<grid, kBlock, 0, cuda::stream()>>>(
          n, a_.ptr(), a_.col(), a_.val(), strong_.data(), diagonal_.data(), L.scale.data(),
          L.v.data(), L.w.data());
      CGS_CHECK_LAUNCH();
      const double a = L.dot(n, L.w, L.v);
      orthogonalize_kernel<<<grid, kBlock, 0, cuda::stream()>>>(n, a, beta_prev, L.v.data(),
                                                                L.v_old.data(), L.w.data());
      CGS_CHECK_LAUNCH();
      const double b = std::sqrt(L.dot(n, L.w, L.w));
      alpha.push_back(a);
      if (j + 1 == steps || b <= 1e-12 * std::abs(a)) break;  // an invariant subspace: exact
      beta.push_back(b);
      std::swap(L.v_old, L.v);
      divide_kernel<<<grid, kBlock, 0, cuda::stream()>>>(n, L.w.data(), b, L.v.data());
      CGS_CHECK_LAUNCH();
      beta_prev = b;
    }
    return ritz_extremes(alpha, beta).second;
  }

  // P, R and R A P from A's values, D_F and omega on the device (compute's and device_compute's
  // common part); the next operator's values downloaded only where next_on_host.
  GpuPhaseSeconds numbers(const CsrMatrix<double>& A, double omega, Level& level,
                          CsrMatrix<double>& next, bool next_on_host) {
    GpuPhaseSeconds seconds;
    auto start = Clock::now();
    if (!planned_ && !patterns_on_device_) upload_patterns(level);
    smooth_prolongator_kernel<<<blocks_for(A.rows), kBlock, 0, cuda::stream()>>>(
        A.rows, a_.ptr(), a_.col(), a_.val(), position_.data(), of_.data(), weight_.data(),
        diagonal_.data(), omega, p_.row_ptr.data(), p_.col_idx.data(), p_.values.data());
    CGS_CHECK_LAUNCH();
    if (host_copies_) {
      CsrMatrix<double>& P = level.prolongator.P;
      cuda::copy_to_host(P.values.data(), p_.values.data(), p_.values.bytes());
    }
    seconds.prolongator = since(start);

    start = Clock::now();
    scatter_kernel<<<blocks_for(p_.nnz), kBlock, 0, cuda::stream()>>>(
        p_.nnz, p_.values.data(), to_r_.data(), r_.values.data());
    CGS_CHECK_LAUNCH();
    if (host_copies_) {
      CsrMatrix<double>& R = level.restriction.At;
      cuda::copy_to_host(R.values.data(), r_.values.data(), r_.values.bytes());
    }
    seconds.restriction = since(start);

    start = Clock::now();
    if (!planned_) {
      if (cusparse_galerkin()) {
        ra_ = std::make_unique<ReusedProduct>(r_, a_);
        rap_ = std::make_unique<ReusedProduct>(ra_->result(), p_);
      } else {
        galerkin_ = std::make_unique<GalerkinProduct>(a_.rows, r_.rows, r_.arrays(), a_.arrays(),
                                                      p_.arrays());
      }
    }
    if (galerkin_) {
      galerkin_->compute();
    } else {
      ra_->compute();
      rap_->compute();
    }
    seconds.galerkin = cuda::waited_since(start);
    start = Clock::now();
    next_operator(next, next_on_host);
    seconds.download = since(start);
    planned_ = true;
    return seconds;
  }

  // R A P in the host's order (each row's columns ascending, as the host's product gives them
  // and the next level's aggregation walks them). The first set-up downloads its pattern, finds
  // that order on the host and, where cuSPARSE's rows are not in it already, keeps a sorted
  // copy on the device; every set-up gathers the values into it there (the next level reads
  // them in place: device_next), and downloads them only where the host reads them (on_host:
  // the first set-up, host copies, the coarsest level's inverse), not 0.1 GB of level 1's at
  // every set_values of poisson2d:3000 and their upload again into the next level.
  void next_operator(CsrMatrix<double>& next, bool on_host) {
    if (galerkin_) {
      next_from_kernels(next, on_host);
      return;
    }
    const DeviceCsr& c = rap_->result();
    if (!planned_) {
      next.rows = c.rows;
      next.cols = c.cols;
      next.row_ptr.resize(std::size_t(c.rows) + 1);
      next.col_idx.resize(std::size_t(c.nnz));
      cuda::copy_to_host(next.row_ptr.data(), c.row_ptr.data(), next.row_ptr.size() * 4);
      cuda::copy_to_host(next.col_idx.data(), c.col_idx.data(), c.col_idx.bytes());
      order_ = ascending_order(next);
      if (!order_.empty()) {
        next.col_idx = permuted(next.col_idx, order_);
        next_order_ = DeviceArray<std::int64_t>(order_, "amg R A P order");
        next_columns_ = DeviceArray<index_t>(next.col_idx, "amg R A P columns, ascending");
        next_values_ = DeviceArray<double>(std::size_t(c.nnz), "amg R A P values, ascending");
      }
    }
    if (!order_.empty()) {
      gather_kernel<<<blocks_for(c.nnz), kBlock, 0, cuda::stream()>>>(
          c.nnz, c.values.data(), next_order_.data(), next_values_.data());
      CGS_CHECK_LAUNCH();
    }
    if (!on_host) return;
    next.values.resize(std::size_t(c.nnz));
    cuda::copy_to_host(next.values.data(), order_.empty() ? c.values.data() : next_values_.data(),
                       c.values.bytes());
  }

  // next_operator for the project's product: its rows already ascend, so no order is found or
  // kept; the pattern comes down at the first set-up, the values where the host reads them.
  void next_from_kernels(CsrMatrix<double>& next, bool on_host) {
    const GalerkinProduct& c = *galerkin_;
    const std::size_t nnz = std::size_t(c.nnz());
    if (!planned_) {
      next.rows = c.rows();
      next.cols = c.rows();
      download_to(next.row_ptr, c.row_ptr());
      cuda::download_into(next.col_idx, c.col_idx().data(), nnz);
    }
    if (!on_host) return;
    cuda::download_into(next.values, c.values().data(),
                        nnz);  // empty before where they stayed here
  }

  // A (its pattern at the first set-up, its values after) and D_F, for this set-up.
  void upload_operator(const CsrMatrix<double>& A, const std::vector<double>& diagonal) {
    if (!a_.present)
      a_.upload(A, "amg level operator");
    else if (!operator_current_ && !values_with_pattern_ && !a_.is_lent())
      a_.upload_values(A.values);  // a lent A already holds this set-up's values (its owner's)
    values_with_pattern_ = false;  // make_patterns's upload served this set-up; later ones not
    if (diagonal_.size() != std::size_t(A.rows))
      diagonal_ = DeviceArray<double>(std::size_t(A.rows), "amg filtered diagonal");
    cuda::copy_to_device(diagonal_.data(), diagonal.data(), diagonal_.bytes());
    operator_current_ = true;
  }

  // What the patterns are made from: A (values too: this set-up's), strength, aggregates.
  void upload_pattern_inputs(const CsrMatrix<double>& A, const Level& level) {
    if (!a_.present) a_.upload(A, "amg level operator");  // else strength() did
    values_with_pattern_ = true;
    // strength() left the level's couplings here unless a later retry of another theta was
    // dropped (level_pattern keeps the last aggregation that coarsened)
    if (!(strong_theta_ == level.theta && strong_.size() == level.strong.size()))
      strong_ = DeviceArray<char>(level.strong, "amg strong couplings");
    of_ = DeviceArray<index_t>(level.aggregates.of, "amg aggregates");
  }

  // R = P^T's pattern: P's entries stably sorted by column (cub's radix sort), R's row lengths
  // from P's column counts, and where each entry of P goes in R (to_r_).
  void transpose_prolongator() {
    const std::int64_t nnz = p_.nnz;
    const index_t aggregates = p_.cols;
    r_.rows = aggregates;
    r_.cols = p_.rows;
    r_.nnz = nnz;
    {
      DeviceArray<index_t> counts(std::size_t(aggregates), "amg restriction row counts");
      CGS_CUDA_CHECK(cudaMemsetAsync(counts.data(), 0, counts.bytes(), cuda::stream()));
      column_count_kernel<<<blocks_for(nnz), kBlock, 0, cuda::stream()>>>(nnz, p_.col_idx.data(),
                                                                          counts.data());
      CGS_CHECK_LAUNCH();
      r_.row_ptr = DeviceArray<index_t>(std::size_t(aggregates) + 1, "amg restriction");
      counts_to_row_pointers(counts, r_.row_ptr);
    }
    DeviceArray<index_t> row_of(std::size_t(nnz), "amg prolongator entry rows");
    DeviceArray<index_t> entry(std::size_t(nnz), "amg prolongator entries");
    DeviceArray<index_t> sorted_columns(std::size_t(nnz), "amg sorted columns");
    DeviceArray<index_t> order(std::size_t(nnz), "amg restriction order");
    entry_rows_kernel<<<blocks_for(p_.rows), kBlock, 0, cuda::stream()>>>(
        p_.rows, p_.row_ptr.data(), row_of.data(), entry.data());
    CGS_CHECK_LAUNCH();
    const int bits = key_bits(aggregates);
    std::size_t bytes = 0;
    CGS_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, p_.col_idx.data(),
                                                   sorted_columns.data(), entry.data(),
                                                   order.data(), nnz, 0, bits, cuda::stream()));
    DeviceArray<char> scratch(bytes, "amg radix sort scratch");
    CGS_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(scratch.data(), bytes, p_.col_idx.data(),
                                                   sorted_columns.data(), entry.data(),
                                                   order.data(), nnz, 0, bits, cuda::stream()));
    r_.col_idx = DeviceArray<index_t>(std::size_t(nnz), "amg restriction");
    r_.values = DeviceArray<double>(std::size_t(nnz), "amg restriction");
    to_r_ = DeviceArray<index_t>(std::size_t(nnz), "amg restriction positions");
    restriction_fill_kernel<<<blocks_for(nnz), kBlock, 0, cuda::stream()>>>(
        nnz, order.data(), row_of.data(), r_.col_idx.data(), to_r_.data());
    CGS_CHECK_LAUNCH();
    r_.arrays_changed();
  }

  // The host copies of what make_patterns made (the level's arrays, as the host set-up has them:
  // the next level's aggregation, the tests and a float program read them).
  void download_prolongator(Level& level) {
    Prolongator& p = level.prolongator;
    p = {};
    p.P.rows = p_.rows;
    p.P.cols = p_.cols;
    if (!host_copies_) return;
    download_to(p.P.row_ptr, p_.row_ptr);
    download_to(p.P.col_idx, p_.col_idx);
    p.P.values.assign(std::size_t(p_.nnz), 0.0);
    download_to(p.position, position_);
    download_to(p.weight, weight_);
  }
  void download_restriction(Level& level) {
    precond::Transposed& r = level.restriction;
    r = {};
    r.At.rows = r_.rows;
    r.At.cols = r_.cols;
    if (!host_copies_) return;
    download_to(r.At.row_ptr, r_.row_ptr);
    download_to(r.At.col_idx, r_.col_idx);
    r.At.values.assign(std::size_t(r_.nnz), 0.0);
    download_to(r.position, to_r_);
  }

  void upload_patterns(const Level& level) {
    p_.upload(level.prolongator.P, "amg prolongator");
    r_.upload(level.restriction.At, "amg restriction");
    position_ = DeviceArray<index_t>(level.prolongator.position, "amg prolongator positions");
    of_ = DeviceArray<index_t>(level.aggregates.of, "amg aggregates");
    weight_ = DeviceArray<double>(level.prolongator.weight, "amg tentative weights");
    to_r_ = DeviceArray<index_t>(level.restriction.position, "amg restriction positions");
  }

  bool planned_ = false;
  bool operator_current_ = false;     // A's values and D_F of this set-up already on the device
  bool values_with_pattern_ = false;  // make_patterns uploaded A's values of this set-up
  bool patterns_on_device_ = false;   // P's and R's patterns made here, not uploaded
  bool host_copies_ = true;           // P and R downloaded for the host's readers
  DeviceCsr a_, p_, r_;
  DeviceArray<char> strong_;
  DeviceArray<index_t> position_, of_, to_r_;
  DeviceArray<double> weight_, diagonal_;
  std::unique_ptr<GalerkinProduct> galerkin_;  // R A P by the project's kernels (the default)
  std::unique_ptr<ReusedProduct> ra_, rap_;    // or by cuSPARSE (CGSOLVE_AMG_GALERKIN=cusparse)
  std::vector<std::int64_t> order_;  // R A P's entries in ascending columns, empty if they are
  // ... and on the device with R A P's columns and values in that order (next_operator)
  DeviceArray<std::int64_t> next_order_;
  DeviceArray<index_t> next_columns_;
  DeviceArray<double> next_values_;
  DeviceArray<double> d_, scale_;  // A's diagonal and the smoothers' scale (operator_gershgorin)
  DeviceArray<double> gershgorin_scale_, gershgorin_partial_;  // gershgorin()'s scratch
  bool values_current_ = false;  // A's values of this set-up on the device (refresh_values)
  double strong_theta_ = -1;     // the threshold strong_ was made with by strength()
};

}  // namespace

std::unique_ptr<GpuLevelValues> make_gpu_level_values() {
  return std::make_unique<CudaLevelValues>();
}

CsrMatrix<double> device_galerkin_product(const CsrMatrix<double>& R, const CsrMatrix<double>& A,
                                          const CsrMatrix<double>& P, index_t* wide_rows) {
  if (R.cols != A.rows || A.cols != P.rows || P.cols != R.rows)
    throw std::invalid_argument("device_galerkin_product: R, A and P do not chain");
  DeviceCsr r, a, p;
  r.upload(R, "R A P test: R");
  a.upload(A, "R A P test: A");
  p.upload(P, "R A P test: P");
  GalerkinProduct c(A.rows, R.rows, r.arrays(), a.arrays(), p.arrays());
  c.compute();
  if (wide_rows) *wide_rows = c.wide_rows();
  CsrMatrix<double> C;
  C.rows = C.cols = R.rows;
  download_to(C.row_ptr, c.row_ptr());
  cuda::download_into(C.col_idx, c.col_idx().data(), std::size_t(c.nnz()));
  cuda::download_into(C.values, c.values().data(), std::size_t(c.nnz()));
  return C;
}

}  // namespace cgs::precond::amg
