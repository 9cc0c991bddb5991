// EPANET's factorisation (precond::SparseCholesky's, compiled into cholesky_schedule.hpp's flat
// schedule) on several host threads, every column computed as the serial one computes it.
//
// Column j of L reads only the columns below it in the elimination tree (its descendants), and
// the schedule fixes the order of every sum of the column from the pattern alone (linsolve's
// lists). So disjoint subtrees can be factorised at the same time, one thread each, and the
// columns above them (the top of the tree) after them on one: each column's operations are the
// serial run's, in its order, and the factor is the same bit for bit whatever the thread count.
// The subtrees are cut from the top down (the heaviest subtree split first) until they share out
// among the threads within 5% of an even split, or the top holds half of the work (networks
// whose tree is a chain: one thread); a factorisation of fewer than min_work operations runs on
// one (kMinSubtreeWork by default: waking a thread costs more, and on a loaded 2-core machine far
// more: BWSN_Network_2's 82,000 a factorisation lost there). Each thread's columns are stored
// together (SlotLayout). The substitutions run on the same parts (forward: the parts, then the
// top's rows gathered in column order; backward: the top, then the parts). Nothing is allocated per
// factorisation.
#pragma once

#include <vector>

#include "formats/csr.hpp"
#include "network/cholesky_schedule.hpp"
#include "network/host_team.hpp"
#include "solver/precond/sparse_cholesky.hpp"

namespace cgs::net {

inline constexpr double kMinSubtreeWork = 200000;

// The columns each thread factorises (ascending), and the top's, run after them.
struct SubtreePartition {
  std::vector<std::vector<int>> parts;
  std::vector<int> top;
};
// The partition of an analysed factorisation's elimination tree for `threads` threads (1: every
// column in the top). Each column weighed by its operations.
SubtreePartition partition_subtrees(const CholeskySchedule& s, int threads,
                                    double min_work = kMinSubtreeWork);

// Where a factorisation keeps each column: its diagonal at column[j], its entries right after it,
// the threads' columns each in one stretch (no cache line written by two threads but at the
// stretches' ends); the schedule's slot lists renumbered to match, moved out of the schedule
// (which keeps the rest).
struct SlotLayout {
  std::vector<int> column;
  std::vector<int> pivot_terms, update_source, update_multiplier;
};
SlotLayout lay_out(CholeskySchedule& s, const SubtreePartition& p);

class SubtreeCholesky {
 public:
  // The schedule of `analysed` and its partition for `threads` (>= 1) threads.
  void analyse(const precond::SparseCholesky& analysed, long a_nnz, int threads,
               double min_work = kMinSubtreeWork);
  bool analysed() const { return analysed_; }
  int threads() const { return static_cast<int>(partition_.parts.size()); }
  // As precond::SparseCholesky::factorize (no shift): false at the first pivot <= 0 in
  // elimination order, *failed_row naming its row of A.
  bool factorize(const CsrMatrix<double>& A, int* failed_row);
  // x = A^-1 b with the last factorisation, as precond::SparseCholesky::solve (the same bits), on
  // the partition's threads.
  void solve(const std::vector<double>& b, std::vector<double>& x);

 private:
  bool analysed_ = false;
  CholeskySchedule schedule_;
  SubtreePartition partition_;
  SlotLayout layout_;
  std::vector<double> factor_, rhs_;
  std::vector<int> failed_;  // per thread: its first failing column, or n
  TeamSlot team_;
  // The substitutions on several threads: which columns are the top's, and the top's rows of L
  // by ascending column (index_top_rows).
  std::vector<char> in_top_;
  std::vector<int> top_ptr_, top_column_, top_slot_;

  int run_columns(const std::vector<int>& columns, const double* a, int stop_at);
  void index_top_rows();
  void forward(const std::vector<int>& columns, bool skip_top);
  void backward(const std::vector<int>& columns);
};

}  // namespace cgs::net
