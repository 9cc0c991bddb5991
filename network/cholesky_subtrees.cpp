#include "network/cholesky_subtrees.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <queue>
#include <utility>

namespace cgs::net {
namespace {

constexpr double kBalance = 1.05;     // the busiest thread's share against an even split
constexpr double kMaxTopShare = 0.5;  // beyond: the tree is too narrow to share out

// Column j of the factor, in place in f (the slots of SubtreeCholesky's layout): its values
// taken from A (0.0 + a, as the serial gather), its pivot and its entries, each sum in the
// schedule's order (the serial executor's, chol::factorize). False at a pivot <= 0 (or NaN).
bool factor_column(const CholeskyScheduleView& s, const SlotLayout& l, const double* a, double* f,
                   int j) {
  double diag_update = 0.0;
  for (int t = s.pivot_ptr[j]; t < s.pivot_ptr[j + 1]; ++t) {
    const double lj = f[l.pivot_terms[t]];
    diag_update = diag_update + lj * lj;
  }
  const double diag = s.diag_source[j] >= 0 ? 0.0 + a[s.diag_source[j]] : 0.0;
  double pivot = diag - diag_update;
  if (!(pivot > 0.0)) return false;
  pivot = std::sqrt(pivot);
  f[l.column[j]] = pivot;
  double* entries = f + l.column[j] + 1;
  const int first = s.col_ptr[j];
  for (int e = first; e < s.col_ptr[j + 1]; ++e) {
    const double value = s.value_source[e] >= 0 ? 0.0 + a[s.value_source[e]] : 0.0;
    double update = 0.0;
    for (int u = s.update_ptr[e]; u < s.update_ptr[e + 1]; ++u)
      update = update + f[l.update_source[u]] * f[l.update_multiplier[u]];
    entries[e - first] = (value - update) / pivot;
  }
  return true;
}

// Each column's operations (its pivot's terms, its entries and their updates), and the
// elimination tree's parent of each column (its first row below the diagonal; -1: a root).
void column_work(const CholeskySchedule& s, std::vector<double>& work, std::vector<int>& parent) {
  work.assign(s.n, 0.0);
  parent.assign(s.n, -1);
  for (int j = 0; j < s.n; ++j) {
    const int first = s.col_ptr[j], last = s.col_ptr[j + 1];
    work[j] = 1.0 + (s.pivot_ptr[j + 1] - s.pivot_ptr[j]) + (last - first) +
              (s.update_ptr[last] - s.update_ptr[first]);
    if (first < last) parent[j] = s.row[first];
  }
}

// Longest processing time first: the subtrees (by weight) into `threads` bins; each root's bin,
// and the heaviest bin's weight.
double share_out(const std::vector<std::pair<double, int>>& roots, int threads,
                 std::vector<int>& bin_of) {
  std::vector<std::pair<double, int>> sorted = roots;
  std::sort(sorted.begin(), sorted.end(), std::greater<>());
  std::vector<double> load(threads, 0.0);
  for (const auto& [weight, root] : sorted) {
    const int b = static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
    load[b] += weight;
    bin_of[root] = b;
  }
  return *std::max_element(load.begin(), load.end());
}

}  // namespace

SubtreePartition partition_subtrees(const CholeskySchedule& s, int threads, double min_work) {
  const int n = s.n;
  SubtreePartition p;
  std::vector<double> work, subtree;
  std::vector<int> parent;
  column_work(s, work, parent);
  subtree = work;
  std::vector<std::vector<int>> children(n);
  double total = 0;
  std::priority_queue<std::pair<double, int>> heap;  // the candidate subtrees, heaviest first
  for (int j = 0; j < n; ++j) {
    if (parent[j] >= 0) {
      subtree[parent[j]] += subtree[j];
      children[parent[j]].push_back(j);
    } else {
      total += subtree[j];
    }
  }
  for (int j = 0; j < n; ++j)
    if (parent[j] < 0) heap.emplace(subtree[j], j);
  // owner: -2 unassigned, -1 the top, else a thread
  std::vector<int> owner(n, -2), bin_of(n, -1);
  double candidates = total, top = 0;
  bool shared = false;
  if (total < min_work) threads = 1;
  while (threads > 1 && !heap.empty() && top <= kMaxTopShare * total) {
    const auto [weight, root] = heap.top();
    if (weight * threads <= candidates * kBalance) {
      std::vector<std::pair<double, int>> roots;
      for (auto copy = heap; !copy.empty(); copy.pop()) roots.push_back(copy.top());
      if (share_out(roots, threads, bin_of) * threads <= candidates * kBalance) {
        for (const auto& r : roots) owner[r.second] = bin_of[r.second];
        shared = true;
        break;
      }
    }
    heap.pop();  // split the heaviest: its root to the top, its children candidates
    owner[root] = -1;
    top += work[root];
    candidates -= work[root];
    for (int c : children[root]) heap.emplace(subtree[c], c);
  }
  if (!shared) {  // one thread: every column in the top, in order
    p.parts.assign(1, {});
    for (int j = 0; j < n; ++j) p.top.push_back(j);
    return p;
  }
  // Below a root, a column belongs to its parent's thread (parents come later: descending).
  for (int j = n - 1; j >= 0; --j)
    if (owner[j] == -2) owner[j] = owner[parent[j]];
  p.parts.assign(threads, {});
  for (int j = 0; j < n; ++j) (owner[j] < 0 ? p.top : p.parts[owner[j]]).push_back(j);
  return p;
}

SlotLayout lay_out(CholeskySchedule& s, const SubtreePartition& p) {
  const int n = s.n;
  SlotLayout l;
  l.column.assign(n, 0);
  int cursor = 0;
  auto place = [&](const std::vector<int>& columns) {
    for (int j : columns) {
      l.column[j] = cursor;
      cursor += 1 + s.col_ptr[j + 1] - s.col_ptr[j];
    }
  };
  for (const std::vector<int>& part : p.parts) place(part);
  place(p.top);
  // The schedule's slot (n + e for L's entry e) to this layout's.
  std::vector<int> slot(static_cast<std::size_t>(s.factor_slots()));
  for (int j = 0; j < n; ++j) {
    slot[j] = l.column[j];
    for (int e = s.col_ptr[j]; e < s.col_ptr[j + 1]; ++e)
      slot[n + e] = l.column[j] + 1 + e - s.col_ptr[j];
  }
  auto renumber = [&](std::vector<int>& from, std::vector<int>& to) {  // in place, then moved
    for (int& i : from) i = slot[i];
    to = std::move(from);
  };
  renumber(s.pivot_terms, l.pivot_terms);
  renumber(s.update_source, l.update_source);
  renumber(s.update_multiplier, l.update_multiplier);
  return l;
}

void SubtreeCholesky::analyse(const precond::SparseCholesky& analysed, long a_nnz, int threads,
                              double min_work) {
  schedule_ = compile_schedule(analysed, a_nnz);
  partition_ = partition_subtrees(schedule_, std::max(1, threads), min_work);
  layout_ = lay_out(schedule_, partition_);
  factor_.assign(static_cast<std::size_t>(schedule_.factor_slots()), 0.0);
  rhs_.assign(static_cast<std::size_t>(schedule_.n), 0.0);
  failed_.assign(partition_.parts.size(), schedule_.n);
  index_top_rows();
  analysed_ = true;
}

// The columns in order, up to (not including) column stop_at; the first whose pivot is <= 0, or
// n where none is.
int SubtreeCholesky::run_columns(const std::vector<int>& columns, const double* a, int stop_at) {
  const CholeskyScheduleView s = schedule_.view();
  double* f = factor_.data();
  for (int j : columns) {
    if (j >= stop_at) break;
    if (!factor_column(s, layout_, a, f, j)) return j;
  }
  return s.n;
}

bool SubtreeCholesky::factorize(const CsrMatrix<double>& A, int* failed_row) {
  const double* a = A.values.data();
  const int n = schedule_.n, parts = threads();
  if (parts > 1) {
    auto part = [&](int t) { failed_[t] = run_columns(partition_.parts[t], a, n); };
    team_.get(parts)->run(part);
  } else {
    failed_[0] = run_columns(partition_.parts[0], a, n);
  }
  // The serial run's first failure: the earliest of the subtrees', unless a column of the top
  // before it fails (every column below such a column was computed: it comes earlier).
  const int subtrees_failed = *std::min_element(failed_.begin(), failed_.end());
  int failed = run_columns(partition_.top, a, subtrees_failed);
  if (failed == n) failed = subtrees_failed;
  if (failed == n) return true;
  if (failed_row) *failed_row = schedule_.order[failed];
  return false;
}

// The top's rows of L, each row's entries by ascending column (the order the forward
// substitution subtracts them in): the columns and the entries' slots.
void SubtreeCholesky::index_top_rows() {
  const int n = schedule_.n;
  if (threads() == 1) return;  // one thread: the columns in order, no gather
  std::vector<int> index(n, -1);
  for (std::size_t t = 0; t < partition_.top.size(); ++t)
    index[partition_.top[t]] = static_cast<int>(t);
  top_ptr_.assign(partition_.top.size() + 1, 0);
  for (int e = 0; e < schedule_.col_ptr[n]; ++e)
    if (index[schedule_.row[e]] >= 0) ++top_ptr_[index[schedule_.row[e]] + 1];
  for (std::size_t t = 0; t < partition_.top.size(); ++t) top_ptr_[t + 1] += top_ptr_[t];
  top_column_.assign(top_ptr_.back(), 0);
  top_slot_.assign(top_ptr_.back(), 0);
  std::vector<int> next(top_ptr_.begin(), top_ptr_.end() - 1);
  for (int j = 0; j < n; ++j)  // ascending: each row's list in column order
    for (int e = schedule_.col_ptr[j]; e < schedule_.col_ptr[j + 1]; ++e) {
      const int t = index[schedule_.row[e]];
      if (t < 0) continue;
      top_column_[next[t]] = j;
      top_slot_[next[t]++] = layout_.column[j] + 1 + e - schedule_.col_ptr[j];
    }
  in_top_.assign(n, 0);
  for (int j : partition_.top) in_top_[j] = 1;
}

// Forward, the columns in order: y_j = rhs_j / L(j, j), then rhs_r -= L(r, j) y_j for the rows
// below it, but for the top's rows where `skip_top` (gathered later in the same order).
void SubtreeCholesky::forward(const std::vector<int>& columns, bool skip_top) {
  const std::vector<int>& col_ptr = schedule_.col_ptr;
  const std::vector<int>& row = schedule_.row;
  const double* f = factor_.data();
  for (int j : columns) {
    const double* l = f + layout_.column[j] + 1;
    const int first = col_ptr[j], last = col_ptr[j + 1];
    const double bj = rhs_[j] / f[layout_.column[j]];
    rhs_[j] = bj;
    for (int e = first; e < last; ++e)
      if (!skip_top || !in_top_[row[e]]) rhs_[row[e]] = rhs_[row[e]] - l[e - first] * bj;
  }
}

// Backward, the columns from the last: x_j = (y_j - sum of L(r, j) x_r) / L(j, j).
void SubtreeCholesky::backward(const std::vector<int>& columns) {
  const std::vector<int>& col_ptr = schedule_.col_ptr;
  const std::vector<int>& row = schedule_.row;
  const double* f = factor_.data();
  for (auto it = columns.rbegin(); it != columns.rend(); ++it) {
    const int j = *it;
    const double* l = f + layout_.column[j] + 1;
    const int first = col_ptr[j], last = col_ptr[j + 1];
    double bj = rhs_[j];
    for (int e = first; e < last; ++e) bj = bj - l[e - first] * rhs_[row[e]];
    rhs_[j] = bj / f[layout_.column[j]];
  }
}

// L y = b by columns, then L^T x = y by rows of L^T, as chol::substitute (and
// precond::SparseCholesky::solve) in the elimination order, every row's sums in its order. On
// several threads: forward, each part's columns (rows of its own part only: a column's rows
// below it are its ancestors), then the top's rows gathered, each from its entries in column
// order (the serial run's subtractions); backward, the top first (its rows are top rows), then
// each part (reading its own rows and the top's).
void SubtreeCholesky::solve(const std::vector<double>& b, std::vector<double>& x) {
  const int n = schedule_.n, parts = threads();
  for (int k = 0; k < n; ++k) rhs_[k] = b[schedule_.order[k]];
  if (parts == 1) {
    forward(partition_.top, false);  // the top holds every column
    backward(partition_.top);
  } else {
    HostTeam* team = team_.get(parts);
    auto down = [&](int t) { forward(partition_.parts[t], true); };
    team->run(down);
    const double* f = factor_.data();
    for (std::size_t t = 0; t < partition_.top.size(); ++t) {
      const int r = partition_.top[t];
      double v = rhs_[r];
      for (int u = top_ptr_[t]; u < top_ptr_[t + 1]; ++u)
        v = v - f[top_slot_[u]] * rhs_[top_column_[u]];
      rhs_[r] = v / f[layout_.column[r]];
    }
    backward(partition_.top);
    auto up = [&](int t) { backward(partition_.parts[t]); };
    team->run(up);
  }
  x.resize(n);
  for (int k = 0; k < n; ++k) x[schedule_.order[k]] = rhs_[k];
}

}  // namespace cgs::net
