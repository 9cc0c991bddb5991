// COO kernel: the warp-level segmented scan.
//
// The K nonzeros are divided evenly among the W warps of the grid, ceil(K / W) each (the last
// warp fewer, some none). A warp walks its range 32 entries at a time: each lane forms one
// product, a segmented inclusive scan keyed by row sums the products of each row within those
// 32, and the last lane of each segment holds its row's sum. A row that lies wholly inside the
// 32 entries is stored; a row that continues into the previous or next entries (straddling
// chunks or warps) adds its piece with atomicAdd, so y is zeroed first (which also gives empty
// rows their 0).
//
// The scan runs either with warp shuffles (default) or in shared memory (the textbook form;
// __syncwarp between each read and write keeps it race-free under independent thread
// scheduling).
//
// The fused CG loops need a product row by row, which a scan over entries is not: for them the
// backend keeps each row's first entry (row_start, rows + 1 indices built once) and lends the
// row function of coo_device.cuh; the COO arrays are the same.
#include <algorithm>

#include "formats/convert.hpp"
#include "spmv/cuda/cuda_backend_base.cuh"
#include "spmv/kernel_registry.hpp"

namespace cgs::cuda {
namespace {

struct ShuffleScan {
  __device__ double operator()(double value, index_t row, int lane) const {
#pragma unroll
    for (int offset = 1; offset < 32; offset *= 2) {
      const double other = __shfl_up_sync(kFullMask, value, offset);
      const index_t other_row = __shfl_up_sync(kFullMask, row, offset);
      // Rows are sorted, so an equal key `offset` lanes back means the same segment throughout.
      if (lane >= offset && other_row == row) value += other;
    }
    return value;
  }
};

// Shared memory of the calling warp: 32 partial sums and 32 row keys.
struct SharedScan {
  double* sums;
  index_t* rows;

  __device__ double operator()(double value, index_t row, int lane) const {
    rows[lane] = row;
    sums[lane] = value;
    __syncwarp();
#pragma unroll
    for (int offset = 1; offset < 32; offset *= 2) {
      const double other = lane >= offset && rows[lane - offset] == row ? sums[lane - offset] : 0.0;
      __syncwarp();  // every read of this step before any write
      value += other;
      sums[lane] = value;
      __syncwarp();  // every write before the next step's reads
    }
    return value;
  }
};

template <typename T, bool kSharedScan>
__global__ void coo_segscan_kernel(long long nnz, long long per_warp,
                                   const index_t* __restrict__ row_idx,
                                   const index_t* __restrict__ col_idx,
                                   const T* __restrict__ values, const T* __restrict__ x,
                                   T* __restrict__ y) {
  extern __shared__ double coo_scratch[];  // used by the shared-memory scan only
  const int lane = threadIdx.x % 32;
  const int warp_in_block = threadIdx.x / 32;
  const long long warp = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const long long begin = warp * per_warp;
  const long long end = min(begin + per_warp, nnz);
  // blockDim.x sums, then blockDim.x row keys; 32 of each per warp.
  double* warp_sums = coo_scratch + warp_in_block * 32;
  index_t* warp_rows = reinterpret_cast<index_t*>(coo_scratch + blockDim.x) + warp_in_block * 32;

  // `chunk` is the same for every lane, so the warp stays converged for its shuffles.
  for (long long chunk = begin; chunk < end; chunk += 32) {
    const long long i = chunk + lane;
    const bool valid = i < end;
    const index_t row = valid ? row_idx[i] : -1;  // -1 never matches a real row
    const double value = valid ? product(values[i], x[col_idx[i]]) : 0.0;

    double sum;
    if constexpr (kSharedScan) {
      sum = SharedScan{warp_sums, warp_rows}(value, row, lane);
    } else {
      sum = ShuffleScan{}(value, row, lane);
    }

    const int last_lane = int(min(end - chunk, 32LL)) - 1;
    const index_t next_row = __shfl_down_sync(kFullMask, row, 1);
    const index_t first_row = __shfl_sync(kFullMask, row, 0);
    const bool segment_end = valid && (lane == last_lane || next_row != row);
    if (segment_end) {
      const bool continues_before = row == first_row && chunk > 0 && row_idx[chunk - 1] == row;
      const bool continues_after = lane == last_lane && i + 1 < nnz && row_idx[i + 1] == row;
      if (continues_before || continues_after) {
        atomicAdd(&y[row], T(sum));
      } else {
        y[row] = T(sum);
      }
    }
  }
}

template <typename T>
class CooCudaBackend final : public CudaBackendBase<T> {
 public:
  CooCudaBackend(const CsrMatrix<T>& A, bool shared_scan, LaunchShape shape)
      : CudaBackendBase<T>(Format::coo, A,
                           shared_scan ? "coo/cuda-segscan-shared" : "coo/cuda-segscan-shfl"),
        shared_scan_(shared_scan),
        shape_(shape) {
    const CooMatrix<T> coo = to_coo(A);
    row_start_ = DeviceArray<index_t>(A.row_ptr, "COO row starts");  // CSR order = COO order
    row_idx_ = DeviceArray<index_t>(coo.row_idx, "COO row indices");
    col_idx_ = DeviceArray<index_t>(coo.col_idx, "COO column indices");
    values_ = DeviceArray<T>(coo.values, "COO values");
    grid_ = default_grid(A.nnz());
    const long long warps = (long long)grid_ * (shape_.block_size / 32);
    per_warp_ = std::max<long long>(1, (A.nnz() + warps - 1) / warps);
    this->warm_up(shape.warm_up);
  }

