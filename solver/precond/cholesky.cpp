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
//
// The order: Eigen's AMD (order=amd, the default), or one the caller fixes: A's own
// (order=natural) or given with the request (order=given, PrecondSpec::elimination_order;
// netsolve gives EPANET's). A fixed order is factorised left-looking in EPANET's order of
// operations (sparse_cholesky.hpp) and solved by substitutions rounded as EPANET's, so that
// M^-1 b is EPANET's own solution bit for bit: on systems whose answer EPANET's rounding decides
// (a zone cut off by closed links), CG then starts from it. A pivot <= 0 there is met with a
// small diagonal shift instead of a refusal.
#include "solver/precond/cholesky.hpp"

#include <Eigen/OrderingMethods>
#include <Eigen/SparseCholesky>
#include <Eigen/SparseCore>
#include <algorithm>
#include <cmath>
#include <charconv>
#include <limits>
#include <sstream>
#include <tuple>
#include <vector>

#include "formats/row_order.hpp"
#include "solver/precond/builtin.hpp"
#include "solver/precond/sparse_cholesky.hpp"
#include "solver/precond/sparse_parts.hpp"
#include "solver/precond/triangular_solves.hpp"

namespace cgs::precond {
namespace {

using ColumnMajor = Eigen::SparseMatrix<double, Eigen::ColMajor, index_t>;

// Eigen's SimplicialLLT (in AMD order, or in the matrix's own for a matrix already permuted),
// with the factor's size that analyzePattern computes but keeps to itself (as
// solver/validate.cpp's CountedLdlt).
template <typename Ordering>
class CountedLltIn : public Eigen::SimplicialLLT<ColumnMajor, Eigen::Lower, Ordering> {
  using Eigen::SimplicialLLT<ColumnMajor, Eigen::Lower, Ordering>::m_nonZerosPerCol;
  using Eigen::SimplicialLLT<ColumnMajor, Eigen::Lower, Ordering>::m_parent;

