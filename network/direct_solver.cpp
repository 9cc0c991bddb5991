// The junction system solved by a sparse Cholesky factorisation, as EPANET solves it (smatrix.c),
// with a library doing the work: CHOLMOD when the build found it, Eigen's SimplicialLDLT
// otherwise. See linear_solver.hpp for the contract.
//
// Every trial of a network (and every time step of an extended-period run) has the same sparsity
// pattern, so the symbolic analysis -- the fill-reducing ordering and the pattern of L, most of
// the cost of a factorisation's set-up -- runs once; each solve only factorises numerically and
// substitutes. A matrix with another pattern is analysed again.
#include <Eigen/SparseCholesky>
#include <Eigen/SparseCore>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>

#include "formats/types.hpp"
#include "network/cholesky_subtrees.hpp"
#include "network/linear_solver.hpp"
#include "solver/precond/sparse_cholesky.hpp"
#include "solver/cholmod_api.hpp"

namespace cgs::net {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// The residual measures the reports print, of the unscaled system: ||b - Ax|| / ||b|| and the
// componentwise backward error max_i |b - Ax|_i / (|A||x| + |b|)_i. One pass over A.
void measure_residual(const CsrMatrix<double>& A, const std::vector<double>& b,
                      const std::vector<double>& x, LinearSolveStats& stats) {
  double rr = 0, bb = 0, omega = 0;
  for (index_t i = 0; i < A.rows; ++i) {
    const auto [r, magnitude] = row_residual(A, b, x, i);
    rr += r * r;
    bb += b[i] * b[i];
    if (magnitude > 0) omega = std::max(omega, std::abs(r) / magnitude);
  }
  stats.true_relative_residual = bb > 0 ? std::sqrt(rr / bb) : std::sqrt(rr);
  stats.relative_residual = stats.true_relative_residual;
  stats.backward_error = omega;
}

// The ends of a direct solve: a pivot <= 0 at this row, or a solution (measured where asked).
LinearSolveStats pivot_failed(int row, Clock::time_point started) {
  LinearSolveStats stats;
  stats.failed_row = row;
  stats.converged = false;
  stats.seconds = since(started);
  return stats;
}
LinearSolveStats solved(const CsrMatrix<double>& A, const std::vector<double>& b,
                        const std::vector<double>& x, bool measure, Clock::time_point started) {
  LinearSolveStats stats;
  if (measure) measure_residual(A, b, x, stats);
  stats.seconds = since(started);
  return stats;
}
// A solve in a fallback order that went through: always measured, as the reports say why the
// fallback ran, and counted.
bool fallback_solved(const CsrMatrix<double>& A, const std::vector<double>& b,
                     const std::vector<double>& x, Clock::time_point started,
                     LinearSolveStats& stats, int& fallback_solves) {
  stats = solved(A, b, x, true, started);
  ++fallback_solves;
  return true;
}

// The parts of the direct solvers' name() that say how the analysis came about and how often
// the fallback orders (`orders`) were needed.
std::string analysis_note(bool copied, int analyses) {
  return std::string(copied ? ", analysis copied from another solver" : "") + ", analysed " +
         std::to_string(analyses) + (analyses == 1 ? " time)" : " times)");
}
std::string fallback_note(int fallback_solves, const std::string& orders) {
  if (fallback_solves == 0) return "";
  return "; " + std::to_string(fallback_solves) + " solve(s) in " + orders +
         " where that one met a pivot <= 0";
}

// The sparsity pattern the current analysis belongs to.
class Pattern {
 public:
  bool same_as(const CsrMatrix<double>& A) const {
    return A.rows == rows_ && A.row_ptr == row_ptr_ && A.col_idx == col_idx_;
  }
  void remember(const CsrMatrix<double>& A) {
    rows_ = A.rows;
    row_ptr_ = A.row_ptr;
    col_idx_ = A.col_idx;
  }

