// FSAI's set-up on the GPU (solver/precond/fsai.hpp): the pattern of tril(A^k), G's rows and G^T,
// kept on the device for the program to borrow.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "solver/precond/setup_util.cuh"
#include "solver/precond/fsai.hpp"
#include "spmv/cuda/cuda_common.cuh"

namespace cgs::precond {
namespace {

using cuda::counts_to_row_pointers;
using cuda::DeviceArray;
using cuda::download_one;
using cuda::waited_since;
using Clock = std::chrono::steady_clock;

constexpr int kBlock = 256;
constexpr int kRowMax = kFsaiDeviceRowMax;

int blocks_for(std::int64_t items) {
  return int(std::max<std::int64_t>(
      1, std::min<std::int64_t>((items + kBlock - 1) / kBlock, std::int64_t(1) << 30)));
}

__global__ void pattern_count_kernel(index_t n, const index_t* a_ptr, const index_t* a_cols, int k,
                                     index_t* counts, index_t* long_rows, index_t* long_count) {
  index_t set[kRowMax];
  for (std::int64_t i = blockIdx.x * std::int64_t(kBlock) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * kBlock) {
    const int size = fsai_small_pattern(a_ptr, a_cols, index_t(i), k, set);
    counts[i] = size == kFsaiRowTooLong ? 0 : size;  // a long row's count comes from the host
    if (size == kFsaiRowTooLong) long_rows[atomicAdd(long_count, 1)] = index_t(i);
  }
}

__global__ void pattern_fill_kernel(index_t n, const index_t* a_ptr, const index_t* a_cols, int k,
                                    const index_t* g_ptr, index_t* g_cols) {
  index_t set[kRowMax];
  for (std::int64_t i = blockIdx.x * std::int64_t(kBlock) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * kBlock) {
    const int size = fsai_small_pattern(a_ptr, a_cols, index_t(i), k, set);
    if (size == kFsaiRowTooLong) continue;  // the host's columns are scattered in
    for (int q = 0; q < size; ++q) g_cols[g_ptr[i] + q] = set[q];
  }
}

// counts[rows[j]] = values[j] (the host's long rows).
__global__ void scatter_kernel(index_t m, const index_t* rows, const index_t* values,
                               index_t* counts) {
  for (std::int64_t j = blockIdx.x * std::int64_t(kBlock) + threadIdx.x; j < m;
       j += std::int64_t(gridDim.x) * kBlock)
    counts[rows[j]] = values[j];
}

// Row rows[j]'s entries from the host's concatenation at offsets[j] (one block a row).
template <typename E>
__global__ void scatter_rows_kernel(index_t m, const index_t* rows, const std::int64_t* offsets,
                                    const E* packed, const index_t* g_ptr, E* g) {
  for (index_t j = blockIdx.x; j < m; j += gridDim.x) {
    const index_t first = g_ptr[rows[j]], len = g_ptr[rows[j] + 1] - first;
    for (index_t q = threadIdx.x; q < len; q += blockDim.x) g[first + q] = packed[offsets[j] + q];
  }
}

// G's rows of shorter_than < m <= M entries (fsai_small_row, with A[p,p]'s packed triangle in
// local memory: M(M+1)/2 doubles); others are left to another launch (a larger M, or the host).
// A block not SPD sets *failed to the least such row.
template <int M>
__global__ void fsai_rows_kernel(index_t n, const index_t* a_ptr, const index_t* a_cols,
                                 const double* a_values, const index_t* g_ptr,
                                 const index_t* g_cols, double* g_values, int shorter_than,
                                 index_t* failed) {
  double L[M * (M + 1) / 2];
  index_t p[M];
  double g[M];
  for (std::int64_t row = blockIdx.x * std::int64_t(kBlock) + threadIdx.x; row < n;
       row += std::int64_t(gridDim.x) * kBlock) {
    const index_t first = g_ptr[row];
    const int m = int(g_ptr[row + 1] - first);
    if (m > M || m <= shorter_than) continue;
    for (int a = 0; a < m; ++a) p[a] = g_cols[first + a];
    if (!fsai_small_row(a_ptr, a_cols, a_values, p, m, L, g)) {
      atomicMin(failed, index_t(row));
      continue;
    }
    for (int a = 0; a < m; ++a) g_values[first + a] = g[a];
  }
}

// Each entry's row (row_of) and index (entry): the sort's payload for G^T.
__global__ void entry_rows_kernel(index_t n, const index_t* g_ptr, index_t* row_of,
                                  index_t* entry) {
  for (std::int64_t i = blockIdx.x * std::int64_t(kBlock) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * kBlock)
    for (index_t e = g_ptr[i]; e < g_ptr[i + 1]; ++e) {
      row_of[e] = index_t(i);
      entry[e] = e;
    }
}

__global__ void column_counts_kernel(std::int64_t nnz, const index_t* cols, index_t* counts) {
  for (std::int64_t e = blockIdx.x * std::int64_t(kBlock) + threadIdx.x; e < nnz;
       e += std::int64_t(gridDim.x) * kBlock)
    atomicAdd(&counts[cols[e]], 1);
}

// G^T's columns from the sorted order: position q of G^T holds G's entry order[q].
__global__ void transpose_columns_kernel(std::int64_t nnz, const index_t* order,
                                         const index_t* row_of, index_t* gt_cols) {
  for (std::int64_t q = blockIdx.x * std::int64_t(kBlock) + threadIdx.x; q < nnz;
       q += std::int64_t(gridDim.x) * kBlock)
    gt_cols[q] = row_of[order[q]];
}

template <typename T>
__global__ void gather_kernel(std::int64_t nnz, const index_t* order, const double* from, T* to) {
  for (std::int64_t q = blockIdx.x * std::int64_t(kBlock) + threadIdx.x; q < nnz;
       q += std::int64_t(gridDim.x) * kBlock)
    to[q] = T(from[order[q]]);
}

__global__ void cast_kernel(std::int64_t nnz, const double* from, float* to) {
  for (std::int64_t q = blockIdx.x * std::int64_t(kBlock) + threadIdx.x; q < nnz;
       q += std::int64_t(gridDim.x) * kBlock)
    to[q] = float(from[q]);
}

int key_bits(index_t n) {
  int bits = 1;
  while (bits < 31 && (index_t(1) << bits) < n) ++bits;
  return bits;
}

template <typename T>
class CudaFsai final : public FsaiGpu<T> {
 public:
  void analyze(const CsrMatrix<double>& A, int k, const CsrArrays& on_device) override {
    if (k < 1 || k > kFsaiDevicePowerMax)
      throw std::invalid_argument("fsai on the device: k must be 1 or 2");
    n_ = A.rows;
    k_ = k;
    seconds_ = {};
    auto start = Clock::now();
    place_pattern(A, on_device);
    make_pattern(A);
    seconds_.pattern = waited_since(start);
    start = Clock::now();
    make_transpose_pattern();
    seconds_.transpose = waited_since(start);
  }

