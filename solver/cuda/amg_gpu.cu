// AMG's numeric set-up phases on the GPU (solver/precond/amg_gpu.hpp).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <numeric>

#include "solver/precond/amg_gpu.hpp"
#include "solver/precond/amg_setup.hpp"
#include "solver/precond/spectrum.hpp"
#include "spmv/cuda/cuda_common.cuh"
#include "spmv/cuda/cusparse_api.hpp"

namespace cgs::precond::amg {
namespace {

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

// A CSR matrix in device memory with its cuSPARSE descriptor.
struct DeviceCsr {
  index_t rows = 0, cols = 0;
  std::int64_t nnz = 0;
  DeviceArray<index_t> row_ptr, col_idx;
  DeviceArray<double> values;
  cusparseSpMatDescr_t descr = nullptr;

  DeviceCsr() = default;
  DeviceCsrArrays arrays() const { return {row_ptr.data(), col_idx.data(), values.data()}; }
  DeviceCsr(const DeviceCsr&) = delete;
  DeviceCsr& operator=(const DeviceCsr&) = delete;
  ~DeviceCsr() {
    if (descr) cuda::cusparse_api().destroy_sp_mat(descr);
  }

  // Pattern and values of M, and the descriptor.
  void upload(const CsrMatrix<double>& M, const char* what) {
    rows = M.rows;
    cols = M.cols;
    nnz = std::int64_t(M.col_idx.size());
    row_ptr = DeviceArray<index_t>(M.row_ptr, what);
    col_idx = DeviceArray<index_t>(M.col_idx, what);
    values = DeviceArray<double>(M.values, what);
    CGS_CUSPARSE_CHECK(cuda::cusparse_api().create_csr(
        &descr, rows, cols, nnz, row_ptr.data(), col_idx.data(), values.data(), CUSPARSE_INDEX_32I,
        CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
  }
  void upload_values(const std::vector<double>& v) {
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
        handle, kPlain, kPlain, a.descr, b.descr, c_.descr, kAlg, plan_, &size1, nullptr));
    DeviceArray<char> buffer1(size1, "SpGEMM work estimation buffer");
    CGS_CUSPARSE_CHECK(cuda::cusparse_api().spgemm_reuse_work_estimation(
        handle, kPlain, kPlain, a.descr, b.descr, c_.descr, kAlg, plan_, &size1, buffer1.data()));
    std::size_t size2 = 0, size3 = 0, size4 = 0;
    CGS_CUSPARSE_CHECK(cuda::cusparse_api().spgemm_reuse_nnz(
        handle, kPlain, kPlain, a.descr, b.descr, c_.descr, kAlg, plan_, &size2, nullptr, &size3,
        nullptr, &size4, nullptr));
    DeviceArray<char> buffer2(size2, "SpGEMM nnz buffer");
    DeviceArray<char> buffer3(size3, "SpGEMM nnz buffer");
    buffer4_ = DeviceArray<char>(size4, "SpGEMM compute buffer");
    CGS_CUSPARSE_CHECK(cuda::cusparse_api().spgemm_reuse_nnz(
        handle, kPlain, kPlain, a.descr, b.descr, c_.descr, kAlg, plan_, &size2, buffer2.data(),
        &size3, buffer3.data(), &size4, buffer4_.data()));
    std::int64_t rows = 0, cols = 0, nnz = 0;
    CGS_CUSPARSE_CHECK(cuda::cusparse_api().sp_mat_get_size(c_.descr, &rows, &cols, &nnz));
    c_.nnz = nnz;
    c_.col_idx = DeviceArray<index_t>(std::size_t(nnz), "amg R A P columns");
    c_.values = DeviceArray<double>(std::size_t(nnz), "amg R A P values");
    CGS_CUSPARSE_CHECK(cuda::cusparse_api().csr_set_pointers(c_.descr, c_.row_ptr.data(),
                                                             c_.col_idx.data(), c_.values.data()));
    std::size_t size5 = 0;
    CGS_CUSPARSE_CHECK(cuda::cusparse_api().spgemm_reuse_copy(
        handle, kPlain, kPlain, a.descr, b.descr, c_.descr, kAlg, plan_, &size5, nullptr));
    buffer5_ = DeviceArray<char>(size5, "SpGEMM copy buffer");
    CGS_CUSPARSE_CHECK(cuda::cusparse_api().spgemm_reuse_copy(
        handle, kPlain, kPlain, a.descr, b.descr, c_.descr, kAlg, plan_, &size5, buffer5_.data()));
  }
  ReusedProduct(const ReusedProduct&) = delete;
  ReusedProduct& operator=(const ReusedProduct&) = delete;
  ~ReusedProduct() { cuda::cusparse_api().spgemm_destroy_descr(plan_); }

