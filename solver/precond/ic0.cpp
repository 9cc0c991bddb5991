// IC(0): A ~ L L^T with L on the pattern of A's lower triangle in an elimination order (no
// fill), M^-1 r by two triangular solves run level by level (the rows of one level depend only
// on rows of earlier levels, so each level is one parallel operation). Three elimination orders:
//   levels  the matrix's own row order (the planner renumbers rows by reverse Cuthill-McKee
//           first, PrecondEntry::wants_rcm: on EPANET's systems that cut the iterations 2-4x
//           against the file's order). Exact sequential IC(0), but a long chain of levels: 122
//           on Exnet, 234 on BWSN_Network_2, one barrier or grid sync each.
//   colour  rows grouped by a greedy colouring of A's graph, colour by colour: no two rows of a
//           colour are neighbours, so each colour is one level of both solves (a handful on a
//           water network, 2 on a 5-point grid). More iterations than `levels` (1.5-40x on
//           EPANET's systems), far fewer syncs.
//   parts   rows cut into parts of N consecutive rows, each part's interior first, the rows
//           joined to a later part (separators) last: the levels of one part, not of the whole
//           band. Iterations very sensitive to N on EPANET's systems.
// The program is written in the solve's own row numbering whatever the elimination order (a
// triangular_level operation names its rows), so the system is not permuted again.
//
// When a pivot is not positive (IC(0) can break down on an SPD matrix that is not an
// M-matrix), the factorisation restarts on A + alpha diag(A), alpha = 1e-3, 1e-2, ..., and the
// report says which alpha it took.
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <sstream>

#include "formats/row_order.hpp"
#include "formats/types.hpp"
#include "solver/precond/builtin.hpp"
#include "solver/precond/sparse_parts.hpp"
#include "solver/precond/spectrum.hpp"  // worth_threads