  void compute(const CsrMatrix<double>& A, const CsrArrays& on_device) override {
    auto start = Clock::now();
    const double* a_values = on_device.values;
    if (!a_values) {  // A's values in double, uploaded (nothing lent, or a float backend)
      if (a_values_.size() != A.values.size())
        a_values_ = DeviceArray<double>(A.values.size(), "fsai: A's values");
      cuda::copy_to_device(a_values_.data(), A.values.data(), a_values_.bytes());
      a_values = a_values_.data();
    }
    compute_rows(A, a_values);
    seconds_.rows = waited_since(start);
    start = Clock::now();
    const std::int64_t nnz = std::int64_t(g_cols_.size());
    if constexpr (std::is_same_v<T, float>) {
      if (g_values_t_.size() != std::size_t(nnz))  // once: the program borrows this pointer
        g_values_t_ = DeviceArray<float>(std::size_t(nnz), "fsai: G in float");
      cast_kernel<<<blocks_for(nnz), kBlock, 0, cuda::stream()>>>(nnz, g_values_.data(),
                                                                  g_values_t_.data());
      CGS_CHECK_LAUNCH();
    }
    gather_kernel<T><<<blocks_for(nnz), kBlock, 0, cuda::stream()>>>(
        nnz, order_.data(), g_values_.data(), gt_values_.data());
    CGS_CHECK_LAUNCH();
    seconds_.transpose = waited_since(start);
  }

