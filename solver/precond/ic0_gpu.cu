// IC(0)'s set-up on the GPU (solver/precond/ic0_gpu.hpp): L's and L^T's patterns, both level
// schedules with the factor found on the way, new factors level by level, and the program's
// arrays, all kept on the device for the program to borrow.
#include <cooperative_groups.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_sort.cuh>
#include <string>
#include <type_traits>
#include <vector>

#include "formats/types.hpp"
#include "solver/precond/ic0_gpu.hpp"
#include "solver/precond/ic0_row.hpp"
#include "solver/precond/setup_util.cuh"
#include "spmv/cuda/cuda_common.cuh"

namespace cgs::precond {
namespace {

namespace cgrp = cooperative_groups;
using cuda::counts_to_row_pointers;
using cuda::DeviceArray;
using cuda::download;
using cuda::download_one;
using cuda::waited_since;
using Clock = std::chrono::steady_clock;

constexpr int kBlock = 256;

int blocks_for(std::int64_t items) {
  return int(std::max<std::int64_t>(
      1, std::min<std::int64_t>((items + kBlock - 1) / kBlock, std::int64_t(1) << 30)));
}

// The grid-stride loop of every one-thread-a-row kernel below.
#define CGS_FOR_EACH(i, count)                                                        \
  for (std::int64_t i = blockIdx.x * std::int64_t(kBlock) + threadIdx.x; i < (count); \
       i += std::int64_t(gridDim.x) * kBlock)

// Per row: its entries below and above the diagonal; the least row without a diagonal entry.
__global__ void count_kernel(index_t n, const index_t* a_ptr, const index_t* a_cols,
                             index_t* lower_counts, index_t* upper_counts, index_t* missing) {
  CGS_FOR_EACH(i, n) {
    index_t below = 0, above = 0;
    bool diagonal = false;
    for (index_t k = a_ptr[i]; k < a_ptr[i + 1]; ++k) {
      const index_t c = a_cols[k];
      below += c < i;
      above += c > i;
      diagonal = diagonal || c == i;
    }
    lower_counts[i] = below;
    upper_counts[i] = above;
    if (!diagonal) atomicMin(missing, index_t(i));
  }
}

// L's columns (A's strictly lower part) and L^T's (A's strictly upper part), row by row in A's
// order (columns ascending, as A's).
__global__ void fill_kernel(index_t n, const index_t* a_ptr, const index_t* a_cols,
                            const index_t* lower_ptr, index_t* lower_cols, const index_t* upper_ptr,
                            index_t* upper_cols) {
  CGS_FOR_EACH(i, n) {
    index_t below = lower_ptr[i], above = upper_ptr[i];
    for (index_t k = a_ptr[i]; k < a_ptr[i + 1]; ++k) {
      const index_t c = a_cols[k];
      if (c < i) lower_cols[below++] = c;
      if (c > i) upper_cols[above++] = c;
    }
  }
}

// For each entry (j, i) of L^T's pattern, where its mirror L(i, j) sits in L (a binary search in
// row i, as gather_mirrored_values); a missing mirror clears *symmetric.
__global__ void mirror_kernel(index_t n, const index_t* lower_ptr, const index_t* lower_cols,
                              const index_t* upper_ptr, const index_t* upper_cols, index_t* mirror,
                              int* symmetric) {
  CGS_FOR_EACH(j, n) {
    for (index_t s = upper_ptr[j]; s < upper_ptr[j + 1]; ++s) {
      const index_t i = upper_cols[s];
      index_t lo = lower_ptr[i], hi = lower_ptr[i + 1];  // the first column >= j in [lo, hi)
      while (lo < hi) {
        const index_t mid = lo + (hi - lo) / 2;
        if (lower_cols[mid] < j)
          lo = mid + 1;
        else
          hi = mid;
      }
      const bool found = lo < lower_ptr[i + 1] && lower_cols[lo] == index_t(j);
      mirror[s] = found ? lo : 0;
      if (!found) atomicExch(symmetric, 0);
    }
  }
}

// A's entries below the diagonal into L's values, A(i, i) into the pivots (ic0_load_row, as the
// host's load_lower).
__global__ void load_kernel(index_t n, const index_t* a_ptr, const index_t* a_cols,
                            const double* a_values, const index_t* lower_ptr, double* lower_values,
                            double* pivot) {
  CGS_FOR_EACH(i, n) {
    ic0_load_row(a_ptr, a_cols, a_values, index_t(i), lower_values + lower_ptr[i], pivot);
  }
}

// One triangular solve's side of Kahn's algorithm.
struct Front {
  const index_t* next_ptr;   // row i's successors (the rows that read it):
  const index_t* next_cols;  // next_cols[next_ptr[i] .. next_ptr[i + 1])
  index_t* waiting;          // per row, the rows it reads that are not done yet
  index_t* queue;            // the rows level by level, in the order they became ready
  index_t* level_start;      // level l: queue[level_start[l] .. level_start[l + 1])
  index_t* appended;         // [3]: rows made ready while level l ran, in appended[l % 3]
  index_t first_level;       // level 0's rows: queue[0 .. first_level)
};
struct Fronts {
  Front side[2];  // forward (factorised on the way), backward
};

// waiting[i] = the rows row i reads; those that read none are level 0, in queue's head (their
// count in *ready).
__global__ void ready_kernel(index_t n, const index_t* reads_ptr, index_t* waiting, index_t* queue,
                             index_t* ready) {
  CGS_FOR_EACH(i, n) {
    const index_t reads = reads_ptr[i + 1] - reads_ptr[i];
    waiting[i] = reads;
    if (reads == 0) queue[atomicAdd(ready, 1)] = index_t(i);
  }
}

// Both schedules, level by level, a grid sync between levels: each row of the level is done
// (the forward side factorises it), and each row that reads it counts one fewer row to wait
// for, joining the next level when none is left (its slot: atomicAdd on the level's counter).
// After the sync every thread reads how many joined; the counter of level l + 2 is cleared
// then: it was last read before this sync, and is next written after the next one. A row's
// level is thus one past the highest level of the rows it reads, the host's definition.
__global__ void __launch_bounds__(kBlock)
    kahn_kernel(Fronts fronts, Ic0Factor factor, index_t* levels, int* failed) {
  cgrp::grid_group grid = cgrp::this_grid();
  const std::int64_t me = blockIdx.x * std::int64_t(kBlock) + threadIdx.x;
  const std::int64_t stride = std::int64_t(gridDim.x) * kBlock;
  index_t lo[2] = {0, 0};
  index_t hi[2] = {fronts.side[0].first_level, fronts.side[1].first_level};
  if (me == 0) fronts.side[0].level_start[0] = fronts.side[1].level_start[0] = 0;
  for (index_t level = 0; lo[0] < hi[0] || lo[1] < hi[1]; ++level) {
    for (int s = 0; s < 2; ++s) {
      const Front& f = fronts.side[s];
      index_t* appended = f.appended + level % 3;
      for (std::int64_t q = lo[s] + me; q < hi[s]; q += stride) {
        const index_t row = __ldcg(f.queue + q);
        if (s == 0 && !ic0_factorize_row(factor, row, 0.0)) atomicExch(failed, 1);
        for (index_t e = f.next_ptr[row]; e < f.next_ptr[row + 1]; ++e) {
          const index_t k = f.next_cols[e];
          if (atomicSub(f.waiting + k, 1) == 1) f.queue[hi[s] + atomicAdd(appended, 1)] = k;
        }
      }
    }
    grid.sync();
    for (int s = 0; s < 2; ++s) {
      const Front& f = fronts.side[s];
      const index_t added = *static_cast<volatile index_t*>(f.appended + level % 3);
      if (me == 0) {
        if (lo[s] < hi[s]) {
          f.level_start[level + 1] = hi[s];
          levels[s] = level + 1;
        }
        f.appended[(level + 2) % 3] = 0;
      }
      lo[s] = hi[s];
      hi[s] += added;
    }
  }
}

// L's values again in the stored forward schedule (new values, or a shift): level by level, a
// grid sync between levels.
__global__ void __launch_bounds__(kBlock)
    factor_levels_kernel(Ic0Factor factor, const index_t* rows, const index_t* level_start,
                         index_t levels, double alpha, int* failed) {
  cgrp::grid_group grid = cgrp::this_grid();
  const std::int64_t me = blockIdx.x * std::int64_t(kBlock) + threadIdx.x;
  const std::int64_t stride = std::int64_t(gridDim.x) * kBlock;
  for (index_t l = 0; l < levels; ++l) {
    const index_t end = level_start[l + 1];
    for (std::int64_t q = level_start[l] + me; q < end; q += stride)
      if (!ic0_factorize_row(factor, rows[q], alpha)) atomicExch(failed, 1);
    if (l + 1 < levels) grid.sync();
  }
}

// L^T's values from their mirrors in L.
template <typename T>
__global__ void mirror_values_kernel(std::int64_t nnz, const index_t* mirror,
                                     const double* lower_values, T* upper_values) {
  CGS_FOR_EACH(s, nnz) upper_values[s] = T(lower_values[mirror[s]]);
}

template <typename T>
__global__ void inverse_kernel(index_t n, const double* pivot, T* inverse) {
  CGS_FOR_EACH(i, n) inverse[i] = T(__ddiv_rn(1.0, pivot[i]));
}

__global__ void cast_kernel(std::int64_t nnz, const double* from, float* to) {
  CGS_FOR_EACH(k, nnz) to[k] = float(from[k]);
}
#undef CGS_FOR_EACH

// Each level's rows sorted (ascending, or descending), from `queue` into `rows`.
void sort_levels(const DeviceArray<index_t>& queue, const index_t* level_start, index_t levels,
                 bool descending, DeviceArray<index_t>& rows) {
  const std::int64_t n = std::int64_t(queue.size());
  auto sort = [&](void* scratch, std::size_t& bytes) {
    if (descending)
      return cub::DeviceSegmentedSort::SortKeysDescending(scratch, bytes, queue.data(), rows.data(),
                                                          n, levels, level_start, level_start + 1,
                                                          cuda::stream());
    return cub::DeviceSegmentedSort::SortKeys(scratch, bytes, queue.data(), rows.data(), n, levels,
                                              level_start, level_start + 1, cuda::stream());
  };
  std::size_t bytes = 0;
  CGS_CUDA_CHECK(sort(nullptr, bytes));
  DeviceArray<char> scratch(std::max<std::size_t>(bytes, 1), "ic0: level sort scratch");
  CGS_CUDA_CHECK(sort(scratch.data(), bytes));
}

// The grid of a cooperative kernel: every block resident at once, at most two an SM (a grid
// sync costs more the more blocks meet; a 9M-row grid's widest level is 3,000 rows), no more
// than the rows need.
int cooperative_grid(const void* kernel, index_t n) {
  int per_sm = 0;
  CGS_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kBlock, 0));
  const int sms = cuda::cuda_context().sm_count;
  return std::max(1, std::min({per_sm * sms, 2 * sms, blocks_for(n)}));
}

