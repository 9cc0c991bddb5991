// AMG's Galerkin product R A P on the device by the project's own kernels, as R (A P):
// two sparse products X Y, each with its pattern made once per hierarchy and its values at every
// set-up. cuSPARSE's SpGEMM (R A, then (R A) P, with pattern reuse) took 0.155-0.195 s of
// poisson2d:3000's set-up and 0.36 s of poisson3d:200's (BENCHMARKS 20h, 20i).
//   pattern   a warp per row I of X Y: its lanes walk X's row I and Y's rows and put each column
//             reached into the warp's hash table in shared memory; counted, scanned into row
//             pointers, then walked again and each row's columns written in ascending order (the
//             host's order, which the next level's aggregation reads). A row with more columns
//             than a table holds (small, dense coarse levels) is done by a block with a bitmap of
//             the columns instead.
//   values    a warp per row I: the row's entries set to 0, then X's entries in order, each
//             one's products with Y's row spread over the lanes (Y's row has distinct columns,
//             so no two lanes add to one entry) and added, with the host's roundings (no fused
//             multiply-adds), to the entry found by bisection in the row's columns. So every
//             entry sums its terms in sparse_product's order: the values equal the host's
//             R (A P) (sparse_product(R, sparse_product(A, P))) bit for bit, at every run, with
//             no atomics. (The host itself takes the triple product R A P without A P where A's
//             rows hold at most 8 entries, a cheaper order there on a CPU: equal to rounding.)
// A thread per row of R A P through A's and P's rows (no A P stored) was measured first: 3.5x
// slower on poisson2d:3000 and up to 170 ms on poisson3d:200's small coarse levels, whose few
// long rows ran one thread each (BENCHMARKS 20i).
#pragma once

#include <cstdint>
#include <cub/block/block_scan.cuh>
#include <memory>

#include "solver/precond/setup_util.cuh"
#include "solver/precond/program_spec.hpp"  // CsrArrays
#include "spmv/cuda/cuda_common.cuh"