  void apply(const T* x, T* y) override {
    if (this->rows() == 0) return;
    CGS_CUDA_CHECK(cudaMemsetAsync(y, 0, sizeof(T) * std::size_t(this->rows()), stream()));
    if (this->nnz() == 0) return;
    const std::size_t shared_bytes =
        shared_scan_ ? std::size_t(shape_.block_size) * (sizeof(double) + sizeof(index_t)) : 0;
    if (shared_scan_) {
      coo_segscan_kernel<T, true><<<grid_, shape_.block_size, shared_bytes, stream()>>>(
          this->nnz(), per_warp_, row_idx_.data(), col_idx_.data(), values_.data(), x, y);
    } else {
      coo_segscan_kernel<T, false><<<grid_, shape_.block_size, 0, stream()>>>(
          this->nnz(), per_warp_, row_idx_.data(), col_idx_.data(), values_.data(), x, y);
    }
    CGS_CHECK_LAUNCH();
  }

  std::optional<Rows<T>> row_view() const override {
    return Rows<T>{CooView<T>{this->rows(), row_start_.data(), row_idx_.data(), col_idx_.data(),
                              values_.data()},
                   true,
                   {}};
  }
  void set_values(const T* csr_values) override {
    copy_to_device(values_.data(), csr_values, values_.bytes());  // same entry order
  }

 private:
  // Without --blocks: about 4 chunks of 32 per warp for small matrices, and at most one full
  // wave of resident warps for large ones (each warp then streams a long contiguous range).
  int default_grid(long long nnz) const {
    if (shape_.user_blocks > 0) return shape_.user_blocks;
    const CudaContext& context = cuda_context();
    const long long warps_per_block = shape_.block_size / 32;
    const long long wanted_warps = std::max(1LL, (nnz + 127) / 128);
    const long long resident_blocks =
        (long long)context.sm_count * std::max(1, context.max_threads_per_sm / shape_.block_size);
    const long long blocks = (wanted_warps + warps_per_block - 1) / warps_per_block;
    return int(std::clamp(blocks, 1LL, std::max(1LL, resident_blocks)));
  }

  bool shared_scan_;
  LaunchShape shape_;
  int grid_ = 1;
  long long per_warp_ = 1;
  DeviceArray<index_t> row_start_, row_idx_, col_idx_;
  DeviceArray<T> values_;
};

}  // namespace

template <typename T>
std::unique_ptr<SpmvBackend<T>> make_coo_cuda_backend(const CsrMatrix<T>& A,
                                                      const BackendOptions& options) {
  const bool shared_scan =
      require_gpu_kernel(Format::coo, options.kernel).name == std::string("segscan-shared");
  return std::make_unique<CooCudaBackend<T>>(A, shared_scan, LaunchShape::from(options));
}

template std::unique_ptr<SpmvBackend<float>> make_coo_cuda_backend(const CsrMatrix<float>&,
                                                                   const BackendOptions&);
template std::unique_ptr<SpmvBackend<double>> make_coo_cuda_backend(const CsrMatrix<double>&,
                                                                    const BackendOptions&);

}  // namespace cgs::cuda