 public:
  using Eigen::SimplicialLLT<ColumnMajor, Eigen::Lower, Ordering>::rows;
  double factor_entries() const { return double(m_nonZerosPerCol.sum()) + double(rows()); }
  // The triangular solves' level count: the elimination tree's height (a column waits for its
  // children in the tree, and every path of L's dependencies runs along it).
  double levels() const {
    std::vector<index_t> height(std::size_t(m_parent.size()), 0);
    index_t most = 0;
    for (Eigen::Index j = 0; j < m_parent.size(); ++j) {
      most = std::max(most, height[std::size_t(j)]);
      if (m_parent[j] >= 0)
        height[std::size_t(m_parent[j])] =
            std::max(height[std::size_t(m_parent[j])], index_t(height[std::size_t(j)] + 1));
    }
    return m_parent.size() > 0 ? double(most) + 1 : 0;
  }
  // Column j's update touches its entries' squares: sum of c_j^2 (as validate.cpp's count).
  double flops() const {
    double f = 0;
    for (Eigen::Index j = 0; j < m_nonZerosPerCol.size(); ++j)
      f += double(m_nonZerosPerCol[j]) * double(m_nonZerosPerCol[j]);
    return f;
  }
};
using CountedLlt = CountedLltIn<Eigen::AMDOrdering<index_t>>;

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
  // Where each value came from in the factor's columns (FactorColumns: value[k], diag(j)), so
  // that a factor of the same pattern is a gather into the same slots.
  std::vector<index_t> lower_source, upper_source, diagonal_source;
};

// A factor L by columns in elimination order, as either factorisation leaves it: column j's
// entries below the diagonal at [first[j] + skip, first[j + 1]) (rows ascending), its diagonal
// at value[first[j]] (Eigen's, skip = 1) or diagonal[j] (the left-looking one's, skip = 0).
struct FactorColumns {
  index_t n = 0;
  const index_t* first = nullptr;
  const index_t* row = nullptr;
  const double* value = nullptr;
  const double* diagonal = nullptr;  // null: at value[first[j]]
  index_t skip = 0;
  index_t begin(index_t j) const { return first[j] + skip; }
  index_t end(index_t j) const { return first[j + 1]; }
  double diag(index_t j) const { return diagonal ? diagonal[j] : value[first[j]]; }
};

FactorColumns columns_of(const ColumnMajor& F) {
  for (index_t j = 0; j < index_t(F.cols()); ++j)
    if (F.outerIndexPtr()[j] == F.outerIndexPtr()[j + 1] ||
        F.innerIndexPtr()[F.outerIndexPtr()[j]] != j)
      throw std::logic_error("chol: a column of Eigen's factor does not start at its diagonal");
  return {index_t(F.cols()), F.outerIndexPtr(), F.innerIndexPtr(), F.valuePtr(), nullptr, 1};
}

FactorColumns columns_of(const SparseCholesky& c) {
  return {index_t(c.size()), c.column_pointers().data(), c.row_indices().data(),
          c.values().data(), c.diagonal().data(), 0};
}

// Read straight off L's columns with old_of = new_to_old of the elimination order: L^T's row
// old_of[j] is column j, L's row old_of[i] gathers row i's entries column by column (so in
// elimination order: a substitution's order of subtractions). One pass to count, one to fill,
// no transposes and no sorts; this was a third of chol's set-up on EPANET's systems.
FactorInSolveOrder factor_in_solve_order(const FactorColumns& F,
                                         const std::vector<index_t>& old_of) {
  const index_t n = F.n;
  FactorInSolveOrder f;
  CsrMatrix<double>& L = f.lower;
  CsrMatrix<double>& U = f.upper;
  L.rows = L.cols = U.rows = U.cols = n;
  L.row_ptr.assign(std::size_t(n) + 1, 0);
  U.row_ptr.assign(std::size_t(n) + 1, 0);
  for (index_t j = 0; j < n; ++j) {
    U.row_ptr[std::size_t(old_of[j]) + 1] = F.end(j) - F.begin(j);
    for (index_t k = F.begin(j); k < F.end(j); ++k) ++L.row_ptr[std::size_t(old_of[F.row[k]]) + 1];
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
  f.lower_source.resize(entries);
  f.upper_source.resize(entries);
  f.diagonal.resize(std::size_t(n));
  f.diagonal_source.resize(std::size_t(n));
  std::vector<index_t> next(L.row_ptr.begin(), L.row_ptr.end() - 1);  // L's next slot per row
  for (index_t j = 0; j < n; ++j) {
    const index_t o = old_of[j];
    f.diagonal[std::size_t(o)] = F.diag(j);
    f.diagonal_source[std::size_t(o)] = j;
    index_t at = U.row_ptr[std::size_t(o)];
    for (index_t k = F.begin(j); k < F.end(j); ++k, ++at) {
      const index_t i = old_of[F.row[k]];
      U.col_idx[std::size_t(at)] = i;
      U.values[std::size_t(at)] = F.value[k];
      f.upper_source[std::size_t(at)] = k;
      const index_t slot = next[std::size_t(i)]++;
      L.col_idx[std::size_t(slot)] = o;
      L.values[std::size_t(slot)] = F.value[k];
      f.lower_source[std::size_t(slot)] = k;
    }
  }
  return f;
}

// The two solves' level schedules in elimination order, from L's columns: in L y = r row i waits
// on the rows j < i whose column holds i; in L^T z = y row j waits on the rows i > j of its
// column. The same level numbers (and schedules) as solve_levels on L by rows.
std::pair<LevelSchedule, LevelSchedule> factor_levels(const FactorColumns& F) {
  const index_t n = F.n;
  std::vector<index_t> forward(std::size_t(n), 0), backward(std::size_t(n), 0);
  index_t forward_count = n > 0 ? 1 : 0, backward_count = forward_count;
  for (index_t j = 0; j < n; ++j) {  // a column's rows come after it: level[j] is final here
    const index_t next = forward[std::size_t(j)] + 1;
    for (index_t k = F.begin(j); k < F.end(j); ++k)
      forward[std::size_t(F.row[k])] = std::max(forward[std::size_t(F.row[k])], next);
    forward_count = std::max(forward_count, next);
  }
  for (index_t j = n - 1; j >= 0; --j) {  // the rows below j are final here
    index_t level = 0;
    for (index_t k = F.begin(j); k < F.end(j); ++k)
      level = std::max(level, backward[std::size_t(F.row[k])] + 1);
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

// The factor's size from a symbolic analysis, and a refusal where it is too big (see
// kSmallFactor).
template <typename Llt>
CholeskyEstimate estimate_from(const Llt& llt, const CsrMatrix<double>& A, double max_fill) {
  CholeskyEstimate e;
  e.tril_entries = double(A.nnz() + A.rows) / 2;
  e.factor_entries = llt.factor_entries();
  e.flops = llt.flops();
  e.levels = llt.levels();
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

// Eigen's AMD (minimum_degree_ordering) crashes on large graphs with hubs: gen:powerlaw:1000000
// and 2000000, whose longest rows (18,349 entries and more) pass AMD's "dense" threshold of
// 10 sqrt(n). Their factors fill in far past any limit anyway (gen:powerlaw:200000: 472x
// tril(A), 6,673 Gflop), so such a graph is refused before the ordering runs.
constexpr index_t kAmdGuardRows = 500000;
std::string amd_refusal(const CsrMatrix<double>& A) {
  if (A.rows <= kAmdGuardRows) return "";
  index_t longest = 0;
  for (index_t i = 0; i < A.rows; ++i) longest = std::max(longest, A.row_length(i));
  const double dense = 10 * std::sqrt(double(A.rows));
  if (double(longest) <= dense) return "";
  return "a graph of " + std::to_string(A.rows) + " rows with hubs (a row of " +
         std::to_string(longest) + " entries, past 10 sqrt(n) = " + std::to_string(int(dense)) +
         "): its factor fills in far past any limit, and Eigen's AMD ordering cannot order it; "
         "use amg, ic0 or jacobi on this matrix";
}

// Eigen's order and symbolic analysis of A into `llt`, and the factor's size and cost.
CholeskyEstimate analyze(CountedLlt& llt, const CsrMatrix<double>& A, double max_fill) {
  if (const std::string refusal = amd_refusal(A); !refusal.empty()) {
    CholeskyEstimate e;
    e.tril_entries = double(A.nnz() + A.rows) / 2;
    e.refusal = refusal;
    return e;
  }
  llt.analyzePattern(as_column_major(A));
  if (llt.info() != Eigen::Success) throw InputError("chol: Eigen's analysis of A failed");
  return estimate_from(llt, A, max_fill);
}

// The factor's size in a given elimination order (order[k]: the row eliminated k-th), counted
// on P A P^T before the left-looking analysis builds its pattern (which would hold all of it).
CholeskyEstimate estimate_in_order(const CsrMatrix<double>& A, const std::vector<int>& order,
                                   double max_fill) {
  RowPermutation P;
  P.new_to_old.assign(order.begin(), order.end());
  const CsrMatrix<double> permuted = permute_symmetric(A, P);
  CountedLltIn<Eigen::NaturalOrdering<index_t>> llt;
  llt.analyzePattern(as_column_major(permuted));
  if (llt.info() != Eigen::Success) throw InputError("chol: Eigen's analysis of A failed");
  return estimate_from(llt, A, max_fill);
}

// chol's argument: maxfill=N and order=amd|natural|given, comma-separated.
enum class CholOrder { amd, natural, given };
struct CholOptions {
  double max_fill = 20;
  CholOrder order = CholOrder::amd;
  bool shift = true;  // pivot=shift: past a pivot <= 0 in a fixed order with kShifts; fail: throw
};

// The elimination order of a left-looking factorisation: A's own, or the caller's, checked.
std::vector<int> elimination_order(CholOrder order, const ElimOrder& given, index_t n) {
  std::vector<int> o;
  if (order == CholOrder::natural) {
    o.resize(std::size_t(n));
    for (index_t i = 0; i < n; ++i) o[std::size_t(i)] = int(i);
    return o;
  }
  if (!given)
    throw InputError("chol:order=given needs an elimination order from the caller (netsolve "
                     "gives EPANET's); cgsolve's choices are order=amd or order=natural");
  if (given->size() != std::size_t(n))
    throw InputError("chol: the given elimination order has " + std::to_string(given->size()) +
                     " rows, the matrix " + std::to_string(n));
  std::vector<char> seen(std::size_t(n), 0);
  for (int r : *given) {
    if (r < 0 || r >= n || seen[std::size_t(r)])
      throw InputError("chol: the given elimination order is not a permutation of the rows");
    seen[std::size_t(r)] = 1;
  }
  return *given;
}

// Diagonal shifts tried, in turn, where the factor in a given order meets a pivot <= 0 (a
// nearly singular system, as a network zone cut off by closed links, loses positivity to
// rounding in some orders): A + shift diag(A), so that M stays close to A and CG corrects the
// rest in a few iterations.
constexpr double kShifts[] = {1e-14, 1e-12, 1e-10, 1e-8, 1e-6, 1e-4, 1e-2};
std::string shift_text(double shift) {
  std::ostringstream text;
  text << shift;
  return text.str();
}

template <typename T>
class Cholesky final : public Preconditioner<T> {
 public:
  Cholesky(Device device, int threads, CholOptions options, ElimOrder given)
      : Preconditioner<T>(device, threads, false), options_(options), given_(std::move(given)) {}
  std::string name() const override { return "chol"; }

 protected:
  void analyze_pattern(const CsrMatrix<double>& A) override {
    if (options_.order == CholOrder::amd)
      analyze_amd(A);
    else
      analyze_in_order(A);
  }

  void compute_values(const CsrMatrix<double>& A, ProgramSpec<T>& spec) override {
    const FactorColumns factor = left_looking() ? factorize_in_order(A) : factorize_amd(A);
    if (!spec.ops.empty()) {  // same pattern: new values gathered into the same slots
      gather_values(factor, spec);
      return;
    }
    // The factor's pattern is fixed by the analysis: levels and the solves' layout once.
    std::tie(forward_, backward_) = factor_levels(factor);
    this->report_.set_fact(
        "levels", std::to_string(forward_.levels()) + " + " + std::to_string(backward_.levels()));
    // In the solve's numbering: a triangular_level operation names its rows, so the system is
    // not permuted (as ic0's colour order).
    FactorInSolveOrder parts = factor_in_solve_order(factor, elimination_.new_to_old);
    const CsrMatrix<double>& off = parts.lower;
    const CsrMatrix<double>& off_upper = parts.upper;
    std::vector<T> diagonal(parts.diagonal.size());
    for (std::size_t i = 0; i < parts.diagonal.size(); ++i)
      diagonal[i] = solve_diagonal(parts.diagonal[i]);
    lower_source_ = std::move(parts.lower_source);
    upper_source_ = std::move(parts.upper_source);
    diagonal_source_ = std::move(parts.diagonal_source);
    if (this->device() == Device::gpu) {
      lower_values_ = spec.add_values(cast_to<T>(off.values));
      upper_values_ = spec.add_values(cast_to<T>(off_upper.values));
      diagonal_ = spec.add_values(std::move(diagonal));
    } else {  // the host program reads them here: each factor is gathered once, not copied again
      lower_ = cast_to<T>(off.values);
      upper_ = cast_to<T>(off_upper.values);
      diagonal_host_ = std::move(diagonal);
      lower_values_ = spec.borrow_values(lower_.data());
      upper_values_ = spec.borrow_values(upper_.data());
      diagonal_ = spec.borrow_values(diagonal_host_.data());
    }
    write_solves(spec, off, off_upper, A.rows);
  }

 private:
  bool left_looking() const { return options_.order != CholOrder::amd; }

  // The left-looking factor's solves divide by the diagonal (a substitution's rounding);
  // Eigen's multiply by its inverse.
  T solve_diagonal(double d) const { return T(left_looking() ? d : 1.0 / d); }

  // A factor of the analysed pattern into the program's value arrays (on the GPU: uploaded
  // after this) or the host program's borrowed ones, in place.
  void gather_values(const FactorColumns& factor, ProgramSpec<T>& spec) {
    const bool gpu = this->device() == Device::gpu;
    std::vector<T>& lower = gpu ? spec.value_arrays[std::size_t(lower_values_)] : lower_;
    std::vector<T>& upper = gpu ? spec.value_arrays[std::size_t(upper_values_)] : upper_;
    std::vector<T>& diagonal = gpu ? spec.value_arrays[std::size_t(diagonal_)] : diagonal_host_;
    for (std::size_t k = 0; k < lower.size(); ++k) lower[k] = T(factor.value[lower_source_[k]]);
    for (std::size_t k = 0; k < upper.size(); ++k) upper[k] = T(factor.value[upper_source_[k]]);
    for (std::size_t i = 0; i < diagonal.size(); ++i)
      diagonal[i] = solve_diagonal(factor.diag(diagonal_source_[i]));
  }

  void analyze_amd(const CsrMatrix<double>& A) {
    llt_ = std::make_unique<CountedLlt>();
    const CholeskyEstimate size = analyze(*llt_, A, options_.max_fill);
    if (!size.refusal.empty()) throw InputError("chol: " + size.refusal);
    this->report_.set_fact("order", "approximate minimum degree (Eigen)");
    this->report_.set_fact("factor", describe(size));
    // Eigen's P: L L^T = P A P^T with P.indices()[old] = new.
    const auto& P = llt_->permutationP().indices();
    elimination_.new_to_old.assign(std::size_t(A.rows), 0);
    for (index_t old = 0; old < A.rows; ++old) elimination_.new_to_old[P[old]] = old;
  }

  // order=natural|given: George & Liu's left-looking factorisation in that order, EPANET's
  // order of operations (solver/precond/sparse_cholesky.hpp), its solves rounded as EPANET's
  // substitutions: where the order is EPANET's, M^-1 b is EPANET's solution bit for bit.
  void analyze_in_order(const CsrMatrix<double>& A) {
    const std::vector<int> order = elimination_order(options_.order, given_, A.rows);
    const CholeskyEstimate size = estimate_in_order(A, order, options_.max_fill);
    if (!size.refusal.empty()) throw InputError("chol: " + size.refusal);
    left_.analyse(A, order);
    this->report_.set_fact("order", options_.order == CholOrder::natural
                                        ? "natural (A's own), left-looking factorisation"
                                        : "given by the caller, left-looking factorisation");
    this->report_.set_fact("factor", describe(size));
    elimination_.new_to_old.assign(order.begin(), order.end());
  }

  FactorColumns factorize_amd(const CsrMatrix<double>& A) {
    llt_->factorize(as_column_major(A));
    if (llt_->info() != Eigen::Success)
      throw InputError(
          "chol: A is not positive definite (a pivot of its Cholesky factor is not "
          "positive)");
    return columns_of(llt_->matrixL().nestedExpression());
  }

  // A pivot <= 0 in the given order: the smallest shift of kShifts that goes through (CG then
  // corrects M's difference from A; the report counts such factorisations).
  FactorColumns factorize_in_order(const CsrMatrix<double>& A) {
    int failed_row = -1;
    if (left_.factorize(A, &failed_row)) return columns_of(left_);
    if (!options_.shift)
      throw NotPositiveDefinite("chol: A is not positive definite in this order (a pivot <= 0 at "
                                "row " + std::to_string(failed_row + 1) + ")",
                                failed_row);
    for (double shift : kShifts) {
      if (!left_.factorize(A, &failed_row, shift)) continue;
      ++shifted_;
      this->report_.set_fact("shifted", std::to_string(shifted_) +
                                            " factorisation(s) of A + s diag(A), the last s = " +
                                            shift_text(shift) + " (a pivot <= 0 at row " +
                                            std::to_string(failed_row + 1) + " unshifted)");
      return columns_of(left_);
    }
    throw InputError("chol: A is not positive definite (a pivot of its Cholesky factor at row " +
                     std::to_string(failed_row + 1) + " is not positive, shifted or not)");
  }

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
                           upper_values_, forward_rows, backward_rows, diagonal_},
                          n, sequential(), forward_, backward_, left_looking());
  }

  // A sweep in elimination order is a valid triangular solve only where one thread runs the
  // whole operation (ic0.cpp says why the GPU never is such a place).
  bool sequential() const {
    if (this->device() == Device::gpu) return false;
    return this->device() == Device::serial || this->threads() == 1;
  }

  CholOptions options_;
  ElimOrder given_;
  std::unique_ptr<CountedLlt> llt_;   // order=amd
  SparseCholesky left_;               // order=natural|given
  long shifted_ = 0;                  // factorisations that needed a shift
  RowPermutation elimination_;        // new_to_old
  LevelSchedule forward_, backward_;  // in elimination order
  int lower_values_ = kNoArray, upper_values_ = kNoArray, diagonal_ = kNoArray;
  std::vector<index_t> lower_source_, upper_source_, diagonal_source_;  // FactorInSolveOrder's
  std::vector<T> lower_, upper_, diagonal_host_;  // the host program's arrays (borrowed)
};

// "maxfill=N" (N >= 1): the factor may hold N times tril(A)'s entries; "order=amd|natural|given":
// Eigen's AMD order (the default), A's own, or the caller's; "pivot=shift|fail": a pivot <= 0 in
// a fixed order met with a diagonal shift (the default) or thrown as NotPositiveDefinite.
// Comma-separated.
CholOptions chol_options(const PrecondSpec& spec) {
  CholOptions options;
  const std::string& a = spec.argument;
  auto refuse = [&] {
    return InputError("the chol preconditioner's argument is maxfill=N (N >= 1), "
                      "order=amd|natural|given and pivot=shift|fail, comma-separated (got '" +
                      spec.text() + "')");
  };
  if (!a.empty() && a.back() == ',') throw refuse();
  std::size_t at = 0;
  while (at < a.size()) {
    const std::size_t comma = std::min(a.find(',', at), a.size());
    const std::string item = a.substr(at, comma - at);
    at = comma + 1;
    if (item.rfind("maxfill=", 0) == 0) {
      int value = 0;
      const char* first = item.data() + 8;
      const char* last = item.data() + item.size();
      const auto [ptr, ec] = std::from_chars(first, last, value);
      if (ec != std::errc() || ptr != last || value < 1) throw refuse();
      options.max_fill = value;
    } else if (item == "order=amd") {
      options.order = CholOrder::amd;
    } else if (item == "order=natural") {
      options.order = CholOrder::natural;
    } else if (item == "order=given") {
      options.order = CholOrder::given;
    } else if (item == "pivot=shift" || item == "pivot=fail") {
      options.shift = item == "pivot=shift";
    } else {
      throw refuse();
    }
  }
  return options;
}

}  // namespace

bool chol_fixed_order(const PrecondSpec& spec) {
  return chol_options(spec).order != CholOrder::amd;
}

bool chol_given_order(const PrecondSpec& spec) {
  return chol_options(spec).order == CholOrder::given;
}

CholeskyEstimate estimate_cholesky(const CsrMatrix<double>& A, double max_fill) {
  CountedLlt llt;
  return analyze(llt, A, max_fill);
}

template <typename T>
std::unique_ptr<Preconditioner<T>> make_cholesky(const PrecondSpec& spec, Device device,
                                                 int threads) {
  return std::make_unique<Cholesky<T>>(device, threads, chol_options(spec), spec.elimination_order);
}

template std::unique_ptr<Preconditioner<float>> make_cholesky(const PrecondSpec&, Device, int);
template std::unique_ptr<Preconditioner<double>> make_cholesky(const PrecondSpec&, Device, int);

}  // namespace cgs::precond