 private:
  index_t rows_ = -1;
  std::vector<index_t> row_ptr_, col_idx_;
};

#ifdef CGSOLVE_HAVE_CHOLMOD
// A in elimination order: C = P A P^T, built once per pattern, with the slot of every entry of A
// in C so each solve only scatters the values. Factorising C in its natural order spares CHOLMOD
// the two permuted transposes it makes of A on every factorisation (measured on BWSN_Network_2's
// trial matrix, 12,523 rows: 1.14 ms a factorisation on A with AMD, 0.34 ms on C).
struct PermutedMatrix {
  std::vector<int> perm;  // perm[k]: the row of A eliminated k-th
  CsrMatrix<double> C;
  std::vector<index_t> slot;  // slot[j]: where A.values[j] goes in C.values

  void build(const CsrMatrix<double>& A, const int* order) {
    const index_t n = A.rows;
    perm.assign(order, order + n);
    std::vector<int> position(n);
    for (index_t k = 0; k < n; ++k) position[perm[k]] = k;
    C.rows = C.cols = n;
    C.row_ptr.assign(1, 0);
    C.col_idx.clear();
    C.values.assign(A.nnz(), 0.0);
    slot.assign(A.nnz(), 0);
    std::vector<std::pair<index_t, index_t>> row;  // (column in C, index in A)
    for (index_t r = 0; r < n; ++r) {
      const index_t i = perm[r];
      row.clear();
      for (index_t j = A.row_ptr[i]; j < A.row_ptr[i + 1]; ++j)
        row.emplace_back(position[A.col_idx[j]], j);
      std::sort(row.begin(), row.end());
      for (const auto& [column, j] : row) {
        slot[j] = static_cast<index_t>(C.col_idx.size());
        C.col_idx.push_back(column);
      }
      C.row_ptr.push_back(static_cast<index_t>(C.col_idx.size()));
    }
  }
  void scatter(const std::vector<double>& values) {
    for (std::size_t j = 0; j < values.size(); ++j) C.values[slot[j]] = values[j];
  }
};

class CholmodSolver final : public LinearSolver {
 public:
  CholmodSolver() : lib_(cholmod::api()) {
    start(common_);
    // The factorisation runs on P A P^T (PermutedMatrix) in that order: no ordering of its own.
    common_.nmethods = 1;
    common_.method[0].ordering = CHOLMOD_NATURAL;
    common_.postorder = 0;
  }
  ~CholmodSolver() override {
    lib_.free_factor(&factor_, &common_);
    lib_.free_factor(&natural_, &common_);
    lib_.free_dense(&x_, &common_);
    lib_.free_dense(&y_, &common_);
    lib_.free_dense(&e_, &common_);
    lib_.finish(&common_);
  }
  CholmodSolver(const CholmodSolver&) = delete;
  CholmodSolver& operator=(const CholmodSolver&) = delete;

  // The ordering, P A P^T's structure and the symbolic factor copied (cholmod_copy_factor into
  // the copy's own cholmod_common): no analysis in the copy. The file-order factor is not copied
  // (rarely needed; analysed there on first use).
  std::unique_ptr<LinearSolver> clone_analysed() const override {
    auto copy = std::make_unique<CholmodSolver>();
    if (!factor_) return copy;
    copy->factor_ = lib_.copy_factor(factor_, &copy->common_);
    copy->check("copy_factor");
    copy->permuted_ = permuted_;
    copy->pattern_ = pattern_;
    copy->ordering_ = ordering_;
    copy->analyses_ = 0;
    copy->copied_ = true;
    copy->measure_ = measure_;
    return copy;
  }
  void measure_residuals(bool on) override { measure_ = on; }