template <typename T>
class CudaIc0 final : public Ic0Gpu<T> {
 public:
  bool analyze(const CsrMatrix<double>& A, const CsrArrays& on_device) override {
    n_ = A.rows;
    seconds_ = {};
    analyze_ok_ = false;
    auto start = Clock::now();
    place_pattern(A, on_device);
    if (!make_patterns()) return false;
    seconds_.pattern = waited_since(start);
    start = Clock::now();
    load_values(A, on_device, lower_values_.data(), pivot_.data());
    make_levels_and_factor();
    seconds_.levels = waited_since(start);
    return true;
  }

  bool analyze_factor_ok() const override { return analyze_ok_; }

  bool factorize(const CsrMatrix<double>& A, const CsrArrays& on_device, double alpha) override {
    const auto start = Clock::now();
    load_values(A, on_device, lower_values_.data(), pivot_.data());
    DeviceArray<int> failed(std::vector<int>{0}, "ic0: failed pivot");
    Ic0Factor factor = this->factor();
    const index_t* rows = forward_rows_.data();
    const index_t* level_start = forward_start_d_.data();
    index_t levels = index_t(forward_start_.size()) - 1;
    int* failed_ptr = failed.data();
    void* args[] = {&factor, &rows, &level_start, &levels, &alpha, &failed_ptr};
    const void* kernel = reinterpret_cast<const void*>(factor_levels_kernel);
    CGS_CUDA_CHECK(cudaLaunchCooperativeKernel(kernel, cooperative_grid(kernel, n_), kBlock, args,
                                               0, cuda::stream()));
    const bool ok = download_one(failed.data()) == 0;
    seconds_.factorisation = waited_since(start);
    return ok;
  }