  FsaiDeviceCsr<T> g() const override {
    FsaiDeviceCsr<T> m{n_, g_ptr_.data(), g_cols_.data(), nullptr, std::int64_t(g_cols_.size())};
    if constexpr (std::is_same_v<T, float>)
      m.values = g_values_t_.data();
    else
      m.values = g_values_.data();
    return m;
  }
  FsaiDeviceCsr<T> gt() const override {
    return {n_, gt_ptr_.data(), gt_cols_.data(), gt_values_.data(), std::int64_t(gt_cols_.size())};
  }
  FsaiPhaseSeconds seconds() const override { return seconds_; }
  index_t rows_on_host() const override { return index_t(long_rows_.size()); }

  CsrMatrix<double> download_g() const override {
    return download(g_ptr_, g_cols_, g_values_.data());
  }
  CsrMatrix<double> download_gt() const override {
    const std::int64_t nnz = std::int64_t(gt_cols_.size());
    DeviceArray<double> values(std::size_t(nnz), "fsai: G^T in double");
    gather_kernel<double><<<blocks_for(nnz), kBlock, 0, cuda::stream()>>>(
        nnz, order_.data(), g_values_.data(), values.data());
    CGS_CHECK_LAUNCH();
    return download(gt_ptr_, gt_cols_, values.data());
  }

 private:
  // A's pattern where the device holds it, else uploaded (and kept for compute()).
  void place_pattern(const CsrMatrix<double>& A, const CsrArrays& on_device) {
    a_ptr_ = on_device.row_ptr;
    a_cols_ = on_device.col_idx;
    if (!a_ptr_ || !a_cols_) {
      a_ptr_copy_ = DeviceArray<index_t>(A.row_ptr, "fsai: A's row pointers");
      a_cols_copy_ = DeviceArray<index_t>(A.col_idx, "fsai: A's columns");
      a_ptr_ = a_ptr_copy_.data();
      a_cols_ = a_cols_copy_.data();
    }
  }

  // G's pattern: counted on the device (the long rows listed and made on the host), scanned,
  // filled; the long rows' columns scattered in.
  void make_pattern(const CsrMatrix<double>& A) {
    DeviceArray<index_t> counts(std::size_t(n_), "fsai: pattern counts");
    DeviceArray<index_t> long_rows(std::size_t(n_), "fsai: long rows");
    DeviceArray<index_t> long_count(std::vector<index_t>{0}, "fsai: long rows");
    pattern_count_kernel<<<blocks_for(n_), kBlock, 0, cuda::stream()>>>(
        n_, a_ptr_, a_cols_, k_, counts.data(), long_rows.data(), long_count.data());
    CGS_CHECK_LAUNCH();
    long_rows_.assign(std::size_t(download_one(long_count.data())), 0);
    if (!long_rows_.empty())
      cuda::copy_to_host(long_rows_.data(), long_rows.data(), long_rows_.size() * sizeof(index_t));
    std::sort(long_rows_.begin(), long_rows_.end());        // the atomics' order is not the rows'
    long_patterns_ = fsai_row_patterns(A, long_rows_, k_);  // on every host core
    if (!long_rows_.empty()) {
      long_rows_d_ = DeviceArray<index_t>(long_rows_, "fsai: long rows");
      std::vector<index_t> sizes;
      for (const auto& p : long_patterns_) sizes.push_back(index_t(p.size()));
      const DeviceArray<index_t> sizes_d(sizes, "fsai: long rows' sizes");
      scatter_kernel<<<blocks_for(std::int64_t(sizes.size())), kBlock, 0, cuda::stream()>>>(
          index_t(sizes.size()), long_rows_d_.data(), sizes_d.data(), counts.data());
      CGS_CHECK_LAUNCH();
    }
    g_ptr_ = DeviceArray<index_t>(std::size_t(n_) + 1, "fsai: G's row pointers");
    counts_to_row_pointers(counts, g_ptr_);
    const std::int64_t nnz = download_one(g_ptr_.data() + n_);
    g_cols_ = DeviceArray<index_t>(std::size_t(nnz), "fsai: G's columns");
    g_values_ = DeviceArray<double>(std::size_t(nnz), "fsai: G's values");
    pattern_fill_kernel<<<blocks_for(n_), kBlock, 0, cuda::stream()>>>(
        n_, a_ptr_, a_cols_, k_, g_ptr_.data(), g_cols_.data());
    CGS_CHECK_LAUNCH();
    if (!long_rows_.empty()) {
      std::vector<index_t> packed;
      for (const auto& p : long_patterns_) packed.insert(packed.end(), p.begin(), p.end());
      scatter_host_rows(packed, g_cols_.data());
    }
  }