namespace cgs::precond::amg {

namespace galerkin_detail {

constexpr int kWarps = 4;            // warps a block in the pattern and value kernels
constexpr int kSlots = 1024;         // a warp's hash table (a power of two)
constexpr int kLimit = kSlots - 64;  // more columns than this: the row is a wide one
constexpr int kWideThreads = 256;    // a wide row's block
constexpr int kWideBlocks = 64;      // at most this many wide rows at once (their bitmaps)

struct Factors {
  const index_t *x_ptr, *x_col;
  const double* x_val;
  const index_t *y_ptr, *y_col;
  const double* y_val;
};

// Calls visit(J) for the columns of row I's terms, X's entries from `first` in steps of
// `stride` (a warp's lanes or a block's threads share the row); stops where visit is false.
template <typename Visit>
__device__ void visit_columns(const Factors& f, index_t I, int first, int stride, Visit visit) {
  for (index_t r = f.x_ptr[I] + first; r < f.x_ptr[I + 1]; r += stride) {
    const index_t i = f.x_col[r];
    for (index_t q = f.y_ptr[i]; q < f.y_ptr[i + 1]; ++q)
      if (!visit(f.y_col[q])) return;
  }
}

// Column J into the warp's table (open addressing); false once the table holds kLimit columns.
// At most 32 lanes insert at once, so the table never fills and probing ends.
__device__ __forceinline__ bool table_insert(index_t* table, int* filled, index_t J) {
  unsigned h = (unsigned(J) * 2654435761u) & unsigned(kSlots - 1);
  for (;;) {
    const index_t seen = *reinterpret_cast<volatile index_t*>(&table[h]);
    if (seen == J) return true;
    if (seen < 0) {
      if (*reinterpret_cast<volatile int*>(filled) >= kLimit) return false;
      const index_t before = atomicCAS(&table[h], index_t(-1), J);
      if (before < 0) {
        atomicAdd(filled, 1);
        return true;
      }
      if (before == J) return true;
    }
    h = (h + 1) & unsigned(kSlots - 1);
  }
}

// The warp's table filled with row I's columns; false where the row is a wide one.
__device__ bool table_of_row(const Factors& f, index_t I, index_t* table, int* filled) {
  const int lane = int(threadIdx.x % 32);
  for (int s = lane; s < kSlots; s += 32) table[s] = -1;
  if (lane == 0) *filled = 0;
  __syncwarp();
  bool fits = true;
  visit_columns(f, I, lane, 32, [&](index_t J) { return fits = table_insert(table, filled, J); });
  return __all_sync(0xffffffffu, fits);
}

// count[I] = the number of columns of row I, or -1 for a wide row.
__global__ void __launch_bounds__(kWarps * 32)
    count_kernel(Factors f, index_t rows, index_t* count) {
  __shared__ index_t tables[kWarps][kSlots];
  __shared__ int filled[kWarps];
  const int w = int(threadIdx.x / 32);
  for (index_t I = index_t(blockIdx.x) * kWarps + w; I < rows; I += index_t(gridDim.x) * kWarps) {
    const bool fits = table_of_row(f, I, tables[w], &filled[w]);
    __syncwarp();
    if (threadIdx.x % 32 == 0) count[I] = fits ? filled[w] : -1;
    __syncwarp();
  }
}

// Row I's columns, ascending, at c_ptr[I] (rows that fit a table; wide ones are skipped).
__global__ void __launch_bounds__(kWarps * 32)
    fill_kernel(Factors f, index_t rows, const index_t* count, const index_t* c_ptr,
                index_t* c_col) {
  __shared__ index_t tables[kWarps][kSlots];
  __shared__ index_t lists[kWarps][kSlots];
  __shared__ int filled[kWarps];
  const int w = int(threadIdx.x / 32), lane = int(threadIdx.x % 32);
  for (index_t I = index_t(blockIdx.x) * kWarps + w; I < rows; I += index_t(gridDim.x) * kWarps) {
    if (count[I] < 0) continue;  // the same for the whole warp
    table_of_row(f, I, tables[w], &filled[w]);
    __syncwarp();
    int listed = 0;  // the table's columns, compacted
    for (int s0 = 0; s0 < kSlots; s0 += 32) {
      const index_t J = tables[w][s0 + lane];
      const unsigned present = __ballot_sync(0xffffffffu, J >= 0);
      if (J >= 0) lists[w][listed + __popc(present & ((1u << lane) - 1))] = J;
      listed += __popc(present);
    }
    __syncwarp();
    const index_t begin = c_ptr[I];
    for (int k = lane; k < listed; k += 32) {  // each column's rank among the row's
      const index_t J = lists[w][k];
      int rank = 0;
      for (int m = 0; m < listed; ++m) rank += lists[w][m] < J;
      c_col[begin + rank] = J;
    }
    __syncwarp();
  }
}

// A wide row's columns as bits of the block's bitmap (words of 32 columns); returns how many
// were new to it (per thread).
__device__ int mark_columns(const Factors& f, index_t I, unsigned* bitmap) {
  int added = 0;
  visit_columns(f, I, int(threadIdx.x), kWideThreads, [&](index_t J) {
    const unsigned bit = 1u << (J % 32);
    if (!(atomicOr(&bitmap[J / 32], bit) & bit)) ++added;
    return true;
  });
  return added;
}

// Wide rows (the list `wide`), a block each at a time: count[I] by the bitmap (cleared after).
__global__ void __launch_bounds__(kWideThreads)
    wide_count_kernel(Factors f, const index_t* wide, index_t wide_rows, index_t words,
                      unsigned* bitmaps, index_t* count) {
  using Scan = cub::BlockScan<int, kWideThreads>;
  __shared__ typename Scan::TempStorage scan;
  unsigned* bitmap = bitmaps + std::int64_t(blockIdx.x) * words;
  for (index_t w = blockIdx.x; w < wide_rows; w += gridDim.x) {
    const index_t I = wide[w];
    const int added = mark_columns(f, I, bitmap);
    int before = 0, total = 0;
    Scan(scan).ExclusiveSum(added, before, total);
    if (threadIdx.x == 0) count[I] = total;
    for (index_t k = threadIdx.x; k < words; k += kWideThreads) bitmap[k] = 0;
    __syncthreads();
  }
}

// Wide rows' columns in ascending order, read off the bitmap (cleared after).
__global__ void __launch_bounds__(kWideThreads)
    wide_fill_kernel(Factors f, const index_t* wide, index_t wide_rows, index_t words,
                     unsigned* bitmaps, const index_t* c_ptr, index_t* c_col) {
  using Scan = cub::BlockScan<int, kWideThreads>;
  __shared__ typename Scan::TempStorage scan;
  unsigned* bitmap = bitmaps + std::int64_t(blockIdx.x) * words;
  // Each thread reads a contiguous share of the words, so the shares' counts scan in order.
  const index_t share = (words + kWideThreads - 1) / kWideThreads;
  const index_t from = min(words, index_t(threadIdx.x) * share), to = min(words, from + share);
  for (index_t w = blockIdx.x; w < wide_rows; w += gridDim.x) {
    const index_t I = wide[w];
    mark_columns(f, I, bitmap);
    __syncthreads();
    int mine = 0;
    for (index_t k = from; k < to; ++k) mine += __popc(bitmap[k]);
    int at = 0;
    Scan(scan).ExclusiveSum(mine, at);
    index_t out = c_ptr[I] + at;
    for (index_t k = from; k < to; ++k) {
      for (unsigned bits = bitmap[k]; bits; bits &= bits - 1)
        c_col[out++] = k * 32 + __ffs(bits) - 1;
      bitmap[k] = 0;
    }
    __syncthreads();
  }
}

// Row I's values, a warp a row: 0, then X's entries in order, each one's terms with Y's row
// (distinct columns) over the lanes, with sparse_product's roundings.
__global__ void __launch_bounds__(kWarps * 32)
    values_kernel(Factors f, index_t rows, const index_t* c_ptr, const index_t* c_col,
                  double* c_val) {
  const int lane = int(threadIdx.x % 32);
  for (index_t I = index_t(blockIdx.x) * kWarps + index_t(threadIdx.x / 32); I < rows;
       I += index_t(gridDim.x) * kWarps) {
    const index_t begin = c_ptr[I], end = c_ptr[I + 1];
    for (index_t k = begin + lane; k < end; k += 32) c_val[k] = 0;
    __syncwarp();
    for (index_t r = f.x_ptr[I]; r < f.x_ptr[I + 1]; ++r) {
      const index_t i = f.x_col[r];
      const double x = f.x_val[r];
      for (index_t q = f.y_ptr[i] + lane; q < f.y_ptr[i + 1]; q += 32) {
        const index_t J = f.y_col[q];
        index_t lo = begin, hi = end - 1;  // J is in the row: bisect to it
        while (lo < hi) {
          const index_t mid = lo + (hi - lo) / 2;
          if (c_col[mid] < J)
            lo = mid + 1;
          else
            hi = mid;
        }
        c_val[lo] = __dadd_rn(c_val[lo], __dmul_rn(x, f.y_val[q]));
      }
      __syncwarp();  // this entry's adds before the next one's to the same entries
    }
  }
}

// The rows whose count is -1, listed in `wide` (in any order); their number in `found`.
__global__ void list_wide_kernel(index_t rows, const index_t* count, index_t* wide,
                                 index_t* found) {
  for (index_t I = index_t(blockIdx.x) * blockDim.x + index_t(threadIdx.x); I < rows;
       I += index_t(gridDim.x) * blockDim.x)
    if (count[I] < 0) wide[atomicAdd(found, index_t(1))] = I;
}

inline int grid_of(std::int64_t items, int per_block) {
  return int(std::max<std::int64_t>(
      1, std::min<std::int64_t>((items + per_block - 1) / per_block, 1 << 16)));
}

}  // namespace galerkin_detail

// C = X Y (CSR on the device; Y's rows without repeated columns) by the kernels above. The
// constructor makes C's pattern from the factors' patterns (each row's columns ascending);
// compute() C's values from the factors' values, as often as they change on the same patterns.
// The factors' arrays must stay where they are for the object's life.
class SparseProduct {
 public:
  SparseProduct(index_t rows, index_t cols, CsrArrays x, CsrArrays y)
      : rows_(rows), cols_(cols), f_{x.row_ptr, x.col_idx, x.values,
                                     y.row_ptr, y.col_idx, y.values} {
    using namespace galerkin_detail;
    using cuda::DeviceArray;
    cudaStream_t s = cuda::stream();
    const std::size_t n = std::size_t(std::max<index_t>(rows, 1));
    DeviceArray<index_t> count(n, "sparse product row counts");
    DeviceArray<index_t> found(1, "sparse product wide rows");
    DeviceArray<index_t> wide(n, "sparse product wide rows");
    CGS_CUDA_CHECK(cudaMemsetAsync(found.data(), 0, sizeof(index_t), s));
    if (rows > 0) {
      count_kernel<<<grid_of(rows, kWarps), kWarps * 32, 0, s>>>(f_, rows, count.data());
      list_wide_kernel<<<grid_of(rows, 256), 256, 0, s>>>(rows, count.data(), wide.data(),
                                                          found.data());
      CGS_CHECK_LAUNCH();
    }
    wide_rows_ = cuda::download_one(found.data());
    const index_t words = (cols + 31) / 32;
    const int wide_grid = int(std::min<index_t>(wide_rows_, kWideBlocks));
    DeviceArray<unsigned> bitmaps;
    if (wide_rows_ > 0) {  // counted by bitmaps
      bitmaps = DeviceArray<unsigned>(std::size_t(wide_grid) * std::size_t(words),
                                      "sparse product wide rows' bitmaps");
      CGS_CUDA_CHECK(cudaMemsetAsync(bitmaps.data(), 0, bitmaps.bytes(), s));
      wide_count_kernel<<<wide_grid, kWideThreads, 0, s>>>(f_, wide.data(), wide_rows_, words,
                                                           bitmaps.data(), count.data());
      CGS_CHECK_LAUNCH();
    }
    row_ptr_ = DeviceArray<index_t>(std::size_t(rows) + 1, "sparse product row pointers");
    if (rows > 0)
      cuda::counts_to_row_pointers(count, row_ptr_);
    else
      CGS_CUDA_CHECK(cudaMemsetAsync(row_ptr_.data(), 0, sizeof(index_t), s));
    nnz_ = cuda::download_one(row_ptr_.data() + rows);
    const std::size_t entries = std::size_t(std::max<std::int64_t>(nnz_, 1));
    col_idx_ = DeviceArray<index_t>(entries, "sparse product columns");
    values_ = DeviceArray<double>(entries, "sparse product values");
    if (rows > 0) {
      fill_kernel<<<grid_of(rows, kWarps), kWarps * 32, 0, s>>>(f_, rows, count.data(),
                                                                row_ptr_.data(), col_idx_.data());
      CGS_CHECK_LAUNCH();
    }
    if (wide_rows_ > 0) {
      wide_fill_kernel<<<wide_grid, kWideThreads, 0, s>>>(
          f_, wide.data(), wide_rows_, words, bitmaps.data(), row_ptr_.data(), col_idx_.data());
      CGS_CHECK_LAUNCH();
    }
    cuda::synchronize();  // the scratch above is freed on return
  }
  SparseProduct(const SparseProduct&) = delete;
  SparseProduct& operator=(const SparseProduct&) = delete;