  void write_program_values() override {
    const auto start = Clock::now();
    const std::int64_t nnz = lower_nnz();
    if (inverse_diagonal_.size() != std::size_t(n_)) {  // once: the program borrows these
      inverse_diagonal_ = DeviceArray<T>(std::size_t(n_), "ic0: 1 / L's diagonal");
      upper_values_ = DeviceArray<T>(std::size_t(nnz), "ic0: L^T's values");
      if constexpr (std::is_same_v<T, float>)
        lower_values_t_ = DeviceArray<float>(std::size_t(nnz), "ic0: L's values in float");
    }
    inverse_kernel<T><<<blocks_for(n_), kBlock, 0, cuda::stream()>>>(n_, pivot_.data(),
                                                                     inverse_diagonal_.data());
    CGS_CHECK_LAUNCH();
    mirror_values_kernel<T><<<blocks_for(nnz), kBlock, 0, cuda::stream()>>>(
        nnz, mirror_.data(), lower_values_.data(), upper_values_.data());
    CGS_CHECK_LAUNCH();
    if constexpr (std::is_same_v<T, float>) {
      cast_kernel<<<blocks_for(nnz), kBlock, 0, cuda::stream()>>>(nnz, lower_values_.data(),
                                                                  lower_values_t_.data());
      CGS_CHECK_LAUNCH();
    }
    seconds_.program = waited_since(start);
  }

