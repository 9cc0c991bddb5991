#include "network/cholesky_schedule.hpp"

#include <stdexcept>

namespace cgs::net {

CholeskyScheduleView CholeskySchedule::view() const {
  CholeskyScheduleView v;
  v.n = n;
  v.entries = static_cast<int>(row.size());
  v.a_nnz = a_nnz;
  v.order = order.data();
  v.diag_source = diag_source.data();
  v.value_source = value_source.data();
  v.col_ptr = col_ptr.data();
  v.row = row.data();
  v.pivot_ptr = pivot_ptr.data();
  v.pivot_terms = pivot_terms.data();
  v.update_ptr = update_ptr.data();
  v.update_source = update_source.data();
  v.update_multiplier = update_multiplier.data();
  return v;
}

namespace {

// Per column j, the earlier columns k that update it, in the order linsolve visits them, and the
// entry L(j, k) of each: linsolve's linked lists (precond::SparseCholesky::factorize) walked on the
// pattern alone, which decides them. visit(j, k, first) is called for each, then done(j).
template <typename Visit, typename Done>
void walk_update_lists(const precond::SparseCholesky& c, Visit visit, Done done) {
  const int n = c.size();
  const std::vector<int>& col_ptr = c.column_pointers();
  const std::vector<int>& row = c.row_indices();
  std::vector<int> link(n, -1), first(n, 0);
  auto enlist = [&](int k, int start) {  // column k waits for its next row, row[start]
    first[k] = start;
    const int r = row[start];
    link[k] = link[r];
    link[r] = k;
  };
  for (int j = 0; j < n; ++j) {
    for (int k = link[j]; k >= 0;) {
      const int next = link[k];
      const int kfirst = first[k];
      visit(j, k, kfirst);
      if (kfirst + 1 < col_ptr[k + 1]) enlist(k, kfirst + 1);
      k = next;
    }
    done(j);
    if (col_ptr[j] < col_ptr[j + 1]) enlist(j, col_ptr[j]);
  }
}

}  // namespace

CholeskySchedule compile_schedule(const precond::SparseCholesky& cholesky, long a_nnz) {
  if (!cholesky.analysed())
    throw std::logic_error("compile_schedule: the factorisation is not analysed");
  CholeskySchedule s;
  s.n = cholesky.size();
  s.a_nnz = static_cast<int>(a_nnz);
  s.order = cholesky.order();
  s.diag_source = cholesky.diagonal_sources();
  s.value_source = cholesky.value_sources();
  s.col_ptr = cholesky.column_pointers();
  s.row = cholesky.row_indices();
  const int n = s.n;
  // Column j's entries by row (entry_of[r]: L(r, j)'s index), and each entry's updates collected
  // in visiting order before they are laid out flat. The lists are cleared, not freed, between
  // columns: one allocation per list for the whole factor, not one per column (a 25,000-junction
  // network made 190,000 before).
  std::vector<int> entry_of(n, -1);
  std::vector<std::vector<std::pair<int, int>>> updates_of_column;  // per entry of column j
  int open = 0;  // entries of the current column with lists in use (0: not visited yet)
  s.pivot_ptr.assign(1, 0);
  s.update_ptr.assign(1, 0);
  auto visit = [&](int j, int k, int kfirst) {
    if (open == 0) {  // first visit in column j: index its rows
      open = s.col_ptr[j + 1] - s.col_ptr[j];
      if (static_cast<int>(updates_of_column.size()) < open) updates_of_column.resize(open);
      for (int e = s.col_ptr[j]; e < s.col_ptr[j + 1]; ++e) entry_of[s.row[e]] = e;
    }
    const int multiplier = n + kfirst;
    s.pivot_terms.push_back(multiplier);
    for (int e = kfirst + 1; e < s.col_ptr[k + 1]; ++e)
      updates_of_column[entry_of[s.row[e]] - s.col_ptr[j]].emplace_back(n + e, multiplier);
  };
  auto done = [&](int j) {
    s.pivot_ptr.push_back(static_cast<int>(s.pivot_terms.size()));
    const int length = s.col_ptr[j + 1] - s.col_ptr[j];
    for (int i = 0; i < length; ++i) {
      if (i < open) {
        for (const auto& [source, multiplier] : updates_of_column[i]) {
          s.update_source.push_back(source);
          s.update_multiplier.push_back(multiplier);
        }
        updates_of_column[i].clear();
      }
      s.update_ptr.push_back(static_cast<int>(s.update_source.size()));
    }
    open = 0;
  };
  walk_update_lists(cholesky, visit, done);
  return s;
}

CholeskyScheduleExecutor::CholeskyScheduleExecutor(const CholeskySchedule& schedule)
    : schedule_(schedule),
      view_(schedule.view()),
      factor_(static_cast<std::size_t>(schedule.factor_slots())),
      rhs_(static_cast<std::size_t>(schedule.n)) {}

bool CholeskyScheduleExecutor::factorize(const CsrMatrix<double>& A, int* failed_row) {
  if (static_cast<long>(A.values.size()) != schedule_.a_nnz || A.rows != schedule_.n)
    throw std::invalid_argument("the schedule's executor: the matrix has another pattern");
  return factorize(A.values.data(), failed_row);
}

bool CholeskyScheduleExecutor::factorize(const double* values, int* failed_row) {
  chol::gather(view_, {values, 1}, {factor_.data(), 1});
  const int failed = chol::factorize(view_, {factor_.data(), 1});
  if (failed >= 0 && failed_row) *failed_row = schedule_.order[failed];
  return failed < 0;
}

void CholeskyScheduleExecutor::solve(const std::vector<double>& b, std::vector<double>& x) {
  x.resize(schedule_.n);
  solve(b.data(), x.data());
}

void CholeskyScheduleExecutor::solve(const double* b, double* x) {
  const int n = schedule_.n;
  for (int k = 0; k < n; ++k) rhs_[k] = b[schedule_.order[k]];
  chol::substitute(view_, {factor_.data(), 1}, {rhs_.data(), 1});
  for (int k = 0; k < n; ++k) x[schedule_.order[k]] = rhs_[k];
}

}  // namespace cgs::net