  LinearSolveStats solve(const CsrMatrix<double>& A, const std::vector<double>& b,
                         std::vector<double>& x) override {
    const auto started = Clock::now();
    if (empty_system(A, x)) return {};
    if (!factor_ || !pattern_.same_as(A)) analyse(A);
    permuted_.scatter(A.values);
    cholmod_sparse view = sparse_view(permuted_.C);
    lib_.factorize(&view, factor_, &common_);
    if (common_.status == CHOLMOD_NOT_POSDEF)
      return pivot_failed(permuted_.perm[factor_->minor], started);
    check("factorize");
    const std::vector<int>& perm = permuted_.perm;
    rhs_.resize(b.size());
    for (std::size_t k = 0; k < b.size(); ++k) rhs_[k] = b[perm[k]];
    cholmod_dense rhs = dense_view(rhs_);
    lib_.solve2(CHOLMOD_A, factor_, &rhs, nullptr, &x_, nullptr, &y_, &e_, &common_);
    check("solve");
    const double* solution = static_cast<const double*>(x_->x);
    x.resize(b.size());
    for (std::size_t k = 0; k < b.size(); ++k) x[perm[k]] = solution[k];
    return solved(A, b, x, measure_, started);
  }

  // A pivot <= 0 on a matrix that is positive definite in exact arithmetic depends on the
  // elimination order: in a zone joined to the rest only by closed links' 1e-8 couplings the
  // pivots are differences of numbers 1e10 times larger. EPANET eliminates in its own
  // minimum-degree order and may go through where AMD's order stops; the file's order is the
  // second chance before error 110. Analysed on first use.
  bool solve_in_file_order(const CsrMatrix<double>& A, const std::vector<double>& b,
                           std::vector<double>& x, LinearSolveStats& stats) override {
    const auto started = Clock::now();
    cholmod_sparse view = sparse_view(A);
    if (!natural_ || !natural_pattern_.same_as(A)) {
      lib_.free_factor(&natural_, &common_);
      natural_ = lib_.analyze(&view, &common_);  // common_ orders naturally (constructor)
      check("analyze");
      natural_pattern_.remember(A);
    }
    lib_.factorize(&view, natural_, &common_);
    if (common_.status == CHOLMOD_NOT_POSDEF) return false;
    check("factorize");
    cholmod_dense rhs = dense_view(const_cast<std::vector<double>&>(b));
    lib_.solve2(CHOLMOD_A, natural_, &rhs, nullptr, &x_, nullptr, &y_, &e_, &common_);
    check("solve");
    const double* solution = static_cast<const double*>(x_->x);
    x.assign(solution, solution + b.size());
    return fallback_solved(A, b, x, started, stats, file_order_solves_);
  }

  std::string kind() const override { return "direct"; }
  std::string backend() const override { return "cholmod"; }
  int analyses() const override { return analyses_; }
  std::string name() const override {
    std::string text = "direct: CHOLMOD sparse Cholesky LL^T";
    if (factor_)
      text += " (" + ordering_ + " ordering, " + (factor_->is_super ? "supernodal" : "simplicial") +
              analysis_note(copied_, analyses_);
    return text + fallback_note(file_order_solves_, "the file's order");
  }

 private:
  void start(cholmod_common& common) const {
    lib_.start(&common);
    // LL^T, not CHOLMOD's default LDL^T: a simplicial LDL^T goes on through negative pivots, and
    // a pivot <= 0 is exactly what must be caught (EPANET's error 110).
    common.final_ll = 1;
    common.print = 0;  // failures are reported through failed_row, not printed
    common.error_handler = nullptr;
  }

  static cholmod_sparse sparse_view(const CsrMatrix<double>& A) {
    // A symmetric CSR matrix read as compressed columns is A^T = A; stype 1 uses the upper
    // triangle only. No copy: CHOLMOD only reads the arrays.
    cholmod_sparse view{};
    view.nrow = view.ncol = static_cast<size_t>(A.rows);
    view.nzmax = static_cast<size_t>(A.nnz());
    view.p = const_cast<index_t*>(A.row_ptr.data());
    view.i = const_cast<index_t*>(A.col_idx.data());
    view.x = const_cast<double*>(A.values.data());
    view.stype = 1;
    view.itype = CHOLMOD_INT;
    view.xtype = CHOLMOD_REAL;
    view.dtype = CHOLMOD_DOUBLE;
    view.sorted = 1;
    view.packed = 1;
    return view;
  }