namespace cgs::precond {
namespace {

// Row i of L (the pattern of the lower triangle, values tril(A) on entry) from the rows before
// it: L(i,j) = (A(i,j) - sum_{m<j} L(i,m) L(j,m)) / L(j,j) over the common columns m, then the
// pivot from the diagonal shifted by alpha diag(A). False when the pivot is not positive and
// finite.
bool factorize_row(CsrMatrix<double>& L, std::vector<double>& diag, index_t i, double alpha) {
  const index_t first = L.row_ptr[i], last = L.row_ptr[i + 1] - 1;  // last: the diagonal
  for (index_t k = first; k < last; ++k) {
    const index_t j = L.col_idx[k];
    double sum = L.values[k];
    index_t a = first, b = L.row_ptr[j];
    const index_t b_end = L.row_ptr[j + 1] - 1;
    while (a < k && b < b_end) {
      if (L.col_idx[a] < L.col_idx[b]) {
        ++a;
      } else if (L.col_idx[a] > L.col_idx[b]) {
        ++b;
      } else {
        sum -= L.values[a++] * L.values[b++];
      }
    }
    L.values[k] = sum / diag[j];
  }
  double pivot = L.values[last] * (1.0 + alpha);
  for (index_t k = first; k < last; ++k) pivot -= L.values[k] * L.values[k];
  if (!(pivot > 0) || !std::isfinite(pivot)) return false;
  diag[i] = std::sqrt(pivot);
  L.values[last] = diag[i];
  return true;
}

// L factorised in place with the diagonal shifted by alpha diag(A). The rows of one level of the
// forward solve (`levels`, in L's numbering) read only rows of earlier levels, so on a large
// matrix each level's rows run on every host core, level after level: the same arithmetic per
// row as the sweep in row order, so the same bits (serial, this took seconds of ic0's set-up on
// a 9M-row grid, issue 21). False when a pivot is not positive and finite.
bool factorize(CsrMatrix<double>& L, double alpha,
               const std::vector<std::vector<index_t>>& levels) {
  const index_t n = L.rows;
  std::vector<double> diag(std::size_t(n), 0.0);
  // Threads pay only where levels are wide and the team is large: a level's barrier costs more
  // than a few hundred rows' work, and on a loaded machine far more (2-core shared VM,
  // poisson2d:1000, 2,000 levels of 500 rows on 2 threads: 0.7 s serial, 1.8-16 s on the team).
  const bool wide = !levels.empty() && n / index_t(levels.size()) >= 1024;
  if (!worth_threads(n) || !wide || omp_get_max_threads() < 4) {
    for (index_t i = 0; i < n; ++i)
      if (!factorize_row(L, diag, i, alpha)) return false;
    return true;
  }
  // After a failure the levels still go round (empty): a thread that left the loop early would
  // leave the others waiting at the next level's barrier.
  std::atomic<bool> failed{false};
#pragma omp parallel
  for (const std::vector<index_t>& rows : levels) {
    const std::int64_t count = std::int64_t(rows.size());
#pragma omp for schedule(static)
    for (std::int64_t r = 0; r < count; ++r)
      if (!failed.load(std::memory_order_relaxed) &&
          !factorize_row(L, diag, rows[std::size_t(r)], alpha))
        failed.store(true, std::memory_order_relaxed);
  }
  return !failed.load();
}

enum class Ic0Order { levels, colour, parts };

// Rows cut into parts of `part_rows` consecutive rows (the planner's RCM order makes each a
// connected piece of the band); a row joined to a later part is a separator. Interior rows
// first, part by part, then the separators: the interiors of different parts share no entry, so
// their triangular solves run side by side (levels: the deepest part's, not the whole band's),
// and only the separators' couplings are eliminated out of RCM order. Returns the order and
// counts the separators.
RowPermutation part_order(const CsrMatrix<double>& A, index_t part_rows, index_t& separators) {
  const index_t n = A.rows;
  std::vector<char> separator(std::size_t(n), 0);
  for (index_t i = 0; i < n; ++i)
    for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
      if (A.col_idx[k] / part_rows > i / part_rows) separator[i] = 1;
  RowPermutation P;
  P.new_to_old.reserve(std::size_t(n));
  for (index_t i = 0; i < n; ++i)
    if (!separator[i]) P.new_to_old.push_back(i);
  separators = n - index_t(P.new_to_old.size());
  for (index_t i = 0; i < n; ++i)
    if (separator[i]) P.new_to_old.push_back(i);
  return P;
}

// Greedy colouring of A's graph in row order: each row takes the smallest colour none of its
// neighbours has taken. At most (largest row length) colours; 2 on a 5-point grid in natural
// or RCM order, 3-5 on EPANET's networks.
std::vector<index_t> greedy_colours(const CsrMatrix<double>& A, index_t& count) {
  const index_t n = A.rows;
  std::vector<index_t> colour(std::size_t(n), -1);
  std::vector<index_t> seen_by;  // seen_by[c] == i: a neighbour of row i has colour c
  count = 0;
  for (index_t i = 0; i < n; ++i) {
    for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
      const index_t c = colour[A.col_idx[k]];
      if (c >= 0) seen_by[c] = i;
    }
    index_t c = 0;
    while (c < count && seen_by[c] == i) ++c;
    if (c == count) {
      seen_by.push_back(-1);
      ++count;
    }
    colour[i] = c;
  }
  return colour;
}

// Rows colour by colour, each colour's rows in row order.
RowPermutation colour_order(const std::vector<index_t>& colour, index_t count) {
  std::vector<index_t> start(std::size_t(count) + 1, 0);
  for (index_t c : colour) ++start[c + 1];
  for (index_t c = 0; c < count; ++c) start[c + 1] += start[c];
  RowPermutation P;
  P.new_to_old.resize(colour.size());
  for (index_t i = 0; i < index_t(colour.size()); ++i) P.new_to_old[start[colour[i]]++] = i;
  return P;
}

// The permutation that undoes P: permute_symmetric(permute_symmetric(A, P), inverse(P)) == A.
RowPermutation inverse(const RowPermutation& P) {
  RowPermutation Q;
  Q.new_to_old.resize(P.new_to_old.size());
  for (index_t k = 0; k < index_t(P.new_to_old.size()); ++k) Q.new_to_old[P.new_to_old[k]] = k;
  return Q;
}

template <typename T>
class Ic0 final : public Preconditioner<T> {
 public:
  Ic0(Device device, int threads, Ic0Order order, index_t part_rows)
      : Preconditioner<T>(device, threads, false), order_(order), part_rows_(part_rows) {}
  std::string name() const override {
    switch (order_) {
      case Ic0Order::colour: return "ic0:colour";
      case Ic0Order::parts: return "ic0:parts:" + std::to_string(part_rows_);
      default: return "ic0:levels";
    }
  }

