#include "solver/validate.hpp"

#include <Eigen/IterativeLinearSolvers>
#include <Eigen/SparseCholesky>
#include <Eigen/SparseCore>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <random>

#include "solver/cholmod_api.hpp"

namespace cgs {
namespace {

using SparseMatrix = Eigen::SparseMatrix<double>;
using Vector = Eigen::VectorXd;
using Clock = std::chrono::steady_clock;

// Flop rates assumed for the estimates (measured on two cores of a small machine, right
// within a factor of 2): a supernodal factorisation runs BLAS-3, a simplicial one
// column by column.
constexpr double kSupernodalFlops = 2e9;
constexpr double kSimplicialFlops = 3e8;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

SparseMatrix to_eigen(const CsrMatrix<double>& A) {
  using RowMajor = Eigen::SparseMatrix<double, Eigen::RowMajor, index_t>;
  Eigen::Map<const RowMajor> view(A.rows, A.cols, A.nnz(), A.row_ptr.data(), A.col_idx.data(),
                                  A.values.data());
  return SparseMatrix(view);
}

std::string sci(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2e", v);
  return text;
}
std::string secs(double v) {
  char text[32];
  std::snprintf(text, sizeof text, v < 1 ? "%.3f s" : "%.1f s", v);
  return text;
}

// A direct solver behind one face: its symbolic estimate, then factor and solve.
struct Direct {
  std::string name;
  double factor_nonzeros = 0, flops = 0, estimated_seconds = 0;
  std::function<bool()> factorize;             // false: not positive definite (or failed)
  std::function<Vector(const Vector&)> solve;  // A^-1 v
};

// Eigen's SimplicialLDLT with its column counts, which analyzePattern computes but keeps to
// itself: the factor's size and flops before it is built.
class CountedLdlt : public Eigen::SimplicialLDLT<SparseMatrix> {
 public:
  double nonzeros() const { return double(m_nonZerosPerCol.sum()) + rows(); }
  double flops() const {
    double f = 0;
    for (Eigen::Index j = 0; j < m_nonZerosPerCol.size(); ++j)
      f += double(m_nonZerosPerCol[j]) * double(m_nonZerosPerCol[j]);
    return f;
  }
};

#if CGSOLVE_HAVE_CHOLMOD
// CHOLMOD's supernodal Cholesky: cholmod_analyze orders (AMD/METIS) and counts the factor, and
// leaves its flop count in Common.fl.
class Cholmod {
 public:
  explicit Cholmod(const CsrMatrix<double>& A) : lib_(cholmod::api()) {
    lib_.start(&c_);
    c_.supernodal = CHOLMOD_SUPERNODAL;
    c_.print = 0;
    // CSR of a symmetric matrix = CSC of the same: hand CHOLMOD the upper triangle as stored.
    A_ = lib_.allocate_sparse(A.rows, A.cols, A.nnz(), 1, 1, 1, CHOLMOD_REAL, &c_);
    auto* p = static_cast<int*>(A_->p);
    auto* i = static_cast<int*>(A_->i);
    auto* x = static_cast<double*>(A_->x);
    std::copy(A.row_ptr.begin(), A.row_ptr.end(), p);
    std::copy(A.col_idx.begin(), A.col_idx.end(), i);
    std::copy(A.values.begin(), A.values.end(), x);
    A_->stype = 1;  // use the upper triangle (row <= column of the CSC view)
    L_ = lib_.analyze(A_, &c_);
  }
  ~Cholmod() {
    if (L_) lib_.free_factor(&L_, &c_);
    if (A_) lib_.free_sparse(&A_, &c_);
    lib_.finish(&c_);
  }
  Cholmod(const Cholmod&) = delete;
  Cholmod& operator=(const Cholmod&) = delete;

  bool analyzed() const { return L_ != nullptr; }
  double flops() const { return c_.fl; }
  double nonzeros() const { return c_.lnz; }
  bool factorize() { return lib_.factorize(A_, L_, &c_) && c_.status == CHOLMOD_OK; }
  Vector solve(const Vector& v) {
    cholmod_dense* rhs = lib_.allocate_dense(v.size(), 1, v.size(), CHOLMOD_REAL, &c_);
    std::copy(v.data(), v.data() + v.size(), static_cast<double*>(rhs->x));
    cholmod_dense* sol = lib_.solve(CHOLMOD_A, L_, rhs, &c_);
    Vector out = Eigen::Map<Vector>(static_cast<double*>(sol->x), v.size());
    lib_.free_dense(&rhs, &c_);
    lib_.free_dense(&sol, &c_);
    return out;
  }

