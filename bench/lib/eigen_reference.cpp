// The CPU references: Eigen's SpMV and ConjugateGradient (see references.hpp).
#include <Eigen/IterativeLinearSolvers>
#include <Eigen/SparseCore>
#include <chrono>

#include "bench/lib/bench_util.hpp"
#include "bench/lib/references.hpp"

namespace cgs::bench {
namespace {

using EigenMatrix = Eigen::SparseMatrix<double, Eigen::RowMajor, index_t>;
using Clock = std::chrono::steady_clock;

EigenMatrix to_eigen(const CsrMatrix<double>& A) {
  const Eigen::Map<const EigenMatrix> view(A.rows, A.cols, A.nnz(), A.row_ptr.data(),
                                           A.col_idx.data(), A.values.data());
  return EigenMatrix(view);
}

Eigen::VectorXd to_eigen(const std::vector<double>& v) {
  return Eigen::Map<const Eigen::VectorXd>(v.data(), Eigen::Index(v.size()));
}

}  // namespace

std::string eigen_version() {
  return std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) + "." +
         std::to_string(EIGEN_MINOR_VERSION);
}

// ---------------------------------------------------------------------------------------------
struct EigenSpmv::Impl {
  EigenMatrix A;
  int threads;
  Eigen::VectorXd x, y;
};

EigenSpmv::EigenSpmv(const CsrMatrix<double>& A, int threads)
    : impl_(new Impl{to_eigen(A), threads, Eigen::VectorXd::Zero(A.cols),
                     Eigen::VectorXd::Zero(A.rows)}) {}
EigenSpmv::~EigenSpmv() = default;

void EigenSpmv::set_x(const std::vector<double>& x) { impl_->x = to_eigen(x); }

std::vector<double> EigenSpmv::timed_batches(int samples, int batch) {
  Eigen::setNbThreads(impl_->threads);
  Impl& m = *impl_;
  return time_on_host([&m] { m.y.noalias() = m.A * m.x; }, samples, batch);
}

std::vector<double> EigenSpmv::y() const {
  return std::vector<double>(impl_->y.data(), impl_->y.data() + impl_->y.size());
}

// ---------------------------------------------------------------------------------------------
struct EigenCg::Impl {
  EigenMatrix A;
  int threads;
  Eigen::ConjugateGradient<EigenMatrix, Eigen::Lower | Eigen::Upper, Eigen::IdentityPreconditioner>
      plain;
  Eigen::ConjugateGradient<EigenMatrix, Eigen::Lower | Eigen::Upper,
                           Eigen::DiagonalPreconditioner<double>>
      jacobi;
};

EigenCg::EigenCg(const CsrMatrix<double>& A, int threads)
    : impl_(new Impl{to_eigen(A), threads, {}, {}}) {
  impl_->plain.compute(impl_->A);
  impl_->jacobi.compute(impl_->A);  // inverts the diagonal: setup, not timed
}
EigenCg::~EigenCg() = default;

namespace {

template <typename Solver>
CgRun run_eigen(Solver& solver, const Eigen::VectorXd& b, const CgRequest& request) {
  const bool fixed = request.iterations > 0;
  solver.setMaxIterations(fixed ? request.iterations : request.max_iterations);
  solver.setTolerance(fixed ? 0.0 : request.tol);  // 0: never met, so exactly `iterations` run
  const auto start = Clock::now();
  const Eigen::VectorXd x = solver.solve(b);
  CgRun run;
  run.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  run.iterations = long(solver.iterations());
  run.converged = solver.info() == Eigen::Success;
  run.x.assign(x.data(), x.data() + x.size());
  return run;
}

}  // namespace

CgRun EigenCg::run(const std::vector<double>& b, const CgRequest& request) {
  Eigen::setNbThreads(impl_->threads);
  const Eigen::VectorXd rhs = to_eigen(b);
  return request.jacobi ? run_eigen(impl_->jacobi, rhs, request)
                        : run_eigen(impl_->plain, rhs, request);
}

}  // namespace cgs::bench