  void compute() {
    const double one = 1, zero = 0;
    CGS_CUSPARSE_CHECK(cuda::cusparse_api().spgemm_reuse_compute(
        cuda::cuda_context().cusparse(), kPlain, kPlain, &one, a_.descr, b_.descr, &zero, c_.descr,
        CUDA_R_64F, kAlg, plan_));
  }
  const DeviceCsr& result() const { return c_; }

 private:
  const DeviceCsr& a_;
  const DeviceCsr& b_;
  cusparseSpGEMMDescr_t plan_ = nullptr;
  DeviceCsr c_;
  DeviceArray<char> buffer4_, buffer5_;
};

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
    const index_t n = A.rows;
    steps = int(std::min<index_t>(n, steps));
    // The host's start vector, kept for set_values (making it is serial: 9M rows, ~0.1 s).
    if (start_.size() != std::size_t(n))
      start_ = DeviceArray<double>(lanczos_start(n), "amg Lanczos start");
    LanczosVectors L(n);
    const int grid = blocks_for(n);
    inverse_sqrt_kernel<<<grid, kBlock, 0, cuda::stream()>>>(n, diagonal_.data(), L.scale.data());
    divide_kernel<<<grid, kBlock, 0, cuda::stream()>>>(n, start_.data(), 1.0, L.v.data());
    CGS_CHECK_LAUNCH();
    CGS_CUDA_CHECK(cudaMemsetAsync(L.v_old.data(), 0, L.v_old.bytes(), cuda::stream()));
    std::vector<double> alpha, beta;
    double beta_prev = 0;
    for (int j = 0; j < steps; ++j) {  // spectrum_bounds's loop
      filtered_product_kernel<<<grid, kBlock, 0, cuda::stream()>>>(
          n, a_.row_ptr.data(), a_.col_idx.data(), a_.values.data(), strong_.data(),
          diagonal_.data(), L.scale.data(), L.v.data(), L.w.data());
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

  GpuPhaseSeconds compute(const CsrMatrix<double>& A, const std::vector<double>& diagonal,
                          double omega, Level& level, CsrMatrix<double>& next) override {
    GpuPhaseSeconds seconds;
    auto start = Clock::now();
    if (!operator_current_) upload_operator(A, diagonal);  // filtered_radius may have
    operator_current_ = false;                             // the next set-up's are new
    if (!planned_) upload_patterns(level);
    smooth_prolongator_kernel<<<blocks_for(A.rows), kBlock, 0, cuda::stream()>>>(
        A.rows, a_.row_ptr.data(), a_.col_idx.data(), a_.values.data(), position_.data(),
        of_.data(), weight_.data(), diagonal_.data(), omega, p_.row_ptr.data(), p_.col_idx.data(),
        p_.values.data());
    CGS_CHECK_LAUNCH();
    CsrMatrix<double>& P = level.prolongator.P;
    cuda::copy_to_host(P.values.data(), p_.values.data(), p_.values.bytes());
    seconds.prolongator = since(start);

    start = Clock::now();
    scatter_kernel<<<blocks_for(p_.nnz), kBlock, 0, cuda::stream()>>>(
        p_.nnz, p_.values.data(), to_r_.data(), r_.values.data());
    CGS_CHECK_LAUNCH();
    CsrMatrix<double>& R = level.restriction.At;
    cuda::copy_to_host(R.values.data(), r_.values.data(), r_.values.bytes());
    seconds.restriction = since(start);

    start = Clock::now();
    if (!planned_) {
      ra_ = std::make_unique<ReusedProduct>(r_, a_);
      rap_ = std::make_unique<ReusedProduct>(ra_->result(), p_);
    }
    ra_->compute();
    rap_->compute();
    download_next(next);
    seconds.galerkin = since(start);
    planned_ = true;
    return seconds;
  }

  DeviceCsrArrays device_operator() const override {
    return planned_ ? a_.arrays() : DeviceCsrArrays{};
  }
  DeviceCsrArrays device_prolongator() const override {
    return planned_ ? p_.arrays() : DeviceCsrArrays{};
  }
  DeviceCsrArrays device_restriction() const override {
    return planned_ ? r_.arrays() : DeviceCsrArrays{};
  }

 private:
  // A (its pattern at the first set-up, its values after) and D_F, for this set-up.
  void upload_operator(const CsrMatrix<double>& A, const std::vector<double>& diagonal) {
    if (a_.descr == nullptr) {
      a_.upload(A, "amg level operator");
      diagonal_ = DeviceArray<double>(std::size_t(A.rows), "amg filtered diagonal");
    } else if (!operator_current_) {
      a_.upload_values(A.values);
    }
    cuda::copy_to_device(diagonal_.data(), diagonal.data(), diagonal_.bytes());
    operator_current_ = true;
  }

  void upload_patterns(const Level& level) {
    p_.upload(level.prolongator.P, "amg prolongator");
    r_.upload(level.restriction.At, "amg restriction");
    position_ = DeviceArray<index_t>(level.prolongator.position, "amg prolongator positions");
    of_ = DeviceArray<index_t>(level.aggregates.of, "amg aggregates");
    weight_ = DeviceArray<double>(level.prolongator.weight, "amg tentative weights");
    to_r_ = DeviceArray<index_t>(level.restriction.position, "amg restriction positions");
  }

  // R A P to the host: the pattern at the first set-up (rows sorted by column, as the host's),
  // the values in that order every time.
  void download_next(CsrMatrix<double>& next) {
    const DeviceCsr& c = rap_->result();
    std::vector<double> values(std::size_t(c.nnz));
    cuda::copy_to_host(values.data(), c.values.data(), c.values.bytes());
    if (!planned_) {
      next.rows = c.rows;
      next.cols = c.cols;
      next.row_ptr.resize(std::size_t(c.rows) + 1);
      next.col_idx.resize(std::size_t(c.nnz));
      cuda::copy_to_host(next.row_ptr.data(), c.row_ptr.data(), next.row_ptr.size() * 4);
      cuda::copy_to_host(next.col_idx.data(), c.col_idx.data(), c.col_idx.bytes());
      order_ = ascending_order(next);
      next.col_idx = permuted(next.col_idx, order_);
    }
    if (planned_ && next.values.size() != values.size())
      throw DeviceError("amg GPU set-up: R A P changed size between set-ups");
    next.values = permuted(values, order_);
  }

  bool planned_ = false;
  bool operator_current_ = false;  // A's values and D_F of this set-up already on the device
  DeviceCsr a_, p_, r_;
  DeviceArray<char> strong_;
  DeviceArray<double> start_;  // Lanczos's start vector
  DeviceArray<index_t> position_, of_, to_r_;
  DeviceArray<double> weight_, diagonal_;
  std::unique_ptr<ReusedProduct> ra_, rap_;
  std::vector<std::int64_t> order_;  // R A P's entries in ascending columns, empty if they are
};

}  // namespace

std::unique_ptr<GpuLevelValues> make_gpu_level_values() {
  return std::make_unique<CudaLevelValues>();
}

}  // namespace cgs::precond::amg
