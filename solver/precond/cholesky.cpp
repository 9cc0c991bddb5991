// chol: A's complete sparse Cholesky factor as CG's preconditioner (what PETSc's -pc_type
// cholesky is under -ksp_type cg). Eigen orders A's rows by approximate minimum degree, counts
// the factor (its symbolic analysis) and computes it (SimplicialLLT); the two triangular solves
// are the same level-by-level program ic0 runs, so it runs in every loop on every device.
//
// Why: M = A up to rounding, so CG stops after 1-3 iterations whatever A's conditioning. On
// EPANET's systems (coefficient jumps of 1e6-1e12) ic0 takes 51-462 iterations, Jacobi up to
// 121,000; on the GPU each iteration pays its level-by-level solves, so fewer iterations are the
// lever (the target: BWSN_Network_2 step 10 in <= 30 ms). The price is fill: small on a network's
// near-tree graph, large on 2-D/3-D meshes, so the factor is counted before it is built and
// refused above `maxfill` times tril(A)'s entries (argument, default 20).
#include "solver/precond/cholesky.hpp"

#include <Eigen/OrderingMethods>
#include <Eigen/SparseCholesky>
#include <Eigen/SparseCore>
#include <charconv>
#include <limits>
#include <sstream>
#include <tuple>

#include "formats/row_order.hpp"
#include "solver/precond/builtin.hpp"
#include "solver/precond/sparse_parts.hpp"
#include "solver/precond/triangular_solves.hpp"