  Ic0DeviceArrays<T> arrays() const override {
    Ic0DeviceArrays<T> a;
    a.lower_ptr = lower_ptr_.data();
    a.lower_cols = lower_cols_.data();
    if constexpr (std::is_same_v<T, float>)
      a.lower_values = lower_values_t_.data();
    else
      a.lower_values = lower_values_.data();
    a.upper_ptr = upper_ptr_.data();
    a.upper_cols = upper_cols_.data();
    a.upper_values = upper_values_.data();
    a.inverse_diagonal = inverse_diagonal_.data();
    a.forward_rows = forward_rows_.data();
    a.backward_rows = backward_rows_.data();
    return a;
  }
  const std::vector<index_t>& forward_start() const override { return forward_start_; }
  const std::vector<index_t>& backward_start() const override { return backward_start_; }
  std::int64_t lower_nnz() const override { return std::int64_t(lower_cols_.size()); }
  Ic0GpuSeconds seconds() const override { return seconds_; }
  int grid_blocks() const override { return grid_; }

  CsrMatrix<double> download_lower() const override {
    CsrMatrix<double> L;
    L.rows = L.cols = n_;
    L.row_ptr = download(lower_ptr_.data(), lower_ptr_.size());
    L.col_idx = download(lower_cols_.data(), lower_cols_.size());
    L.values = download(lower_values_.data(), lower_values_.size());
    return L;
  }
  std::vector<double> download_pivot() const override {
    return download(pivot_.data(), pivot_.size());
  }
  LevelSchedule download_forward() const override {
    return {download(forward_rows_.data(), forward_rows_.size()), forward_start_};
  }
  LevelSchedule download_backward() const override {
    return {download(backward_rows_.data(), backward_rows_.size()), backward_start_};
  }

 private:
  Ic0Factor factor() {
    return {lower_ptr_.data(), lower_cols_.data(), lower_values_.data(), pivot_.data()};
  }

  // A's pattern where the device holds it, else uploaded (and kept for the numeric passes).
  void place_pattern(const CsrMatrix<double>& A, const CsrArrays& on_device) {
    a_ptr_ = on_device.row_ptr;
    a_cols_ = on_device.col_idx;
    if (!a_ptr_ || !a_cols_) {
      a_ptr_copy_ = DeviceArray<index_t>(A.row_ptr, "ic0: A's row pointers");
      a_cols_copy_ = DeviceArray<index_t>(A.col_idx, "ic0: A's columns");
      a_ptr_ = a_ptr_copy_.data();
      a_cols_ = a_cols_copy_.data();
    }
  }