  // The long rows' entries (concatenated in long_rows_' order) into their places in `g`.
  template <typename E>
  void scatter_host_rows(const std::vector<E>& packed, E* g) {
    std::vector<std::int64_t> offsets;
    std::int64_t at = 0;
    for (const auto& p : long_patterns_) {
      offsets.push_back(at);
      at += std::int64_t(p.size());
    }
    const DeviceArray<std::int64_t> offsets_d(offsets, "fsai: long rows' offsets");
    const DeviceArray<E> packed_d(packed, "fsai: long rows' entries");
    const index_t m = index_t(long_rows_.size());
    scatter_rows_kernel<E><<<int(std::min<index_t>(m, 65535)), kBlock, 0, cuda::stream()>>>(
        m, long_rows_d_.data(), offsets_d.data(), packed_d.data(), g_ptr_.data(), g);
    CGS_CHECK_LAUNCH();
  }

  // G^T: G's entries stably sorted by column (cub's radix sort keeps each column's rows in
  // ascending order, as transpose_with_map does), order_ kept for the values.
  void make_transpose_pattern() {
    const std::int64_t nnz = std::int64_t(g_cols_.size());
    DeviceArray<index_t> row_of(std::size_t(nnz), "fsai: entry rows");
    DeviceArray<index_t> entry(std::size_t(nnz), "fsai: entries");
    DeviceArray<index_t> sorted_columns(std::size_t(nnz), "fsai: sorted columns");
    order_ = DeviceArray<index_t>(std::size_t(nnz), "fsai: G^T's order");
    entry_rows_kernel<<<blocks_for(n_), kBlock, 0, cuda::stream()>>>(n_, g_ptr_.data(),
                                                                     row_of.data(), entry.data());
    CGS_CHECK_LAUNCH();
    std::size_t bytes = 0;
    const int bits = key_bits(n_);
    CGS_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, g_cols_.data(),
                                                   sorted_columns.data(), entry.data(),
                                                   order_.data(), nnz, 0, bits, cuda::stream()));
    DeviceArray<char> scratch(bytes, "fsai: sort scratch");
    CGS_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(scratch.data(), bytes, g_cols_.data(),
                                                   sorted_columns.data(), entry.data(),
                                                   order_.data(), nnz, 0, bits, cuda::stream()));
    DeviceArray<index_t> counts(std::size_t(n_), "fsai: G^T's counts");
    CGS_CUDA_CHECK(cudaMemsetAsync(counts.data(), 0, counts.bytes(), cuda::stream()));
    column_counts_kernel<<<blocks_for(nnz), kBlock, 0, cuda::stream()>>>(nnz, g_cols_.data(),
                                                                         counts.data());
    CGS_CHECK_LAUNCH();
    gt_ptr_ = DeviceArray<index_t>(std::size_t(n_) + 1, "fsai: G^T's row pointers");
    counts_to_row_pointers(counts, gt_ptr_);
    gt_cols_ = DeviceArray<index_t>(std::size_t(nnz), "fsai: G^T's columns");
    gt_values_ = DeviceArray<T>(std::size_t(nnz), "fsai: G^T's values");
    transpose_columns_kernel<<<blocks_for(nnz), kBlock, 0, cuda::stream()>>>(
        nnz, order_.data(), row_of.data(), gt_cols_.data());
    CGS_CHECK_LAUNCH();
  }

  // G's values: short rows by the kernel at the smallest local size that holds them, long rows
  // by the host's fsai_row (scattered in); the least failing row of either, as fsai_rows.
  void compute_rows(const CsrMatrix<double>& A, const double* a_values) {
    DeviceArray<index_t> failed(std::vector<index_t>{n_}, "fsai: failed row");
    auto launch = [&](auto kernel, int shorter_than) {
      kernel<<<blocks_for(n_), kBlock, 0, cuda::stream()>>>(
          n_, a_ptr_, a_cols_, a_values, g_ptr_.data(), g_cols_.data(), g_values_.data(),
          shorter_than, failed.data());
      CGS_CHECK_LAUNCH();
    };
    launch(fsai_rows_kernel<8>, 0);  // 5-point grids: fsai:2 rows of 7
    launch(fsai_rows_kernel<16>, 8);
    launch(fsai_rows_kernel<kRowMax>, 16);
    index_t first_failed = n_;
    if (!long_rows_.empty()) first_failed = host_rows(A);
    first_failed = std::min(first_failed, download_one(failed.data()));
    if (first_failed < n_) throw_fsai_not_spd(first_failed);
  }

  // The long rows' values on the host (fsai_listed_rows, on every core: nvcc builds this file
  // without OpenMP), scattered into G; the least row whose block is not SPD, or n_.
  index_t host_rows(const CsrMatrix<double>& A) {
    std::vector<double> packed;
    const index_t failed = fsai_listed_rows(A, long_rows_, long_patterns_, packed);
    scatter_host_rows(packed, g_values_.data());
    return failed;
  }

  CsrMatrix<double> download(const DeviceArray<index_t>& ptr, const DeviceArray<index_t>& cols,
                             const double* values) const {
    CsrMatrix<double> M;
    M.rows = M.cols = n_;
    M.row_ptr.resize(ptr.size());
    M.col_idx.resize(cols.size());
    M.values.resize(cols.size());
    cuda::copy_to_host(M.row_ptr.data(), ptr.data(), ptr.bytes());
    if (!M.col_idx.empty()) {
      cuda::copy_to_host(M.col_idx.data(), cols.data(), cols.bytes());
      cuda::copy_to_host(M.values.data(), values, M.values.size() * sizeof(double));
    }
    return M;
  }

  index_t n_ = 0;
  int k_ = 1;
  const index_t* a_ptr_ = nullptr;
  const index_t* a_cols_ = nullptr;
  DeviceArray<index_t> a_ptr_copy_, a_cols_copy_;
  DeviceArray<double> a_values_;
  std::vector<index_t> long_rows_;  // rows longer than kRowMax, ascending
  std::vector<std::vector<index_t>> long_patterns_;
  DeviceArray<index_t> long_rows_d_;
  DeviceArray<index_t> g_ptr_, g_cols_, gt_ptr_, gt_cols_, order_;
  DeviceArray<double> g_values_;
  DeviceArray<float> g_values_t_;  // G in float, for a float program
  DeviceArray<T> gt_values_;
  FsaiPhaseSeconds seconds_;
};

}  // namespace

template <typename T>
std::unique_ptr<FsaiGpu<T>> make_fsai_gpu() {
  cuda::cuda_context();  // DeviceError here when no device can be used
  return std::make_unique<CudaFsai<T>>();
}

template std::unique_ptr<FsaiGpu<float>> make_fsai_gpu();
template std::unique_ptr<FsaiGpu<double>> make_fsai_gpu();

}  // namespace cgs::precond