  static cholmod_dense dense_view(std::vector<double>& b) {
    cholmod_dense view{};
    view.nrow = view.nzmax = view.d = b.size();
    view.ncol = 1;
    view.x = b.data();
    view.xtype = CHOLMOD_REAL;
    view.dtype = CHOLMOD_DOUBLE;
    return view;
  }

  // The fill-reducing ordering of A (CHOLMOD's default choice: AMD, METIS where it pays), then
  // the symbolic factor of P A P^T in natural order.
  void analyse(const CsrMatrix<double>& A) {
    cholmod_common ordering_common;
    start(ordering_common);
    cholmod_sparse view = sparse_view(A);
    cholmod_factor* ordering = lib_.analyze(&view, &ordering_common);
    if (!ordering) {
      lib_.finish(&ordering_common);
      throw std::runtime_error("CHOLMOD analyze failed");
    }
    ordering_ = ordering_name(ordering_common.method[ordering_common.selected].ordering);
    permuted_.build(A, static_cast<const int*>(ordering->Perm));
    lib_.free_factor(&ordering, &ordering_common);
    lib_.finish(&ordering_common);

    lib_.free_factor(&factor_, &common_);
    cholmod_sparse permuted = sparse_view(permuted_.C);
    factor_ = lib_.analyze(&permuted, &common_);
    check("analyze");
    pattern_.remember(A);
    ++analyses_;
  }

  static std::string ordering_name(int ordering) {
    switch (ordering) {
      case CHOLMOD_AMD: return "AMD";
      case CHOLMOD_METIS: return "METIS";
      case CHOLMOD_NESDIS: return "NESDIS";
      case CHOLMOD_COLAMD: return "COLAMD";
      case CHOLMOD_NATURAL: return "natural";
      default: return "CHOLMOD's";
    }
  }

  void check(const char* step) const {
    if (common_.status != CHOLMOD_OK)
      throw std::runtime_error(std::string("CHOLMOD ") + step + " failed (status " +
                               std::to_string(common_.status) + ")");
  }

  const cholmod::Api& lib_;  // first: every other member's clean-up calls it
  cholmod_common common_{};
  cholmod_factor* factor_ = nullptr;
  cholmod_factor* natural_ = nullptr;  // A in the file's order (solve_in_file_order)
  Pattern natural_pattern_;
  int file_order_solves_ = 0;
  cholmod_dense *x_ = nullptr, *y_ = nullptr, *e_ = nullptr;  // solve2's reused workspace
  PermutedMatrix permuted_;
  std::vector<double> rhs_;
  Pattern pattern_;
  int analyses_ = 0;
  bool copied_ = false;  // clone_analysed(): the analysis came with the copy
  bool measure_ = true;  // measure_residuals
  std::string ordering_;
};
#endif

// netsolve's own sparse Cholesky in EPANET's order of operations (sparse_cholesky.hpp): the
// default, as it needs no library and is as fast as CHOLMOD on networks (BENCHMARKS.md 11).
class NativeSolver final : public LinearSolver {
 public:
  NativeSolver() = default;
  explicit NativeSolver(std::vector<int> order) : given_order_(std::move(order)), fixed_(true) {}

  // EPANET's order, unless one was given; a new order is analysed on the next solve.
  void suggest_elimination_order(const std::vector<int>& order) override {
    if (fixed_ || order == given_order_) return;
    given_order_ = order;
    pattern_ = {};
  }