  // L's and L^T's patterns and where each L^T entry's mirror sits; false (nothing kept) when A's
  // pattern is not symmetric. InputError for a row without a diagonal entry, as the host's.
  bool make_patterns() {
    DeviceArray<index_t> lower_counts(std::size_t(n_), "ic0: L's row lengths");
    DeviceArray<index_t> upper_counts(std::size_t(n_), "ic0: L^T's row lengths");
    DeviceArray<index_t> missing(std::vector<index_t>{n_}, "ic0: a missing diagonal");
    count_kernel<<<blocks_for(n_), kBlock, 0, cuda::stream()>>>(
        n_, a_ptr_, a_cols_, lower_counts.data(), upper_counts.data(), missing.data());
    CGS_CHECK_LAUNCH();
    const index_t first_missing = download_one(missing.data());
    if (first_missing < n_)
      throw InputError("ic0: row " + std::to_string(first_missing + 1) + " has no diagonal entry");
    lower_ptr_ = DeviceArray<index_t>(std::size_t(n_) + 1, "ic0: L's row pointers");
    upper_ptr_ = DeviceArray<index_t>(std::size_t(n_) + 1, "ic0: L^T's row pointers");
    counts_to_row_pointers(lower_counts, lower_ptr_);
    counts_to_row_pointers(upper_counts, upper_ptr_);
    const index_t lower = download_one(lower_ptr_.data() + n_);
    const index_t upper = download_one(upper_ptr_.data() + n_);
    if (lower != upper) return false;
    lower_cols_ = DeviceArray<index_t>(std::size_t(lower), "ic0: L's columns");
    upper_cols_ = DeviceArray<index_t>(std::size_t(upper), "ic0: L^T's columns");
    fill_kernel<<<blocks_for(n_), kBlock, 0, cuda::stream()>>>(
        n_, a_ptr_, a_cols_, lower_ptr_.data(), lower_cols_.data(), upper_ptr_.data(),
        upper_cols_.data());
    CGS_CHECK_LAUNCH();
    mirror_ = DeviceArray<index_t>(std::size_t(upper), "ic0: L^T's mirrors in L");
    DeviceArray<int> symmetric(std::vector<int>{1}, "ic0: symmetric pattern");
    mirror_kernel<<<blocks_for(n_), kBlock, 0, cuda::stream()>>>(
        n_, lower_ptr_.data(), lower_cols_.data(), upper_ptr_.data(), upper_cols_.data(),
        mirror_.data(), symmetric.data());
    CGS_CHECK_LAUNCH();
    if (download_one(symmetric.data()) == 0) return false;
    lower_values_ = DeviceArray<double>(std::size_t(lower), "ic0: L's values");
    pivot_ = DeviceArray<double>(std::size_t(n_), "ic0: L's diagonal");
    return true;
  }

  // A's values (where the device holds them in double, else uploaded) into L's values and the
  // pivots.
  void load_values(const CsrMatrix<double>& A, const CsrArrays& on_device, double* lower,
                   double* pivot) {
    const double* a_values = on_device.values;
    if (!a_values) {
      if (a_values_.size() != A.values.size())
        a_values_ = DeviceArray<double>(A.values.size(), "ic0: A's values");
      cuda::copy_to_device(a_values_.data(), A.values.data(), a_values_.bytes());
      a_values = a_values_.data();
    }
    load_kernel<<<blocks_for(n_), kBlock, 0, cuda::stream()>>>(n_, a_ptr_, a_cols_, a_values,
                                                               lower_ptr_.data(), lower, pivot);
    CGS_CHECK_LAUNCH();
  }

