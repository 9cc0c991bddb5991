// IC(0): A ~ L L^T with L on the pattern of tril(A) (no fill), M^-1 r by two triangular solves
// run level by level (the rows of one level depend only on rows of earlier levels, so each
// level is one parallel operation). The planner renumbers rows by reverse Cuthill-McKee first
// (PrecondEntry::wants_rcm): on EPANET's systems that cut the iterations 2-4x against the
// file's order and kept the level count low (issue 13's table).
//
// When a pivot is not positive (IC(0) can break down on an SPD matrix that is not an
// M-matrix), the factorisation restarts on A + alpha diag(A), alpha = 1e-3, 1e-2, ..., and the
// report says which alpha it took.
#include <cmath>
#include <sstream>

#include "formats/types.hpp"
#include "solver/precond/builtin.hpp"
#include "solver/precond/sparse_parts.hpp"

namespace cgs::precond {
namespace {

// L on the pattern of the lower triangle `L` (values: tril(A)), factorised in place with the
// diagonal shifted by alpha diag(A). False when a pivot is not positive and finite.
bool factorize(CsrMatrix<double>& L, double alpha) {
  const index_t n = L.rows;
  std::vector<double> diag(std::size_t(n), 0.0);
  for (index_t i = 0; i < n; ++i) {
    const index_t first = L.row_ptr[i], last = L.row_ptr[i + 1] - 1;  // last: the diagonal
    for (index_t k = first; k < last; ++k) {
      // L(i,j) = (A(i,j) - sum_{m<j} L(i,m) L(j,m)) / L(j,j), over the common columns m.
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
  }
  return true;
}

template <typename T>
class Ic0 final : public Preconditioner<T> {
 public:
  Ic0(Device device, int threads) : Preconditioner<T>(device, threads, false) {}
  std::string name() const override { return "ic0"; }

 protected:
  void analyze_pattern(const CsrMatrix<double>& A) override {
    const SplitTriangle lower = split_diagonal(triangle(A, true));
    for (index_t i = 0; i < A.rows; ++i)
      if (lower.diagonal[i] == 0 && !has_diagonal(A, i))
        throw InputError("ic0: row " + std::to_string(i + 1) + " has no diagonal entry");
    forward_levels_ = level_sets(lower.off, true);
    backward_levels_ = level_sets(transpose_with_map(lower.off).At, false);
    this->report_.set_fact("levels", std::to_string(forward_levels_.size()) + " + " +
                                         std::to_string(backward_levels_.size()));
  }

  void compute_values(const CsrMatrix<double>& A, ProgramSpec<T>& spec) override {
    CsrMatrix<double> L = triangle(A, true);
    const CsrMatrix<double> tril = L;
    double alpha = 0;
    while (!factorize(L, alpha)) {
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
    const SplitTriangle parts = split_diagonal(L);
    const Transposed upper = transpose_with_map(parts.off);
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
      op.rows = spec.add_indices(rows);
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
  // each and scattered rows.)
  bool sequential() const { return this->device() == Device::serial || this->threads() == 1; }

  static bool has_diagonal(const CsrMatrix<double>& A, index_t i) {
    for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
      if (A.col_idx[k] == i) return true;
    return false;
  }

  std::vector<std::vector<index_t>> forward_levels_, backward_levels_;
  int lower_values_ = kNoArray, upper_values_ = kNoArray, inverse_diagonal_ = kNoArray;
};

}  // namespace

template <typename T>
std::unique_ptr<Preconditioner<T>> make_ic0(const PrecondSpec& spec, Device device, int threads) {
  if (!spec.argument.empty())
    throw InputError("the ic0 preconditioner takes no argument (got '" + spec.text() + "')");
  return std::make_unique<Ic0<T>>(device, threads);
}

template std::unique_ptr<Preconditioner<float>> make_ic0(const PrecondSpec&, Device, int);
template std::unique_ptr<Preconditioner<double>> make_ic0(const PrecondSpec&, Device, int);

}  // namespace cgs::precond