  LinearSolveStats solve(const CsrMatrix<double>& A, const std::vector<double>& b,
                         std::vector<double>& x) override {
    const auto started = Clock::now();
    if (empty_system(A, x)) return {};
    if (!cholesky_.analysed() || !pattern_.same_as(A)) {
      cholesky_.analyse(A,
                        given_order_.empty() ? precond::minimum_degree_order(A) : checked(given_order_, A));
      subtrees_.analyse(cholesky_, A.nnz(), threads_);
      pattern_.remember(A);
      ++analyses_;
    }
    int failed_row = -1;
    if (!subtrees_.factorize(A, &failed_row)) return pivot_failed(failed_row, started);
    subtrees_.solve(b, x);
    return solved(A, b, x, measure_, started);
  }
  void measure_residuals(bool on) override { measure_ = on; }
  void set_threads(int threads) override {
    if (threads == threads_) return;
    threads_ = threads;
    pattern_ = {};  // partitioned again on the next solve
  }

  // A pivot <= 0 depends on the elimination order (CholmodSolver::solve_in_file_order says
  // why): the file's order, then AMD's, are the second and third chances before error 110 (a
  // C-Town variant whose path had left EPANET's met one in EPANET's order and in the file's,
  // where CHOLMOD's AMD order went through). Each analysed on first use.
  bool solve_in_file_order(const CsrMatrix<double>& A, const std::vector<double>& b,
                           std::vector<double>& x, LinearSolveStats& stats) override {
    const auto started = Clock::now();
    if (!fallbacks_pattern_.same_as(A)) {
      std::vector<int> identity(A.rows);
      for (index_t i = 0; i < A.rows; ++i) identity[i] = static_cast<int>(i);
      file_order_.analyse(A, identity);
      amd_order_ = precond::SparseCholesky();
      fallbacks_pattern_.remember(A);
    }
    int failed_row = -1;
    precond::SparseCholesky* used = &file_order_;
    if (!file_order_.factorize(A, &failed_row)) {
      if (!amd_order_.analysed()) amd_order_.analyse(A, precond::minimum_degree_order(A));
      if (!amd_order_.factorize(A, &failed_row)) return false;
      used = &amd_order_;
    }
    used->solve(b, x);
    return fallback_solved(A, b, x, started, stats, file_order_solves_);
  }

  std::unique_ptr<LinearSolver> clone_analysed() const override {
    auto copy = std::make_unique<NativeSolver>(*this);
    copy->analyses_ = 0;
    copy->file_order_solves_ = 0;
    copy->copied_ = cholesky_.analysed();
    return copy;
  }

  std::string kind() const override { return "direct"; }
  std::string backend() const override { return "native"; }

  static const std::vector<int>& checked(const std::vector<int>& order,
                                         const CsrMatrix<double>& A) {
    std::vector<char> seen(A.rows, 0);
    bool permutation = static_cast<index_t>(order.size()) == A.rows;
    for (int i : order) permutation = permutation && i >= 0 && i < A.rows && !seen[i]++;
    if (!permutation)
      throw InputError("the elimination order has " + std::to_string(order.size()) +
                       " entries, not a permutation of the system's " + std::to_string(A.rows) +
                       " junctions");
    return order;
  }
  int analyses() const override { return analyses_; }
  std::string name() const override {
    std::string text = "direct: sparse Cholesky LL^T, EPANET's left-looking factorisation";
    if (cholesky_.analysed())
      text += std::string(given_order_.empty() ? " (AMD ordering, "
                          : fixed_             ? " (given ordering, "
                                               : " (EPANET's multiple minimum degree ordering, ") +
              std::to_string(cholesky_.factor_nonzeros()) + " nonzeros below L's diagonal" +
              analysis_note(copied_, analyses_);
    return text + fallback_note(file_order_solves_, "the file's or AMD's order");
  }

