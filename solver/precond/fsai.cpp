// FSAI: M^-1 = G^T G with G lower triangular on the pattern of tril(A^k), each row of G the
// solution of a small dense SPD system (Kolotilina and Yeremin): for row i with pattern P
// (its last column i), A[P,P] y = e_i and g = y / sqrt(y_i), so that (G A G^T)_ii = 1 and
// (G A)_ij = 0 for j in P, j < i. The apply is two sparse products (G, then G^T), each one
// parallel operation: the preconditioner for the GPU loops, where triangular solves serialise.
#include <Eigen/Dense>
#include <algorithm>

#include "formats/types.hpp"
#include "solver/precond/builtin.hpp"
#include "solver/precond/sparse_parts.hpp"

namespace cgs::precond {
namespace {

// The pattern of tril(A^k): for each row, the columns <= row reached in at most k steps.
CsrMatrix<double> power_pattern(const CsrMatrix<double>& A, int k) {
  const index_t n = A.rows;
  CsrMatrix<double> P;
  P.rows = P.cols = n;
  P.row_ptr.assign(std::size_t(n) + 1, 0);
  std::vector<index_t> mark(std::size_t(n), -1), frontier, next, reached;
  for (index_t i = 0; i < n; ++i) {
    reached.assign(1, i);
    frontier.assign(1, i);
    mark[i] = i;
    for (int step = 0; step < k; ++step) {
      next.clear();
      for (index_t r : frontier)
        for (index_t e = A.row_ptr[r]; e < A.row_ptr[r + 1]; ++e) {
          const index_t j = A.col_idx[e];
          if (mark[j] != i) {
            mark[j] = i;
            next.push_back(j);
            reached.push_back(j);
          }
        }
      frontier.swap(next);
    }
    std::sort(reached.begin(), reached.end());
    for (index_t j : reached)
      if (j <= i) P.col_idx.push_back(j);
    P.row_ptr[i + 1] = index_t(P.col_idx.size());
  }
  P.values.assign(P.col_idx.size(), 0.0);
  return P;
}

// Row i of G on its pattern (sorted, ending with the diagonal): A on the pattern gathered by
// merging each pattern row of A with the pattern (both sorted), so that rows need no shared
// scratch and run in parallel. False when that block is not positive definite.
bool compute_row(const CsrMatrix<double>& A, CsrMatrix<double>& G, index_t i,
                 Eigen::MatrixXd& local, Eigen::VectorXd& unit) {
  const index_t first = G.row_ptr[i], m = G.row_ptr[i + 1] - first;
  const index_t* pattern = G.col_idx.data() + first;
  local.setZero(m, m);
  for (index_t a = 0; a < m; ++a) {
    const index_t row = pattern[a];
    index_t b = 0;
    for (index_t e = A.row_ptr[row]; e < A.row_ptr[row + 1] && b < m; ++e) {
      while (b < m && pattern[b] < A.col_idx[e]) ++b;
      if (b < m && pattern[b] == A.col_idx[e]) local(a, b) = A.values[e];
    }
  }
  unit.setZero(m);
  unit(m - 1) = 1;
  const Eigen::LLT<Eigen::MatrixXd> llt(local);
  if (llt.info() != Eigen::Success) return false;
  const Eigen::VectorXd y = llt.solve(unit);
  const double scale = 1.0 / std::sqrt(y(m - 1));
  for (index_t a = 0; a < m; ++a) G.values[first + a] = y(a) * scale;
  return true;
}

// The values of G on pattern P, rows on every host core (the set-up runs on the host whatever
// device solves: one core took 7-10 s on a 9M-row grid, issue 21).
void compute_rows(const CsrMatrix<double>& A, CsrMatrix<double>& G) {
  index_t failed = G.rows;  // the first row whose block is not SPD
#pragma omp parallel
  {
    Eigen::MatrixXd local;
    Eigen::VectorXd unit;
#pragma omp for schedule(dynamic, 1024) reduction(min : failed)
    for (index_t i = 0; i < G.rows; ++i)
      if (!compute_row(A, G, i, local, unit)) failed = std::min(failed, i);
  }
  if (failed < G.rows)
    throw InputError("fsai: the block of A on row " + std::to_string(failed + 1) +
                     "'s pattern is not positive definite (A is not SPD)");
}

template <typename T>
class Fsai final : public Preconditioner<T> {
 public:
  Fsai(Device device, int threads, int power)
      : Preconditioner<T>(device, threads, false), power_(power) {}
  std::string name() const override { return "fsai:" + std::to_string(power_); }

 protected:
  void analyze_pattern(const CsrMatrix<double>& A) override {
    G_ = power_pattern(A, power_);
    this->report_.set_fact("pattern", "tril(A^" + std::to_string(power_) + "), " +
                                          std::to_string(G_.values.size()) + " entries");
  }

  void compute_values(const CsrMatrix<double>& A, ProgramSpec<T>& spec) override {
    compute_rows(A, G_);
    const Transposed Gt = transpose_with_map(G_);
    if (!spec.ops.empty()) {
      spec.value_arrays[g_values_] = cast_to<T>(G_.values);
      spec.value_arrays[gt_values_] = cast_to<T>(Gt.At.values);
      return;
    }
    g_values_ = spec.add_values(cast_to<T>(G_.values));
    gt_values_ = spec.add_values(cast_to<T>(Gt.At.values));
    const int between = spec.add_work(std::size_t(A.rows));  // G r
    auto product = [&](const CsrMatrix<double>& S, int values, int x, int y, int dot) {
      OpSpec op;
      op.kind = OpKind::product;
      op.items = S.rows;
      op.row_ptr = spec.add_indices(S.row_ptr);
      op.col_idx = spec.add_indices(S.col_idx);
      op.values = values;
      op.x = x;
      op.y = y;
      op.alpha = 1;
      op.dot = dot;
      spec.ops.push_back(op);
    };
    product(G_, g_values_, kSlotR, between, 0);
    product(Gt.At, gt_values_, between, kSlotZ, 1);
  }

 private:
  int power_;
  CsrMatrix<double> G_;
  int g_values_ = kNoArray, gt_values_ = kNoArray;
};

}  // namespace

template <typename T>
std::unique_ptr<Preconditioner<T>> make_fsai(const PrecondSpec& spec, Device device, int threads) {
  return std::make_unique<Fsai<T>>(device, threads, integer_argument(spec, 1, 1, 4));
}

template std::unique_ptr<Preconditioner<float>> make_fsai(const PrecondSpec&, Device, int);
template std::unique_ptr<Preconditioner<double>> make_fsai(const PrecondSpec&, Device, int);

}  // namespace cgs::precond