namespace cgs::precond {
namespace {

using ColumnMajor = Eigen::SparseMatrix<double, Eigen::ColMajor, index_t>;

// Eigen's SimplicialLLT in AMD order, with the factor's size that analyzePattern computes but
// keeps to itself (as solver/validate.cpp's CountedLdlt).
class CountedLlt
    : public Eigen::SimplicialLLT<ColumnMajor, Eigen::Lower, Eigen::AMDOrdering<index_t>> {
 public:
  double factor_entries() const { return double(m_nonZerosPerCol.sum()) + double(rows()); }
  // Column j's update touches its entries' squares: sum of c_j^2 (as validate.cpp's count).
  double flops() const {
    double f = 0;
    for (Eigen::Index j = 0; j < m_nonZerosPerCol.size(); ++j)
      f += double(m_nonZerosPerCol[j]) * double(m_nonZerosPerCol[j]);
    return f;
  }
};

// A factor is refused when it would hold more than maxfill x tril(A)'s entries and more than
// kSmallFactor entries (a small factor is cheap whatever its ratio: a hub row joined to every 7th
// of 1,013 rows fills 23x into 121k entries), or cost more than kMaxFlops: Eigen's simplicial
// factorisation (no supernodes) runs at ~0.3-1 Gflop/s on one core (55 s on
// gen:poisson2d:1000, 43M entries, 14x, where Jacobi-CG solves it in ~10 s; 14 s on
// gen:poisson3d:30, 4.9 Gflop).
constexpr double kSmallFactor = 1e6;
constexpr double kMaxFlops = 4e9;

// A's CSR arrays read as a column-major matrix: A^T, which is A (symmetric); Eigen's lower
// triangle of it is then tril(A). No copy.
Eigen::Map<const ColumnMajor> as_column_major(const CsrMatrix<double>& A) {
  return {A.rows, A.cols, A.nnz(), A.row_ptr.data(), A.col_idx.data(), A.values.data()};
}

// The factor as the two solves read it, in the solve's numbering: L's and L^T's entries off
// the diagonal, and the diagonal.
struct FactorInSolveOrder {
  CsrMatrix<double> lower, upper;
  std::vector<double> diagonal;
};

// Read straight off Eigen's column-major L (column j: its diagonal, then its rows i > j
// ascending) with old_of = new_to_old of the elimination order: L^T's row old_of[j] is column j,
// L's row old_of[i] gathers row i's entries column by column. One pass to count, one to fill,
// no transposes and no sorts (a row's columns stay in elimination order: the solves only sum
// a row's products); this was a third of chol's set-up on EPANET's systems.
FactorInSolveOrder factor_in_solve_order(const ColumnMajor& F, const std::vector<index_t>& old_of) {
  const index_t n = index_t(F.cols());
  const index_t* first = F.outerIndexPtr();
  const index_t* row = F.innerIndexPtr();
  const double* value = F.valuePtr();
  FactorInSolveOrder f;
  CsrMatrix<double>& L = f.lower;
  CsrMatrix<double>& U = f.upper;
  L.rows = L.cols = U.rows = U.cols = n;
  L.row_ptr.assign(std::size_t(n) + 1, 0);
  U.row_ptr.assign(std::size_t(n) + 1, 0);
  for (index_t j = 0; j < n; ++j) {
    if (first[j] == first[j + 1] || row[first[j]] != j)
      throw std::logic_error("chol: a column of Eigen's factor does not start at its diagonal");
    U.row_ptr[std::size_t(old_of[j]) + 1] = first[j + 1] - first[j] - 1;
    for (index_t k = first[j] + 1; k < first[j + 1]; ++k)
      ++L.row_ptr[std::size_t(old_of[row[k]]) + 1];
  }
  for (index_t i = 0; i < n; ++i) {
    L.row_ptr[std::size_t(i) + 1] += L.row_ptr[std::size_t(i)];
    U.row_ptr[std::size_t(i) + 1] += U.row_ptr[std::size_t(i)];
  }
  const std::size_t entries = std::size_t(U.row_ptr[std::size_t(n)]);
  L.col_idx.resize(entries);
  L.values.resize(entries);
  U.col_idx.resize(entries);
  U.values.resize(entries);
  f.diagonal.resize(std::size_t(n));
  std::vector<index_t> next(L.row_ptr.begin(), L.row_ptr.end() - 1);  // L's next slot per row
  for (index_t j = 0; j < n; ++j) {
    const index_t o = old_of[j];
    f.diagonal[std::size_t(o)] = value[first[j]];
    index_t at = U.row_ptr[std::size_t(o)];
    for (index_t k = first[j] + 1; k < first[j + 1]; ++k, ++at) {
      const index_t i = old_of[row[k]];
      U.col_idx[std::size_t(at)] = i;
      U.values[std::size_t(at)] = value[k];
      const index_t slot = next[std::size_t(i)]++;
      L.col_idx[std::size_t(slot)] = o;
      L.values[std::size_t(slot)] = value[k];
    }
  }
  return f;
}

// The two solves' level schedules in elimination order, from L's columns: in L y = r row i waits
// on the rows j < i whose column holds i; in L^T z = y row j waits on the rows i > j of its
// column. The same level numbers (and schedules) as solve_levels on L by rows.
std::pair<LevelSchedule, LevelSchedule> factor_levels(const ColumnMajor& F) {
  const index_t n = index_t(F.cols());
  const index_t* first = F.outerIndexPtr();
  const index_t* row = F.innerIndexPtr();
  std::vector<index_t> forward(std::size_t(n), 0), backward(std::size_t(n), 0);
  index_t forward_count = n > 0 ? 1 : 0, backward_count = forward_count;
  for (index_t j = 0; j < n; ++j) {  // a column's rows come after it: level[j] is final here
    const index_t next = forward[std::size_t(j)] + 1;
    for (index_t k = first[j] + 1; k < first[j + 1]; ++k)
      forward[std::size_t(row[k])] = std::max(forward[std::size_t(row[k])], next);
    forward_count = std::max(forward_count, next);
  }
  for (index_t j = n - 1; j >= 0; --j) {  // the rows below j are final here
    index_t level = 0;
    for (index_t k = first[j] + 1; k < first[j + 1]; ++k)
      level = std::max(level, backward[std::size_t(row[k])] + 1);
    backward[std::size_t(j)] = level;
    backward_count = std::max(backward_count, level + 1);
  }
  return {forward_schedule(forward, forward_count), backward_schedule(backward, backward_count)};
}

std::string describe(const CholeskyEstimate& e) {
  std::ostringstream text;
  text << std::size_t(e.factor_entries) << " entries, " << e.factor_entries / e.tril_entries
       << "x tril(A)'s, " << e.flops / 1e9 << " Gflop";
  return text.str();
}

// Eigen's order and symbolic analysis of A into `llt`, and the factor's size and cost; a refusal
// where the factor is too big (see kSmallFactor).
CholeskyEstimate analyze(CountedLlt& llt, const CsrMatrix<double>& A, double max_fill) {
  llt.analyzePattern(as_column_major(A));
  if (llt.info() != Eigen::Success) throw InputError("chol: Eigen's analysis of A failed");
  CholeskyEstimate e;
  e.tril_entries = double(A.nnz() + A.rows) / 2;
  e.factor_entries = llt.factor_entries();
  e.flops = llt.flops();
  const bool too_big =
      e.factor_entries > max_fill * e.tril_entries && e.factor_entries > kSmallFactor;
  if (too_big || e.flops > kMaxFlops ||
      e.factor_entries >= double(std::numeric_limits<index_t>::max()))
    e.refusal = "the Cholesky factor would hold " + describe(e) +
                " (limits: " + std::to_string(int(max_fill)) + "x tril(A) above " +
                std::to_string(int(kSmallFactor)) + " entries, chol:maxfill=N raises it; " +
                std::to_string(int(kMaxFlops / 1e9)) +
                " Gflop): use amg, ic0 or fsai on this matrix";
  return e;
}

template <typename T>
class Cholesky final : public Preconditioner<T> {
 public:
  Cholesky(Device device, int threads, double max_fill)
      : Preconditioner<T>(device, threads, false), max_fill_(max_fill) {}
  std::string name() const override { return "chol"; }