 private:
  std::vector<int> given_order_;  // empty: minimum degree (AMD)
  bool fixed_ = false;            // given_order_ came with the solver: suggestions are ignored
  precond::SparseCholesky cholesky_, file_order_, amd_order_;  // the latter two: the fallbacks
  SubtreeCholesky subtrees_;  // cholesky_'s analysis factorised on threads_ threads
  int threads_ = 1;
  Pattern pattern_, fallbacks_pattern_;
  int analyses_ = 0, file_order_solves_ = 0;
  bool copied_ = false;
  bool measure_ = true;  // measure_residuals
};

class EigenLdltSolver final : public LinearSolver {
 public:
  LinearSolveStats solve(const CsrMatrix<double>& A, const std::vector<double>& b,
                         std::vector<double>& x) override {
    const auto start = Clock::now();
    if (empty_system(A, x)) return {};
    if (!analysed_ || !pattern_.same_as(A)) {
      // The CSR arrays read as compressed columns are A^T = A (symmetric): copied once.
      M_ = Eigen::Map<const Eigen::SparseMatrix<double>>(A.rows, A.cols, A.nnz(), A.row_ptr.data(),
                                                         A.col_idx.data(), A.values.data());
      ldlt_.analyzePattern(M_);
      pattern_.remember(A);
      analysed_ = true;
      ++analyses_;
    } else {
      std::copy(A.values.begin(), A.values.end(), M_.valuePtr());
    }
    ldlt_.factorize(M_);
    // LDL^T goes on through negative pivots (it stops only at a zero one): the first d <= 0 in
    // elimination order is where a Cholesky factorisation, and EPANET's, fails.
    const auto& d = ldlt_.vectorD();
    for (index_t k = 0; k < A.rows; ++k) {
      if (!(d[k] > 0)) return pivot_failed(ldlt_.permutationPinv().indices()[k], start);
    }
    Eigen::Map<const Eigen::VectorXd> rhs(b.data(), static_cast<Eigen::Index>(b.size()));
    x.resize(b.size());
    Eigen::Map<Eigen::VectorXd>(x.data(), static_cast<Eigen::Index>(x.size())) = ldlt_.solve(rhs);
    return solved(A, b, x, measure_, start);
  }

  std::string kind() const override { return "direct"; }
  std::string backend() const override { return "eigen"; }
  void measure_residuals(bool on) override { measure_ = on; }
  int analyses() const override { return analyses_; }
  std::string name() const override {
    return "direct: Eigen SimplicialLDLT (AMD ordering, analysed " + std::to_string(analyses_) +
           (analyses_ == 1 ? " time)" : " times)");
  }

 private:
  Eigen::SparseMatrix<double> M_;
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>, Eigen::Lower, Eigen::AMDOrdering<int>> ldlt_;
  Pattern pattern_;
  bool analysed_ = false;
  int analyses_ = 0;
  bool measure_ = true;  // measure_residuals
};

}  // namespace

bool cholmod_available() {
#ifdef CGSOLVE_HAVE_CHOLMOD
  return cholmod::available();
#else
  return false;
#endif
}

std::unique_ptr<LinearSolver> make_native_solver(std::vector<int> elimination_order) {
  return std::make_unique<NativeSolver>(std::move(elimination_order));
}

std::unique_ptr<LinearSolver> make_direct_solver(DirectBackend backend) {
  if (backend == DirectBackend::automatic) backend = DirectBackend::native;
  if (backend == DirectBackend::native) return std::make_unique<NativeSolver>();
  if (backend == DirectBackend::eigen) return std::make_unique<EigenLdltSolver>();
#ifdef CGSOLVE_HAVE_CHOLMOD
  std::string why;
  if (!cholmod::available(&why)) throw InputError("the direct solver's CHOLMOD backend: " + why);
  return std::make_unique<CholmodSolver>();
#else
  throw InputError(
      "the direct solver's CHOLMOD backend was asked for, but this build has no "
      "CHOLMOD (install libsuitesparse-dev and reconfigure)");
#endif
}

}  // namespace cgs::net
