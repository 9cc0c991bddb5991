// The references every benchmark row is compared with, written independently of cgsolve's own
// backends so that a bug there cannot hide in the comparison:
//   CPU: Eigen's sparse matrix x vector and Eigen's ConjugateGradient (Lower|Upper), both with
//        the same number of threads as the row they are compared with;
//   GPU: cuSPARSE's CSR SpMV, CG done the way NVIDIA's conjugateGradient sample does it
//        (cusparseSpMV + cublasDdot/Daxpy/Dscal with every scalar read back to the host), and
//        the same loop preconditioned by cuSPARSE's own IC(0) (csric02 + cusparseSpSV).
// The GPU side is in gpu_reference.cpp (CUDA runtime, cuSPARSE, cuBLAS); without CUDA,
// gpu_reference_stub.cpp throws DeviceError from every GPU reference.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "formats/csr.hpp"

namespace cgs::bench {

// ---------------------------------------------------------------------------------------------
// CG runs, shared by the two CG baselines.
struct CgRequest {
  long iterations = 0;      // > 0: exactly this many (tolerance ignored); 0: until tol
  double tol = 1e-8;        // ||r|| <= tol ||b|| (when iterations == 0)
  long max_iterations = 0;  // limit when iterations == 0
  bool jacobi = false;      // diagonal (Jacobi) preconditioner
};

struct CgRun {
  long iterations = 0;
  double seconds = 0;        // the solve: initial residual and the iterations, not setup
  double setup_seconds = 0;  // the preconditioner's set-up where it has one (else 0)
  bool converged = false;
  std::vector<double> x;
};

// ---------------------------------------------------------------------------------------------
// CPU: Eigen.

std::string eigen_version();  // "3.4.0"

// y = A x with Eigen's row-major SparseMatrix, parallel over rows (Eigen uses OpenMP for a
// row-major sparse x dense product above 20000 nonzeros, with Eigen::setNbThreads threads).
class EigenSpmv {
 public:
  EigenSpmv(const CsrMatrix<double>& A, int threads);
  ~EigenSpmv();
  void set_x(const std::vector<double>& x);
  std::vector<double> timed_batches(int samples, int batch);  // seconds per sample
  std::vector<double> y() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Eigen::ConjugateGradient<SparseMatrix<double, RowMajor>, Lower|Upper, P> with P the
// IdentityPreconditioner (plain CG) or the DiagonalPreconditioner (Jacobi).
class EigenCg {
 public:
  EigenCg(const CsrMatrix<double>& A, int threads);
  ~EigenCg();
  CgRun run(const std::vector<double>& b, const CgRequest& request);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// ---------------------------------------------------------------------------------------------
// GPU: cuSPARSE and cuBLAS.

// Device-to-device cudaMemcpy of a `bytes` buffer: bytes read + written per second, median of
// `runs` (CUDA events).
double gpu_copy_bandwidth(std::size_t bytes, int runs);

// cuSPARSE CSR SpMV (cusparseSpMV after cusparseSpMV_preprocess) on its own stream, timed with
// CUDA events. It offers CUSPARSE_SPMV_CSR_ALG1 and CSR_ALG2; the benchmark takes the faster.
class CusparseCsrSpmv {
 public:
  explicit CusparseCsrSpmv(const CsrMatrix<double>& A);
  ~CusparseCsrSpmv();
  std::vector<std::string> algorithms() const;  // {"csr-alg1", "csr-alg2"}
  void select(const std::string& algorithm);
  void set_x(const std::vector<double>& x);
  std::vector<double> timed_batches(int samples, int batch);
  std::vector<double> y();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// CG as NVIDIA's conjugateGradient sample writes it: cusparseSpMV for A p, cublasDdot with the
// result returned to the host (so every dot waits for the device), cublasDaxpy and cublasDscal
// with host scalars; Jacobi adds z = D^-1 r by cublasDdgmm and one more dot. Timed by the host
// clock, as the sample's loop is host-driven anyway.
class SampleStyleCg {
 public:
  explicit SampleStyleCg(const CsrMatrix<double>& A);
  ~SampleStyleCg();
  // inv_diag: 1 / diag(A), used when request.jacobi.
  CgRun run(const std::vector<double>& b, const std::vector<double>& inv_diag,
            const CgRequest& request);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// IC(0)-preconditioned CG as an expert writes it with cuSPARSE alone, the GPU anchor for our
// --precond ic0 (issue 21): the lower triangle of A (with its diagonal) factorised in place by
// cusparseDcsric02 (level-scheduled analysis), M = L L^T applied as two cusparseSpSV solves on
// the one L descriptor (L, then L^T by CUSPARSE_OPERATION_TRANSPOSE), each analysed once. The
// CG loop is SampleStyleCg's: cusparseSpMV, cublasDdot returned to the host, cublasDaxpy/Dscal.
// A is taken in the order it comes: no reordering, so the factor (and with it the iteration
// count) is IC(0) of A as given, where ours may renumber rows first (RCM for ic0). A zero pivot,
// or a pivot that is not positive (NaN in L), throws InputError naming the row.
class CusparseIc0Cg {
 public:
  // A: CSR, full symmetric storage (both triangles), sorted column indices, positive diagonal;
  // it must outlive setup(), which reads its lower triangle. The constructor uploads A for the
  // SpMV and creates the handles; the factorisation is setup().
  explicit CusparseIc0Cg(const CsrMatrix<double>& A);
  ~CusparseIc0Cg();
  // tril(A) extracted on the host and uploaded, csric02 (buffer, analysis, zero-pivot check,
  // factorisation, zero-pivot check) and both SpSV analyses; returns their wall-clock seconds
  // (stream synchronised at both ends). Done once; later calls return the same time.
  double setup();
  double setup_seconds() const;  // 0 before setup()
  // PCG from x0 = 0 (setup() first if it has not run); run.setup_seconds = setup_seconds().
  // request.jacobi is ignored: M is IC(0).
  CgRun run(const std::vector<double>& b, const CgRequest& request);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cgs::bench