 protected:
  void analyze_pattern(const CsrMatrix<double>& A) override {
    llt_ = std::make_unique<CountedLlt>();
    const CholeskyEstimate size = analyze(*llt_, A, max_fill_);
    if (!size.refusal.empty()) throw InputError("chol: " + size.refusal);
    this->report_.set_fact("order", "approximate minimum degree (Eigen)");
    this->report_.set_fact("factor", describe(size));
    // Eigen's P: L L^T = P A P^T with P.indices()[old] = new.
    const auto& P = llt_->permutationP().indices();
    elimination_.new_to_old.assign(std::size_t(A.rows), 0);
    for (index_t old = 0; old < A.rows; ++old) elimination_.new_to_old[P[old]] = old;
  }

  void compute_values(const CsrMatrix<double>& A, ProgramSpec<T>& spec) override {
    llt_->factorize(as_column_major(A));
    if (llt_->info() != Eigen::Success)
      throw InputError(
          "chol: A is not positive definite (a pivot of its Cholesky factor is not "
          "positive)");
    const ColumnMajor& factor = llt_->matrixL().nestedExpression();
    if (spec.ops.empty()) {  // the factor's pattern is fixed by the analysis: levels once
      std::tie(forward_, backward_) = factor_levels(factor);
      this->report_.set_fact(
          "levels", std::to_string(forward_.levels()) + " + " + std::to_string(backward_.levels()));
    }
    // In the solve's numbering: a triangular_level operation names its rows, so the system is
    // not permuted (as ic0's colour order).
    const FactorInSolveOrder parts = factor_in_solve_order(factor, elimination_.new_to_old);
    const CsrMatrix<double>& off = parts.lower;
    const CsrMatrix<double>& off_upper = parts.upper;
    std::vector<T> inverse_diagonal(parts.diagonal.size());
    for (std::size_t i = 0; i < parts.diagonal.size(); ++i)
      inverse_diagonal[i] = T(1.0 / parts.diagonal[i]);
    if (!spec.ops.empty()) {  // same pattern: new values at the same handles
      spec.value_arrays[lower_values_] = cast_to<T>(off.values);
      spec.value_arrays[upper_values_] = cast_to<T>(off_upper.values);
      spec.value_arrays[inverse_diagonal_] = std::move(inverse_diagonal);
      return;
    }
    lower_values_ = spec.add_values(cast_to<T>(off.values));
    upper_values_ = spec.add_values(cast_to<T>(off_upper.values));
    inverse_diagonal_ = spec.add_values(std::move(inverse_diagonal));
    write_solves(spec, off, off_upper, A.rows);
  }