 protected:
  void analyze_pattern(const CsrMatrix<double>& A) override {
    index_t missing = A.rows;  // the first row without a diagonal entry
#pragma omp parallel for schedule(static) reduction(min : missing) if (worth_threads(A.rows))
    for (index_t i = 0; i < A.rows; ++i)
      if (!has_diagonal(A, i)) missing = std::min(missing, i);
    if (missing < A.rows)
      throw InputError("ic0: row " + std::to_string(missing + 1) + " has no diagonal entry");
    elimination_ = {};
    if (order_ == Ic0Order::colour) {
      index_t colours = 0;
      const std::vector<index_t> colour = greedy_colours(A, colours);
      elimination_ = colour_order(colour, colours);
      this->report_.set_fact("colours", std::to_string(colours));
    } else if (order_ == Ic0Order::parts) {
      index_t separators = 0;
      elimination_ = part_order(A, part_rows_, separators);
      this->report_.set_fact("parts", std::to_string((A.rows + part_rows_ - 1) / part_rows_) +
                                          " of " + std::to_string(part_rows_) + " rows, " +
                                          std::to_string(separators) + " separator rows last");
    }
    CsrMatrix<double> permuted;
    const SplitTriangle lower = split_diagonal(triangle(in_elimination_order(A, permuted), true));
    forward_levels_ = level_sets(lower.off, true);
    backward_levels_ = level_sets(transpose_with_map(lower.off).At, false);
    this->report_.set_fact("levels", std::to_string(forward_levels_.size()) + " + " +
                                         std::to_string(backward_levels_.size()));
  }

  void compute_values(const CsrMatrix<double>& A, ProgramSpec<T>& spec) override {
    CsrMatrix<double> permuted;
    CsrMatrix<double> L = triangle(in_elimination_order(A, permuted), true);
    const CsrMatrix<double> tril = L;
    double alpha = 0;
    while (!factorize(L, alpha, forward_levels_)) {
      alpha = alpha == 0 ? 1e-3 : alpha * 10;
      if (alpha > 1e3)
        throw InputError("ic0: no diagonal shift up to 1e3 diag(A) gives positive pivots");
      L = tril;
    }
    std::ostringstream shift;
    if (alpha == 0)
      shift << "none";
    else
      shift << "A + " << alpha << " diag(A) (a pivot was not positive without it)";
    this->report_.set_fact("diagonal shift", shift.str());
    SplitTriangle parts = split_diagonal(L);
    Transposed upper = transpose_with_map(parts.off);
    if (!elimination_.empty()) {  // back to the solve's numbering
      const RowPermutation back = inverse(elimination_);
      parts.off = permute_symmetric(parts.off, back);
      upper.At = permute_symmetric(upper.At, back);
      parts.diagonal = elimination_.to_original(parts.diagonal);
    }
    std::vector<T> inverse_diagonal(parts.diagonal.size());
    for (std::size_t i = 0; i < inverse_diagonal.size(); ++i)
      inverse_diagonal[i] = T(1.0 / parts.diagonal[i]);
    if (!spec.ops.empty()) {  // same pattern: new values at the same handles
      spec.value_arrays[lower_values_] = cast_to<T>(parts.off.values);
      spec.value_arrays[upper_values_] = cast_to<T>(upper.At.values);
      spec.value_arrays[inverse_diagonal_] = std::move(inverse_diagonal);
      return;
    }
    lower_values_ = spec.add_values(cast_to<T>(parts.off.values));
    upper_values_ = spec.add_values(cast_to<T>(upper.At.values));
    inverse_diagonal_ = spec.add_values(std::move(inverse_diagonal));
    const int lower_ptr = spec.add_indices(parts.off.row_ptr);
    const int lower_cols = spec.add_indices(parts.off.col_idx);
    const int upper_ptr = spec.add_indices(upper.At.row_ptr);
    const int upper_cols = spec.add_indices(upper.At.col_idx);
    const int between = spec.add_work(std::size_t(A.rows));  // L^-1 r
    auto level_op = [&](const std::vector<index_t>& rows, bool forward) {
      OpSpec op;
      op.kind = OpKind::triangular_level;
      op.items = index_t(rows.size());
      op.rows = spec.add_indices(in_solve_numbering(rows));
      op.row_ptr = forward ? lower_ptr : upper_ptr;
      op.col_idx = forward ? lower_cols : upper_cols;
      op.values = forward ? lower_values_ : upper_values_;
      op.d = inverse_diagonal_;
      op.u = forward ? kSlotR : between;
      op.y = forward ? between : kSlotZ;
      op.dot = forward ? 0 : 1;
      spec.ops.push_back(op);
    };
    if (sequential()) {  // one thread: each solve in one sweep, rows in order (no levels)
      std::vector<index_t> ascending(std::size_t(A.rows)), descending;
      for (index_t i = 0; i < A.rows; ++i) ascending[i] = i;
      descending.assign(ascending.rbegin(), ascending.rend());
      level_op(ascending, true);
      level_op(descending, false);
      return;
    }
    for (const auto& rows : forward_levels_) level_op(rows, true);
    for (const auto& rows : backward_levels_) level_op(rows, false);
  }

