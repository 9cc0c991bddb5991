// The GPU references (see references.hpp): device copy bandwidth, cuSPARSE CSR SpMV, the
// sample-style cuSPARSE + cuBLAS CG and cuSPARSE's IC(0)-PCG. Host API calls only (no kernels
// of our own), so it is compiled by the host compiler against the CUDA runtime, cuSPARSE and
// cuBLAS.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusparse.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "bench/lib/bench_util.hpp"
#include "bench/lib/references.hpp"
#include "formats/types.hpp"
#include "spmv/backend.hpp"

namespace cgs::bench {
namespace {

void check(cudaError_t status, const char* call) {
  if (status != cudaSuccess)
    throw DeviceError(std::string(call) + ": " + cudaGetErrorString(status));
}
void check(cusparseStatus_t status, const char* call) {
  if (status != CUSPARSE_STATUS_SUCCESS)
    throw DeviceError(std::string(call) + ": " + cusparseGetErrorString(status));
}
void check(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw DeviceError(std::string(call) + ": " + cublasGetStatusString(status));
}
#define CHECK(call) check((call), #call)

// Device memory owned by one object.
template <typename T>
class Buffer {
 public:
  explicit Buffer(std::size_t n) : n_(n) {
    if (n > 0) CHECK(cudaMalloc(reinterpret_cast<void**>(&data_), n * sizeof(T)));
  }
  explicit Buffer(const std::vector<T>& host) : Buffer(host.size()) { upload(host); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { (void)cudaFree(data_); }
  T* get() { return data_; }
  void upload(const std::vector<T>& host) {
    if (n_ > 0) CHECK(cudaMemcpy(data_, host.data(), n_ * sizeof(T), cudaMemcpyHostToDevice));
  }
  std::vector<T> download() const {
    std::vector<T> host(n_);
    if (n_ > 0) CHECK(cudaMemcpy(host.data(), data_, n_ * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
  }

 private:
  T* data_ = nullptr;
  std::size_t n_ = 0;
};

class Stream {
 public:
  Stream() { CHECK(cudaStreamCreate(&stream_)); }
  ~Stream() { (void)cudaStreamDestroy(stream_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  operator cudaStream_t() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

// Events e0 .. e_samples recorded between batches: sample s lasts from e_s to e_{s+1}, so the
// samples run back to back and nothing is read back until the last one has finished.
template <typename Batch>
std::vector<double> time_with_events(cudaStream_t stream, int samples, Batch run_batch) {
  std::vector<cudaEvent_t> events(std::size_t(samples) + 1);
  for (cudaEvent_t& e : events) CHECK(cudaEventCreate(&e));
  std::vector<double> seconds(samples);
  try {
    CHECK(cudaEventRecord(events[0], stream));
    for (int s = 0; s < samples; ++s) {
      run_batch();
      CHECK(cudaEventRecord(events[s + 1], stream));
    }
    CHECK(cudaEventSynchronize(events[samples]));
    for (int s = 0; s < samples; ++s) {
      float ms = 0;
      CHECK(cudaEventElapsedTime(&ms, events[s], events[s + 1]));
      seconds[s] = double(ms) * 1e-3;
    }
  } catch (...) {
    for (cudaEvent_t e : events) (void)cudaEventDestroy(e);
    throw;
  }
  for (cudaEvent_t e : events) (void)cudaEventDestroy(e);
  return seconds;
}

cusparseDnVecDescr_t dense_vector(double* data, index_t n) {
  cusparseDnVecDescr_t descr = nullptr;
  CHECK(cusparseCreateDnVec(&descr, n, data, CUDA_R_64F));
  return descr;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
double gpu_copy_bandwidth(std::size_t bytes, int runs) {
  Stream stream;
  Buffer<char> source(bytes), target(bytes);
  CHECK(cudaMemsetAsync(source.get(), 1, bytes, stream));
  CHECK(cudaMemsetAsync(target.get(), 0, bytes, stream));
  auto copy = [&] {
    CHECK(cudaMemcpyAsync(target.get(), source.get(), bytes, cudaMemcpyDeviceToDevice, stream));
  };
  time_with_events(stream, 2, copy);  // warm-up
  const double seconds = median(time_with_events(stream, std::max(1, runs), copy));
  return 2.0 * double(bytes) / seconds;
}

// ---------------------------------------------------------------------------------------------
struct CusparseCsrSpmv::Impl {
  explicit Impl(const CsrMatrix<double>& A)
      : rows(A.rows),
        cols(A.cols),
        nnz(A.nnz()),
        row_ptr(A.row_ptr),
        col_idx(A.col_idx),
        values(A.values),
        x(std::size_t(A.cols)),
        y(std::size_t(A.rows)) {
    CHECK(cusparseCreate(&handle));
    CHECK(cusparseSetStream(handle, stream));
    vec_x = dense_vector(x.get(), cols);
    vec_y = dense_vector(y.get(), rows);
    for (const auto& [name, algorithm] : kAlgorithms) prepare(name, algorithm);
  }
  ~Impl() {
    for (auto& variant : variants) (void)cusparseDestroySpMat(variant.matrix);
    (void)cusparseDestroyDnVec(vec_x);
    (void)cusparseDestroyDnVec(vec_y);
    (void)cusparseDestroy(handle);
  }

  // One descriptor, buffer and preprocessing per algorithm: the analysis is per descriptor.
  void prepare(const std::string& name, cusparseSpMVAlg_t algorithm) {
    Variant variant{name, algorithm, nullptr, nullptr};
    CHECK(cusparseCreateCsr(&variant.matrix, rows, cols, nnz, row_ptr.get(), col_idx.get(),
                            values.get(), CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                            CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    std::size_t bytes = 0;
    CHECK(cusparseSpMV_bufferSize(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, variant.matrix,
                                  vec_x, &zero, vec_y, CUDA_R_64F, algorithm, &bytes));
    variant.buffer = std::make_unique<Buffer<char>>(std::max<std::size_t>(bytes, 1));
    CHECK(cusparseSpMV_preprocess(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, variant.matrix,
                                  vec_x, &zero, vec_y, CUDA_R_64F, algorithm,
                                  variant.buffer->get()));
    variants.push_back(std::move(variant));
  }

  void apply() {
    Variant& v = variants[selected];
    CHECK(cusparseSpMV(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, v.matrix, vec_x, &zero,
                       vec_y, CUDA_R_64F, v.algorithm, v.buffer->get()));
  }

  struct Variant {
    std::string name;
    cusparseSpMVAlg_t algorithm;
    cusparseSpMatDescr_t matrix;
    std::unique_ptr<Buffer<char>> buffer;
  };
  static constexpr std::pair<const char*, cusparseSpMVAlg_t> kAlgorithms[] = {
      {"csr-alg1", CUSPARSE_SPMV_CSR_ALG1}, {"csr-alg2", CUSPARSE_SPMV_CSR_ALG2}};

  index_t rows, cols;
  std::int64_t nnz;
  Buffer<index_t> row_ptr, col_idx;
  Buffer<double> values, x, y;
  Stream stream;
  cusparseHandle_t handle = nullptr;
  cusparseDnVecDescr_t vec_x = nullptr, vec_y = nullptr;
  std::vector<Variant> variants;
  std::size_t selected = 0;
  const double one = 1.0, zero = 0.0;
};

CusparseCsrSpmv::CusparseCsrSpmv(const CsrMatrix<double>& A) : impl_(std::make_unique<Impl>(A)) {}
CusparseCsrSpmv::~CusparseCsrSpmv() = default;

std::vector<std::string> CusparseCsrSpmv::algorithms() const {
  std::vector<std::string> names;
  for (const auto& v : impl_->variants) names.push_back(v.name);
  return names;
}

void CusparseCsrSpmv::select(const std::string& algorithm) {
  for (std::size_t i = 0; i < impl_->variants.size(); ++i) {
    if (impl_->variants[i].name == algorithm) impl_->selected = i;
  }
}

void CusparseCsrSpmv::set_x(const std::vector<double>& x) { impl_->x.upload(x); }

std::vector<double> CusparseCsrSpmv::timed_batches(int samples, int batch) {
  Impl& m = *impl_;
  return time_with_events(m.stream, samples, [&m, batch] {
    for (int b = 0; b < batch; ++b) m.apply();
  });
}

std::vector<double> CusparseCsrSpmv::y() {
  CHECK(cudaStreamSynchronize(impl_->stream));
  return impl_->y.download();
}

// ---------------------------------------------------------------------------------------------
struct SampleStyleCg::Impl {
  explicit Impl(const CsrMatrix<double>& A)
      : n(A.rows),
        nnz(A.nnz()),
        row_ptr(A.row_ptr),
        col_idx(A.col_idx),
        values(A.values),
        x(n),
        r(n),
        p(n),
        q(n),
        z(n),
        inv_diag(n) {
    CHECK(cusparseCreate(&sparse));
    CHECK(cublasCreate(&blas));
    CHECK(cusparseSetStream(sparse, stream));
    CHECK(cublasSetStream(blas, stream));
    CHECK(cublasSetPointerMode(blas, CUBLAS_POINTER_MODE_HOST));  // scalars live on the host
    CHECK(cusparseCreateCsr(&matrix, n, n, nnz, row_ptr.get(), col_idx.get(), values.get(),
                            CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                            CUDA_R_64F));
    vec_x = dense_vector(x.get(), n);
    vec_p = dense_vector(p.get(), n);
    vec_q = dense_vector(q.get(), n);
    std::size_t bytes = 0;
    CHECK(cusparseSpMV_bufferSize(sparse, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, matrix, vec_p,
                                  &zero, vec_q, CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, &bytes));
    buffer = std::make_unique<Buffer<char>>(std::max<std::size_t>(bytes, 1));
  }
  ~Impl() {
    (void)cusparseDestroyDnVec(vec_x);
    (void)cusparseDestroyDnVec(vec_p);
    (void)cusparseDestroyDnVec(vec_q);
    (void)cusparseDestroySpMat(matrix);
    (void)cublasDestroy(blas);
    (void)cusparseDestroy(sparse);
  }

  void spmv(cusparseDnVecDescr_t in, cusparseDnVecDescr_t out) {
    CHECK(cusparseSpMV(sparse, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, matrix, in, &zero, out,
                       CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, buffer->get()));
  }
  double dot(double* a, double* b) {  // returns to the host: waits for the device
    double result = 0;
    CHECK(cublasDdot(blas, n, a, 1, b, 1, &result));
    return result;
  }
  void axpy(double alpha, double* from, double* to) {
    CHECK(cublasDaxpy(blas, n, &alpha, from, 1, to, 1));
  }
  void scal(double alpha, double* v) { CHECK(cublasDscal(blas, n, &alpha, v, 1)); }
  void precondition() {  // z = D^-1 r
    CHECK(cublasDdgmm(blas, CUBLAS_SIDE_LEFT, n, 1, r.get(), n, inv_diag.get(), 1, z.get(), n));
  }

  CgRun solve(const std::vector<double>& b, const CgRequest& request);

  int n;
  std::int64_t nnz;
  Buffer<index_t> row_ptr, col_idx;
  Buffer<double> values, x, r, p, q, z, inv_diag;
  Stream stream;
  cusparseHandle_t sparse = nullptr;
  cublasHandle_t blas = nullptr;
  cusparseSpMatDescr_t matrix = nullptr;
  cusparseDnVecDescr_t vec_x = nullptr, vec_p = nullptr, vec_q = nullptr;
  std::unique_ptr<Buffer<char>> buffer;
  const double one = 1.0, zero = 0.0;
};

// The sample's loop, with a Jacobi step where asked: r = b - A x0 (x0 = 0); p = z; then per
// iteration q = A p, alpha = rz / p.q, x += alpha p, r -= alpha q, z = D^-1 r, rz' = r.z,
// rr = r.r, p = z + (rz' / rz) p.
CgRun SampleStyleCg::Impl::solve(const std::vector<double>& b, const CgRequest& request) {
  r.upload(b);
  CHECK(cudaMemsetAsync(x.get(), 0, sizeof(double) * n, stream));
  double bb = 0;
  for (double e : b) bb += e * e;
  const bool fixed = request.iterations > 0;
  const long limit = fixed ? request.iterations : request.max_iterations;
  const double threshold = fixed ? -1.0 : request.tol * request.tol * bb;
  double* z_or_r = request.jacobi ? z.get() : r.get();
  CHECK(cudaStreamSynchronize(stream));

  const auto start = std::chrono::steady_clock::now();
  spmv(vec_x, vec_q);
  axpy(-1.0, q.get(), r.get());
  if (request.jacobi) precondition();
  double rr = dot(r.get(), r.get());
  double rz = request.jacobi ? dot(r.get(), z.get()) : rr;
  CHECK(cublasDcopy(blas, n, z_or_r, 1, p.get(), 1));
  long k = 0;
  while (k < limit && !(rr <= threshold)) {
    ++k;
    spmv(vec_p, vec_q);
    const double alpha = rz / dot(p.get(), q.get());
    axpy(alpha, p.get(), x.get());
    axpy(-alpha, q.get(), r.get());
    if (request.jacobi) precondition();
    rr = dot(r.get(), r.get());
    const double rz_new = request.jacobi ? dot(r.get(), z.get()) : rr;
    scal(rz_new / rz, p.get());
    axpy(1.0, z_or_r, p.get());
    rz = rz_new;
    if (!std::isfinite(rr)) break;
  }
  CHECK(cudaStreamSynchronize(stream));
  CgRun run;
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  run.iterations = k;
  run.converged = rr <= threshold;
  run.x = x.download();
  return run;
}

SampleStyleCg::SampleStyleCg(const CsrMatrix<double>& A) : impl_(std::make_unique<Impl>(A)) {}
SampleStyleCg::~SampleStyleCg() = default;

CgRun SampleStyleCg::run(const std::vector<double>& b, const std::vector<double>& inv_diag,
                         const CgRequest& request) {
  if (request.jacobi) impl_->inv_diag.upload(inv_diag);
  return impl_->solve(b, request);
}

// ---------------------------------------------------------------------------------------------
// cuSPARSE IC(0)-PCG. The loop is SampleStyleCg's (host scalars, every dot read back) so that
// the two GPU references differ by the preconditioner only.
struct CusparseIc0Cg::Impl {
  explicit Impl(const CsrMatrix<double>& A)
      : host_A(&A),
        n(A.rows),
        nnz(A.nnz()),
        row_ptr(A.row_ptr),
        col_idx(A.col_idx),
        values(A.values),
        x(n),
        r(n),
        p(n),
        q(n),
        z(n),
        t(n) {
    CHECK(cusparseCreate(&sparse));
    CHECK(cublasCreate(&blas));
    CHECK(cusparseSetStream(sparse, stream));
    CHECK(cublasSetStream(blas, stream));
    // Scalars on the host: SpMV/SpSV's alpha and beta, and csric02_zeroPivot's position.
    CHECK(cusparseSetPointerMode(sparse, CUSPARSE_POINTER_MODE_HOST));
    CHECK(cublasSetPointerMode(blas, CUBLAS_POINTER_MODE_HOST));
    CHECK(cusparseCreateCsr(&matrix, n, n, nnz, row_ptr.get(), col_idx.get(), values.get(),
                            CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                            CUDA_R_64F));
    vec_x = dense_vector(x.get(), n);
    vec_p = dense_vector(p.get(), n);
    vec_q = dense_vector(q.get(), n);
    vec_r = dense_vector(r.get(), n);
    vec_z = dense_vector(z.get(), n);
    vec_t = dense_vector(t.get(), n);
    std::size_t bytes = 0;
    CHECK(cusparseSpMV_bufferSize(sparse, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, matrix, vec_p,
                                  &zero, vec_q, CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, &bytes));
    spmv_buffer = std::make_unique<Buffer<char>>(std::max<std::size_t>(bytes, 1));
  }
  ~Impl() {
    // The set-up's objects exist only if setup() got that far.
    if (solve_l) (void)cusparseSpSV_destroyDescr(solve_l);
    if (solve_lt) (void)cusparseSpSV_destroyDescr(solve_lt);
    for (cusparseDnVecDescr_t v : {vec_x, vec_p, vec_q, vec_r, vec_z, vec_t})
      (void)cusparseDestroyDnVec(v);
    if (factor) (void)cusparseDestroySpMat(factor);
    (void)cusparseDestroySpMat(matrix);
    (void)cublasDestroy(blas);
    (void)cusparseDestroy(sparse);
  }

  double setup();
  void factorize(int l_nnz);
  void check_factor() const;
  std::unique_ptr<Buffer<char>> analyse_solve(cusparseOperation_t op, cusparseSpSVDescr_t descr,
                                              cusparseDnVecDescr_t in, cusparseDnVecDescr_t out);
  CgRun solve(const std::vector<double>& b, const CgRequest& request);

  void spmv(cusparseDnVecDescr_t in, cusparseDnVecDescr_t out) {
    CHECK(cusparseSpMV(sparse, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, matrix, in, &zero, out,
                       CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, spmv_buffer->get()));
  }
  double dot(double* a, double* b) {  // returns to the host: waits for the device
    double result = 0;
    CHECK(cublasDdot(blas, n, a, 1, b, 1, &result));
    return result;
  }
  void axpy(double alpha, double* from, double* to) {
    CHECK(cublasDaxpy(blas, n, &alpha, from, 1, to, 1));
  }
  void scal(double alpha, double* v) { CHECK(cublasDscal(blas, n, &alpha, v, 1)); }
  // z = M^-1 r = L^-T (L^-1 r): t = L^-1 r, then z = L^-T t, on the one descriptor of L.
  void precondition() {
    CHECK(cusparseSpSV_solve(sparse, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, factor, vec_r, vec_t,
                             CUDA_R_64F, CUSPARSE_SPSV_ALG_DEFAULT, solve_l));
    CHECK(cusparseSpSV_solve(sparse, CUSPARSE_OPERATION_TRANSPOSE, &one, factor, vec_t, vec_z,
                             CUDA_R_64F, CUSPARSE_SPSV_ALG_DEFAULT, solve_lt));
  }

  const CsrMatrix<double>* host_A;  // read by setup() for its lower triangle
  int n;
  std::int64_t nnz;
  Buffer<index_t> row_ptr, col_idx;
  Buffer<double> values, x, r, p, q, z, t;  // t: L^-1 r between the two triangular solves
  Stream stream;
  cusparseHandle_t sparse = nullptr;
  cublasHandle_t blas = nullptr;
  cusparseSpMatDescr_t matrix = nullptr;  // A, for the SpMV
  cusparseDnVecDescr_t vec_x = nullptr, vec_p = nullptr, vec_q = nullptr, vec_r = nullptr,
                       vec_z = nullptr, vec_t = nullptr;
  std::unique_ptr<Buffer<char>> spmv_buffer;
  // Set up by setup(): L (CSR, lower triangle with its diagonal, factorised in place), its
  // descriptor and one SpSV descriptor and buffer per operation (L and L^T): SpSV's analysis
  // is per descriptor and its buffer must live as long as the solves.
  std::unique_ptr<Buffer<index_t>> l_row_ptr, l_col_idx;
  std::unique_ptr<Buffer<double>> l_values;
  cusparseSpMatDescr_t factor = nullptr;
  cusparseSpSVDescr_t solve_l = nullptr, solve_lt = nullptr;
  std::unique_ptr<Buffer<char>> buffer_l, buffer_lt;
  bool ready = false;
  double setup_seconds = 0;
  const double one = 1.0, zero = 0.0;
};

// The set-up as time to solution counts it: from the host matrix to a factor the solves can
// use, the stream synchronised at both ends. Done once; a second call returns the first time.
double CusparseIc0Cg::Impl::setup() {
  if (ready) return setup_seconds;
  CHECK(cudaStreamSynchronize(stream));
  const auto start = std::chrono::steady_clock::now();

  // tril(A) with the diagonal: csric02 reads only the lower triangle of a GENERAL matrix, but
  // factorises in place and SpSV wants a triangle alone, so L gets arrays of its own.
  const CsrMatrix<double>& A = *host_A;
  std::vector<index_t> lp(std::size_t(n) + 1, 0), lc;
  std::vector<double> lv;
  lc.reserve(std::size_t(nnz / 2 + n));
  lv.reserve(std::size_t(nnz / 2 + n));
  for (index_t i = 0; i < n; ++i) {
    for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
      if (A.col_idx[k] > i) break;  // sorted columns: the rest of the row is upper
      lc.push_back(A.col_idx[k]);
      lv.push_back(A.values[k]);
    }
    lp[i + 1] = index_t(lc.size());
  }
  l_row_ptr = std::make_unique<Buffer<index_t>>(lp);
  l_col_idx = std::make_unique<Buffer<index_t>>(lc);
  l_values = std::make_unique<Buffer<double>>(lv);
  const int l_nnz = int(lc.size());

  factorize(l_nnz);

  CHECK(cusparseCreateCsr(&factor, n, n, l_nnz, l_row_ptr->get(), l_col_idx->get(), l_values->get(),
                          CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                          CUDA_R_64F));
  cusparseFillMode_t fill = CUSPARSE_FILL_MODE_LOWER;
  cusparseDiagType_t diag = CUSPARSE_DIAG_TYPE_NON_UNIT;  // L's diagonal is the pivots
  CHECK(cusparseSpMatSetAttribute(factor, CUSPARSE_SPMAT_FILL_MODE, &fill, sizeof(fill)));
  CHECK(cusparseSpMatSetAttribute(factor, CUSPARSE_SPMAT_DIAG_TYPE, &diag, sizeof(diag)));
  // L^T through CUSPARSE_OPERATION_TRANSPOSE on the same L (SpSV supports it for CSR, as
  // NVIDIA's own cuSPARSE cg_example does), so no upper copy: the two analyses once here.
  CHECK(cusparseSpSV_createDescr(&solve_l));
  CHECK(cusparseSpSV_createDescr(&solve_lt));
  buffer_l = analyse_solve(CUSPARSE_OPERATION_NON_TRANSPOSE, solve_l, vec_r, vec_t);
  buffer_lt = analyse_solve(CUSPARSE_OPERATION_TRANSPOSE, solve_lt, vec_t, vec_z);
  CHECK(cudaStreamSynchronize(stream));
  setup_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  check_factor();  // not timed: a diagnosis, not part of what an expert's set-up costs
  ready = true;
  return setup_seconds;
}

std::unique_ptr<Buffer<char>> CusparseIc0Cg::Impl::analyse_solve(cusparseOperation_t op,
                                                                 cusparseSpSVDescr_t descr,
                                                                 cusparseDnVecDescr_t in,
                                                                 cusparseDnVecDescr_t out) {
  std::size_t bytes = 0;
  CHECK(cusparseSpSV_bufferSize(sparse, op, &one, factor, in, out, CUDA_R_64F,
                                CUSPARSE_SPSV_ALG_DEFAULT, descr, &bytes));
  auto buffer = std::make_unique<Buffer<char>>(std::max<std::size_t>(bytes, 1));
  CHECK(cusparseSpSV_analysis(sparse, op, &one, factor, in, out, CUDA_R_64F,
                              CUSPARSE_SPSV_ALG_DEFAULT, descr, buffer->get()));
  return buffer;
}

// csric02 is deprecated since CUDA 12 (the legacy preconditioner API), yet it is still cuSPARSE's
// only incomplete Cholesky and the one an expert reaches for: its deprecation warnings are
// silenced here and nowhere else.
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif
void CusparseIc0Cg::Impl::factorize(int l_nnz) {
  cusparseMatDescr_t descr = nullptr;
  csric02Info_t info = nullptr;
  CHECK(cusparseCreateMatDescr(&descr));
  try {
    CHECK(cusparseCreateCsric02Info(&info));
    CHECK(cusparseSetMatType(descr, CUSPARSE_MATRIX_TYPE_GENERAL));  // csric02 wants GENERAL
    CHECK(cusparseSetMatIndexBase(descr, CUSPARSE_INDEX_BASE_ZERO));
    // position: the first zero pivot's row (0-based, as the index base), -1 when none.
    auto check_pivot = [&](const char* stage, const char* kind) {
      int position = -1;
      const cusparseStatus_t status = cusparseXcsric02_zeroPivot(sparse, info, &position);
      if (status == CUSPARSE_STATUS_ZERO_PIVOT)
        throw InputError("cuSPARSE IC(0): " + std::string(kind) + " zero pivot in row " +
                         std::to_string(position) + " (0-based; A(" + std::to_string(position + 1) +
                         "," + std::to_string(position + 1) +
                         ") in Matrix Market numbering), found by csric02 " + stage);
      CHECK(status);
    };
    int bytes = 0;
    CHECK(cusparseDcsric02_bufferSize(sparse, n, l_nnz, descr, l_values->get(), l_row_ptr->get(),
                                      l_col_idx->get(), info, &bytes));
    Buffer<char> work(std::size_t(std::max(bytes, 1)));
    CHECK(cusparseDcsric02_analysis(sparse, n, l_nnz, descr, l_values->get(), l_row_ptr->get(),
                                    l_col_idx->get(), info, CUSPARSE_SOLVE_POLICY_USE_LEVEL,
                                    work.get()));
    check_pivot("analysis", "structural (no diagonal entry)");
    CHECK(cusparseDcsric02(sparse, n, l_nnz, descr, l_values->get(), l_row_ptr->get(),
                           l_col_idx->get(), info, CUSPARSE_SOLVE_POLICY_USE_LEVEL, work.get()));
    check_pivot("factorisation", "numerical");
  } catch (...) {
    (void)cusparseDestroyCsric02Info(info);
    (void)cusparseDestroyMatDescr(descr);
    throw;
  }
  (void)cusparseDestroyCsric02Info(info);
  (void)cusparseDestroyMatDescr(descr);
}
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

// zeroPivot reports exact zeros only: a negative pivot (A not SPD enough for IC(0) without a
// shift) gives a NaN on L's diagonal instead, which would surface as a non-finite residual many
// iterations later. Name the first such row now.
void CusparseIc0Cg::Impl::check_factor() const {
  const std::vector<double> lv = l_values->download();
  const std::vector<index_t> lp = l_row_ptr->download();
  for (index_t i = 0; i < n; ++i) {
    for (index_t k = lp[i]; k < lp[i + 1]; ++k) {
      // The diagonal is each row's last entry of L (sorted columns, diagonal present, else
      // zeroPivot would have named the row).
      const bool diagonal = k == lp[i + 1] - 1;
      if (!std::isfinite(lv[k]) || (diagonal && !(lv[k] > 0)))
        throw InputError("cuSPARSE IC(0): the factor is not finite or not positive in row " +
                         std::to_string(i) + " (0-based; A(" + std::to_string(i + 1) + "," +
                         std::to_string(i + 1) +
                         ") in Matrix Market numbering): a pivot was not positive");
    }
  }
}

// PCG with z = L^-T L^-1 r: r = b - A x0 (x0 = 0), z = M^-1 r, p = z; then per iteration
// q = A p, alpha = rz / p.q, x += alpha p, r -= alpha q, the test ||r|| <= tol ||b||, z = M^-1 r,
// rz' = r.z, p = z + (rz' / rz) p. Converged, the loop stops before M^-1 r: that apply would
// only serve an iteration that does not come.
CgRun CusparseIc0Cg::Impl::solve(const std::vector<double>& b, const CgRequest& request) {
  r.upload(b);
  CHECK(cudaMemsetAsync(x.get(), 0, sizeof(double) * n, stream));
  double bb = 0;
  for (double e : b) bb += e * e;
  const bool fixed = request.iterations > 0;
  const long limit = fixed ? request.iterations : request.max_iterations;
  const double threshold = fixed ? -1.0 : request.tol * request.tol * bb;
  CHECK(cudaStreamSynchronize(stream));

  const auto start = std::chrono::steady_clock::now();
  spmv(vec_x, vec_q);
  axpy(-1.0, q.get(), r.get());
  double rr = dot(r.get(), r.get());
  double rz = 0;
  if (!(rr <= threshold)) {
    precondition();
    rz = dot(r.get(), z.get());
    CHECK(cublasDcopy(blas, n, z.get(), 1, p.get(), 1));
  }
  long k = 0;
  while (k < limit && !(rr <= threshold)) {
    ++k;
    spmv(vec_p, vec_q);
    const double alpha = rz / dot(p.get(), q.get());
    axpy(alpha, p.get(), x.get());
    axpy(-alpha, q.get(), r.get());
    rr = dot(r.get(), r.get());
    if (rr <= threshold || !std::isfinite(rr)) break;
    precondition();
    const double rz_new = dot(r.get(), z.get());
    scal(rz_new / rz, p.get());
    axpy(1.0, z.get(), p.get());
    rz = rz_new;
  }
  CHECK(cudaStreamSynchronize(stream));
  CgRun run;
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  run.iterations = k;
  run.converged = rr <= threshold;
  run.setup_seconds = setup_seconds;
  run.x = x.download();
  return run;
}

CusparseIc0Cg::CusparseIc0Cg(const CsrMatrix<double>& A) : impl_(std::make_unique<Impl>(A)) {}
CusparseIc0Cg::~CusparseIc0Cg() = default;

double CusparseIc0Cg::setup() { return impl_->setup(); }
double CusparseIc0Cg::setup_seconds() const { return impl_->setup_seconds; }

CgRun CusparseIc0Cg::run(const std::vector<double>& b, const CgRequest& request) {
  impl_->setup();
  return impl_->solve(b, request);
}

}  // namespace cgs::bench