  void compute() {
    using namespace galerkin_detail;
    if (rows_ == 0) return;
    values_kernel<<<grid_of(rows_, kWarps), kWarps * 32, 0, cuda::stream()>>>(
        f_, rows_, row_ptr_.data(), col_idx_.data(), values_.data());
    CGS_CHECK_LAUNCH();
  }

  index_t rows() const { return rows_; }
  index_t cols() const { return cols_; }
  std::int64_t nnz() const { return nnz_; }
  index_t wide_rows() const { return wide_rows_; }  // rows made by bitmaps (tests)
  const cuda::DeviceArray<index_t>& row_ptr() const { return row_ptr_; }
  const cuda::DeviceArray<index_t>& col_idx() const { return col_idx_; }
  const cuda::DeviceArray<double>& values() const { return values_; }
  CsrArrays arrays() const { return {row_ptr_.data(), col_idx_.data(), values_.data(), nnz_}; }

 private:
  index_t rows_ = 0, cols_ = 0;
  galerkin_detail::Factors f_;
  std::int64_t nnz_ = 0;
  index_t wide_rows_ = 0;
  cuda::DeviceArray<index_t> row_ptr_, col_idx_;
  cuda::DeviceArray<double> values_;
};

// R A P (R: nc x n, A: n x n, P: n x nc) as R (A P). A P is kept (its pattern, and its values
// for each set-up's second product): at poisson2d:3000's finest level 1.8x A's entries.
class GalerkinProduct {
 public:
  GalerkinProduct(index_t n, index_t nc, CsrArrays r, CsrArrays a, CsrArrays p)
      : ap_(n, nc, a, p), rap_(nc, nc, r, ap_.arrays()) {}

  void compute() {
    ap_.compute();
    rap_.compute();
  }

  index_t rows() const { return rap_.rows(); }
  std::int64_t nnz() const { return rap_.nnz(); }
  index_t wide_rows() const { return ap_.wide_rows() + rap_.wide_rows(); }
  const cuda::DeviceArray<index_t>& row_ptr() const { return rap_.row_ptr(); }
  const cuda::DeviceArray<index_t>& col_idx() const { return rap_.col_idx(); }
  const cuda::DeviceArray<double>& values() const { return rap_.values(); }
  CsrArrays arrays() const { return rap_.arrays(); }

 private:
  SparseProduct ap_, rap_;
};

}  // namespace cgs::precond::amg