 private:
  const cholmod::Api& lib_;
  cholmod_common c_;
  cholmod_sparse* A_ = nullptr;
  cholmod_factor* L_ = nullptr;
};
#endif

// The direct solver this build has, analyzed (symbolically) on A.
std::unique_ptr<Direct> analyze_direct(const CsrMatrix<double>& A, const SparseMatrix& M) {
  auto direct = std::make_unique<Direct>();
#if CGSOLVE_HAVE_CHOLMOD
  // Eigen's LDL^T where the library does not load (cholmod_api.hpp): the verdict still comes.
  auto cholmod = cholmod::available() ? std::make_shared<Cholmod>(A) : nullptr;
  if (cholmod && cholmod->analyzed()) {
    direct->name = "CHOLMOD supernodal Cholesky";
    direct->factor_nonzeros = cholmod->nonzeros();
    direct->flops = cholmod->flops();
    direct->estimated_seconds = direct->flops / kSupernodalFlops;
    direct->factorize = [cholmod] { return cholmod->factorize(); };
    direct->solve = [cholmod](const Vector& v) { return cholmod->solve(v); };
    return direct;
  }
#else
  (void)A;
#endif
  auto ldlt = std::make_shared<CountedLdlt>();
  ldlt->analyzePattern(M);
  direct->name = "Eigen SimplicialLDLT";
  direct->factor_nonzeros = ldlt->nonzeros();
  direct->flops = ldlt->flops();
  direct->estimated_seconds = direct->flops / kSimplicialFlops;
  direct->factorize = [ldlt, &M] {
    ldlt->factorize(M);
    return ldlt->info() == Eigen::Success && (ldlt->vectorD().array() > 0).all();
  };
  direct->solve = [ldlt](const Vector& v) { return Vector(ldlt->solve(v)); };
  return direct;
}

double inf_norm(const SparseMatrix& M) {
  Vector row_sums = Vector::Zero(M.rows());
  for (Eigen::Index c = 0; c < M.outerSize(); ++c)
    for (SparseMatrix::InnerIterator it(M, c); it; ++it) row_sums[it.row()] += std::abs(it.value());
  return row_sums.size() ? row_sums.maxCoeff() : 0.0;
}

double backward_error_of(const SparseMatrix& M, double a_norm, const Vector& b, const Vector& x) {
  const double r = (b - M * x).lpNorm<Eigen::Infinity>();
  const double scale = a_norm * x.lpNorm<Eigen::Infinity>() + b.lpNorm<Eigen::Infinity>();
  return scale > 0 ? r / scale : r;
}

// ||x - reference||_A / ||reference||_A
double energy_difference(const SparseMatrix& M, const Vector& x, const Vector& reference) {
  const Vector e = x - reference;
  const double reference_energy = reference.dot(M * reference);
  const double error_energy = std::max(0.0, e.dot(M * e));
  return reference_energy > 0 ? std::sqrt(error_energy / reference_energy)
                              : std::sqrt(error_energy);
}

// The largest eigenvalue of an SPD operator by power iteration from a fixed random start.
double largest_eigenvalue(const std::function<Vector(const Vector&)>& apply, Eigen::Index n) {
  constexpr int kIterations = 40;
  std::mt19937 random(20261123);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  Vector v(n);
  for (Eigen::Index i = 0; i < n; ++i) v[i] = uniform(random);
  double lambda = 0;
  for (int k = 0; k < kIterations && v.norm() > 0; ++k) {
    v.normalize();
    const Vector w = apply(v);
    lambda = v.dot(w);
    v = w;
  }
  return lambda;
}

}  // namespace

double backward_error(const CsrMatrix<double>& A, const std::vector<double>& b,
                      const std::vector<double>& x) {
  const SparseMatrix M = to_eigen(A);
  return backward_error_of(M, inf_norm(M),
                           Eigen::Map<const Vector>(b.data(), Eigen::Index(b.size())),
                           Eigen::Map<const Vector>(x.data(), Eigen::Index(x.size())));
}

ValidationReport validate_solution(const CsrMatrix<double>& A, const std::vector<double>& b,
                                   const std::vector<double>& x, const ValidationOptions& options) {
  ValidationReport report;
  const SparseMatrix M = to_eigen(A);
  const Eigen::Map<const Vector> rhs(b.data(), Eigen::Index(b.size()));
  const Eigen::Map<const Vector> ours(x.data(), Eigen::Index(x.size()));
  const double a_norm = inf_norm(M);

  // The reference: a direct solve when its estimate allows, Eigen's CG otherwise.
  std::unique_ptr<Direct> direct = analyze_direct(A, M);
  report.estimated_direct_seconds = direct->estimated_seconds;
  report.factor_nonzeros = direct->factor_nonzeros;
  const double budget = std::max(
      options.min_direct_budget,
      std::min(options.max_direct_seconds, options.max_direct_ratio * options.solve_seconds));
  Vector reference;
  std::function<Vector(const Vector&)> inverse;
  auto start = Clock::now();
  if (direct->estimated_seconds <= budget) {
    report.reference_why = "factor of " + sci(direct->factor_nonzeros) + " entries, " +
                           sci(direct->flops) + " flops, estimated " +
                           secs(direct->estimated_seconds);
    if (direct->factorize()) {
      reference = direct->solve(rhs);
      report.reference = direct->name;
      report.reference_ok = true;
      inverse = direct->solve;
    } else {
      report.reference_why += "; the factorisation failed: A is not positive definite";
    }
  } else {
    report.reference_why = "a direct factor (" + direct->name + ") of " +
                           sci(direct->factor_nonzeros) + " entries was estimated at " +
                           secs(direct->estimated_seconds) + ", over the budget of " + secs(budget);
  }
  if (!report.reference_ok) {
    start = Clock::now();
    Eigen::ConjugateGradient<SparseMatrix, Eigen::Lower | Eigen::Upper> cg;
    cg.setTolerance(std::max(options.tol / 100, 1e-15));
    cg.setMaxIterations(std::max<Eigen::Index>(10 * A.rows, 1));
    cg.compute(M);
    reference = cg.solve(rhs);
    report.reference = "Eigen ConjugateGradient (Jacobi) to tol/100";
    report.reference_ok = cg.info() == Eigen::Success;
    if (!report.reference_ok) report.reference += " (did not converge)";
  }
  report.reference_seconds = seconds_since(start);

  // The verdict: backward errors.
  const double b2 = rhs.norm();
  report.relative_residual = b2 > 0 ? (rhs - M * ours).norm() / b2 : (M * ours).norm();
  report.backward_error = backward_error_of(M, a_norm, rhs, ours);
  report.reference_backward_error = backward_error_of(M, a_norm, rhs, reference);
  const double scale = a_norm * ours.lpNorm<Eigen::Infinity>() + rhs.lpNorm<Eigen::Infinity>();
  const double asked = scale > 0 ? std::max(options.tol * b2, options.atol) / scale : 0.0;
  const double from_tolerance = 10 * asked, from_reference = 100 * report.reference_backward_error;
  report.allowed_backward_error = std::max(from_tolerance, from_reference);
  report.passed = report.backward_error <= report.allowed_backward_error;
  report.verdict = std::string(report.passed ? "backward error " : "backward error ") +
                   sci(report.backward_error) + (report.passed ? " <= " : " > ") +
                   sci(report.allowed_backward_error) + " (" +
                   (from_tolerance >= from_reference
                        ? "10x what --tol/--atol ask, " + sci(asked)
                        : "100x the reference's own, " + sci(report.reference_backward_error)) +
                   ")";

  // The forward error, and the bound the residuals imply.
  report.forward_error = energy_difference(M, ours, reference);
  const double ref_norm = reference.norm();
  report.forward_error_2norm = ref_norm > 0 ? (ours - reference).norm() / ref_norm : 0.0;
  if (inverse && A.rows > 0) {
    const double lambda_max =
        largest_eigenvalue([&](const Vector& v) { return Vector(M * v); }, A.rows);
    const double inv_lambda_min = largest_eigenvalue(inverse, A.rows);
    if (lambda_max > 0 && inv_lambda_min > 0) {
      report.condition_estimate = lambda_max * inv_lambda_min;
      const double ref_relres = b2 > 0 ? (rhs - M * reference).norm() / b2 : 0.0;
      report.forward_bound =
          std::sqrt(report.condition_estimate) * (report.relative_residual + ref_relres);
    }
  }
  return report;
}

}  // namespace cgs