  // Kahn's algorithm for both solves in one cooperative kernel (the forward rows factorised as
  // they come), then each level's rows sorted into the schedules the program reads.
  void make_levels_and_factor() {
    const std::size_t n = std::size_t(n_);
    DeviceArray<index_t> waiting(2 * n, "ic0: rows waited for");
    DeviceArray<index_t> queue[2] = {DeviceArray<index_t>(n, "ic0: forward queue"),
                                     DeviceArray<index_t>(n, "ic0: backward queue")};
    forward_start_d_ = DeviceArray<index_t>(n + 1, "ic0: forward level offsets");
    DeviceArray<index_t> backward_start_d(n + 1, "ic0: backward level offsets");
    DeviceArray<index_t> counters(std::vector<index_t>(10, 0), "ic0: level counters");
    DeviceArray<int> failed(std::vector<int>{0}, "ic0: failed pivot");
    // Forward: row i reads its L entries and is read by its L^T entries; backward the reverse.
    ready_kernel<<<blocks_for(n_), kBlock, 0, cuda::stream()>>>(
        n_, lower_ptr_.data(), waiting.data(), queue[0].data(), counters.data() + 6);
    CGS_CHECK_LAUNCH();
    ready_kernel<<<blocks_for(n_), kBlock, 0, cuda::stream()>>>(
        n_, upper_ptr_.data(), waiting.data() + n, queue[1].data(), counters.data() + 7);
    CGS_CHECK_LAUNCH();
    const std::vector<index_t> ready = download(counters.data() + 6, 2);
    Fronts fronts{};
    fronts.side[0] = {upper_ptr_.data(),       upper_cols_.data(), waiting.data(), queue[0].data(),
                      forward_start_d_.data(), counters.data(),    ready[0]};
    fronts.side[1] = {lower_ptr_.data(), lower_cols_.data(),      waiting.data() + n,
                      queue[1].data(),   backward_start_d.data(), counters.data() + 3,
                      ready[1]};
    Ic0Factor factor = this->factor();
    index_t* levels = counters.data() + 8;
    int* failed_ptr = failed.data();
    void* args[] = {&fronts, &factor, &levels, &failed_ptr};
    const void* kernel = reinterpret_cast<const void*>(kahn_kernel);
    grid_ = cooperative_grid(kernel, n_);
    CGS_CUDA_CHECK(cudaLaunchCooperativeKernel(kernel, grid_, kBlock, args, 0, cuda::stream()));
    const std::vector<index_t> counts = download(levels, 2);
    analyze_ok_ = download_one(failed.data()) == 0;
    forward_start_ = download(forward_start_d_.data(), std::size_t(counts[0]) + 1);
    backward_start_ = download(backward_start_d.data(), std::size_t(counts[1]) + 1);
    forward_rows_ = DeviceArray<index_t>(n, "ic0: forward schedule");
    backward_rows_ = DeviceArray<index_t>(n, "ic0: backward schedule");
    sort_levels(queue[0], forward_start_d_.data(), counts[0], false, forward_rows_);
    sort_levels(queue[1], backward_start_d.data(), counts[1], true, backward_rows_);
    cuda::synchronize();  // the sorts read the queues, freed on return
  }

  index_t n_ = 0;
  int grid_ = 0;
  bool analyze_ok_ = false;
  const index_t* a_ptr_ = nullptr;
  const index_t* a_cols_ = nullptr;
  DeviceArray<index_t> a_ptr_copy_, a_cols_copy_;
  DeviceArray<double> a_values_;
  DeviceArray<index_t> lower_ptr_, lower_cols_, upper_ptr_, upper_cols_, mirror_;
  DeviceArray<double> lower_values_, pivot_;
  DeviceArray<index_t> forward_rows_, backward_rows_, forward_start_d_;
  std::vector<index_t> forward_start_, backward_start_;
  DeviceArray<T> upper_values_, inverse_diagonal_;
  DeviceArray<float> lower_values_t_;  // L in float, for a float program
  Ic0GpuSeconds seconds_;
};

}  // namespace

template <typename T>
std::unique_ptr<Ic0Gpu<T>> make_ic0_gpu() {
  cuda::cuda_context();  // DeviceError here when no device can be used
  return std::make_unique<CudaIc0<T>>();
}

template std::unique_ptr<Ic0Gpu<float>> make_ic0_gpu();
template std::unique_ptr<Ic0Gpu<double>> make_ic0_gpu();

}  // namespace cgs::precond