 private:
  // A sweep in row order is a valid triangular solve only when nothing splits its rows among
  // threads: on the serial device, or an OpenMP team of one. (The operation contract, items
  // independent of each other, is then stronger than needed; the level sets cost a barrier
  // each and scattered rows.) The GPU always splits an operation's rows among its threads,
  // whatever the plan's thread count says (1 there): a sweep on the GPU was a race, and IC(0)
  // did not converge in any GPU loop (issue 21).
  // A in the elimination order: A itself for `levels` (no copy), else P A P^T kept in `storage`.
  const CsrMatrix<double>& in_elimination_order(const CsrMatrix<double>& A,
                                                CsrMatrix<double>& storage) const {
    if (elimination_.empty()) return A;
    storage = permute_symmetric(A, elimination_);
    return storage;
  }
  // Rows numbered in the elimination order, renumbered as the solve numbers them.
  std::vector<index_t> in_solve_numbering(std::vector<index_t> rows) const {
    if (!elimination_.empty())
      for (index_t& r : rows) r = elimination_.new_to_old[r];
    return rows;
  }

  bool sequential() const {
    if (this->device() == Device::gpu) return false;
    return this->device() == Device::serial || this->threads() == 1;
  }

  static bool has_diagonal(const CsrMatrix<double>& A, index_t i) {
    for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
      if (A.col_idx[k] == i) return true;
    return false;
  }

  Ic0Order order_;
  index_t part_rows_;
  RowPermutation elimination_;  // empty: the solve's own row order
  std::vector<std::vector<index_t>> forward_levels_, backward_levels_;
  int lower_values_ = kNoArray, upper_values_ = kNoArray, inverse_diagonal_ = kNoArray;
};

}  // namespace

template <typename T>
std::unique_ptr<Preconditioner<T>> make_ic0(const PrecondSpec& spec, Device device, int threads) {
  // The exact order everywhere: on EPANET's systems the colour and parts orders cut the levels
  // 10-100x but multiplied the iterations (BWSN_Network_2 step 10: 460 -> 18,444 coloured,
  // 3,548-42,135 in parts; BENCHMARKS section 10), so they are offered, not chosen.
  Ic0Order order = Ic0Order::levels;
  (void)device;
  index_t part_rows = 128;
  const std::string& a = spec.argument;
  if (a == "levels") {
    order = Ic0Order::levels;
  } else if (a == "colour" || a == "color") {
    order = Ic0Order::colour;
  } else if (a == "parts" || a.rfind("parts:", 0) == 0) {
    order = Ic0Order::parts;
    if (a.size() > 6) {
      PrecondSpec rows{spec.name, a.substr(6)};
      part_rows = integer_argument(rows, 128, 2, 1 << 30);
    }
  } else if (!a.empty()) {
    throw InputError("the ic0 preconditioner's argument is levels, colour or parts[:rows] (got '" +
                     spec.text() + "')");
  }
  return std::make_unique<Ic0<T>>(device, threads, order, part_rows);
}

template std::unique_ptr<Preconditioner<float>> make_ic0(const PrecondSpec&, Device, int);
template std::unique_ptr<Preconditioner<double>> make_ic0(const PrecondSpec&, Device, int);

}  // namespace cgs::precond