 private:
  // The rows of each solve in the solve's numbering, level after level (elimination order's
  // schedule mapped through new_to_old); on one host thread each solve is one sweep in
  // elimination order, ascending then descending (no levels needed).
  std::vector<index_t> solve_rows(bool forward) const {
    const std::size_t n = elimination_.new_to_old.size();
    std::vector<index_t> rows(n);
    for (std::size_t k = 0; k < n; ++k) {
      const index_t in_order = sequential() ? index_t(forward ? k : n - 1 - k)
                                            : (forward ? forward_ : backward_).rows[k];
      rows[k] = elimination_.new_to_old[std::size_t(in_order)];
    }
    return rows;
  }

  // Forward solve with L (r -> between), backward with L^T (between -> z), level by level.
  void write_solves(ProgramSpec<T>& spec, const CsrMatrix<double>& off,
                    const CsrMatrix<double>& off_upper, index_t n) {
    const int lower_ptr = spec.add_indices(off.row_ptr);
    const int lower_cols = spec.add_indices(off.col_idx);
    const int upper_ptr = spec.add_indices(off_upper.row_ptr);
    const int upper_cols = spec.add_indices(off_upper.col_idx);
    const int forward_rows = spec.add_indices(solve_rows(true));
    const int backward_rows = spec.add_indices(solve_rows(false));
    add_triangular_solves(spec,
                          {lower_ptr, lower_cols, lower_values_, upper_ptr, upper_cols,
                           upper_values_, forward_rows, backward_rows, inverse_diagonal_},
                          n, sequential(), forward_, backward_);
  }

  // A sweep in elimination order is a valid triangular solve only where one thread runs the
  // whole operation (ic0.cpp says why the GPU never is such a place).
  bool sequential() const {
    if (this->device() == Device::gpu) return false;
    return this->device() == Device::serial || this->threads() == 1;
  }

  double max_fill_;
  std::unique_ptr<CountedLlt> llt_;
  RowPermutation elimination_;        // Eigen's AMD order: new_to_old
  LevelSchedule forward_, backward_;  // in elimination order
  int lower_values_ = kNoArray, upper_values_ = kNoArray, inverse_diagonal_ = kNoArray;
};

// "maxfill=N" (N >= 1): the factor may hold N times tril(A)'s entries.
double max_fill_argument(const PrecondSpec& spec) {
  const std::string& a = spec.argument;
  if (a.empty()) return 20;
  const std::string key = "maxfill=";
  int value = 0;
  const char* end = a.data() + a.size();
  if (a.rfind(key, 0) == 0) {
    const auto [ptr, ec] = std::from_chars(a.data() + key.size(), end, value);
    if (ec == std::errc() && ptr == end && value >= 1) return value;
  }
  throw InputError("the chol preconditioner's argument is maxfill=N, N >= 1 (got '" + spec.text() +
                   "')");
}

}  // namespace

CholeskyEstimate estimate_cholesky(const CsrMatrix<double>& A, double max_fill) {
  CountedLlt llt;
  return analyze(llt, A, max_fill);
}

template <typename T>
std::unique_ptr<Preconditioner<T>> make_cholesky(const PrecondSpec& spec, Device device,
                                                 int threads) {
  return std::make_unique<Cholesky<T>>(device, threads, max_fill_argument(spec));
}

template std::unique_ptr<Preconditioner<float>> make_cholesky(const PrecondSpec&, Device, int);
template std::unique_ptr<Preconditioner<double>> make_cholesky(const PrecondSpec&, Device, int);

}  // namespace cgs::precond
