// A GPU program's triangular solves as sweeps (run by solver/precond/triangular_sweep.cuh in the
// persistent, graph and generic loops): the levels of one solve -- consecutive triangular_level
// operations sharing S, d, u and y, ic0's L then its L^T -- as ONE operation, with no grid sync
// or kernel launch between levels (BWSN_Network_2: 301 levels a solve, 1,512 us an iteration
// level by level, a grid sync each).
//
// Each row, once computed, is also *posted*: its y in double in an array of the sweep's own,
// which holds a sentinel (a NaN no arithmetic makes) until then. A row reads the rows it needs
// (S's columns in its row) from there, waiting while one still holds the sentinel: the value is
// its own ready flag, so a level costs one trip of a value through L2 (no flag, fence and second
// load). Rows are taken in level order, so a wait is for rows a level or two back. Two posting
// arrays alternate by the parity of the sweep's epoch: while one is read, each row resets its
// entry of the other to the sentinel for the next apply, so nothing clears them in between.
// Each sweep advances the next one's epoch (cyclically: the last advances the first's for the
// next apply), so a sweep never changes the epoch it runs under; every loop runs a program's
// operations all or none. Each row is computed by triangular_row as level by level (the same y
// bit for bit); only r.z's partial sums fall to other threads (a fixed assignment of rows to
// threads: the same bits run after run).
//
// Threads: the sweep's rows go to `threads` of them by position (g, g + threads, ...), each
// thread in increasing position; threads = span x the widest level's rows (Tuning::
// gpu_sweep_span), so that a few levels are in flight and the rest of the grid is not polling
// L2 beside them. No deadlock: the least unfinished position's thread has finished its earlier
// positions, and the rows it reads lie at earlier positions, all finished. The persistent loop's
// grid is resident by its cooperative launch; the graph and generic loops' sweep kernels take no
// more blocks than one wave of resident blocks holds.
#pragma once

#include <vector>

#include "solver/precond/program.hpp"

namespace cgs::precond {

// A sweep where it runs: its operations, rows and state in device memory.
struct Sweep {
  int first_op = 0, end_op = 0;   // its levels: operations [first_op, end_op)
  const index_t* rows = nullptr;  // the solve's rows in level order, `items` of them
  index_t items = 0;
  long long threads = 0;  // the threads that take part (fewer where the grid has fewer)
  // Rows 0 .. items - 1 posted: two arrays of `items` entries one after the other, y in double
  // (its bits) or kSweepUnposted; the epoch's parity picks the one read.
  unsigned long long* posted = nullptr;
  int* epoch = nullptr;       // this sweep's epoch
  int* next_epoch = nullptr;  // the next sweep's, advanced by this one
};

// A row not posted yet: a NaN whose payload no operation makes (the device's arithmetic gives
// the canonical NaN; a posted NaN is written as that).
inline constexpr unsigned long long kSweepUnposted = 0x7ff4c65357454550ULL;

// A sweep as found among a program's operations (on the host).
struct SweepPlan {
  int first_op = 0, end_op = 0;
  index_t items = 0;   // rows of all its levels
  index_t widest = 0;  // rows of its widest level
  bool contiguous = false;  // each level's rows follow the previous level's in one array
};

// Whether b is a level of the same solve as a (their S, d, u, y and modes), a a level itself.
template <typename T>
CGS_HD bool same_solve(const Op<T>& a, const Op<T>& b) {
  return a.kind == OpKind::triangular_level && b.kind == OpKind::triangular_level &&
         a.row_ptr == b.row_ptr && a.col_idx == b.col_idx && a.values == b.values && a.d == b.d &&
         a.u == b.u && a.y == b.y && a.dot == b.dot && a.substitution == b.substitution;
}

// The sweeps of a program (operations with their arrays resolved): each maximal run of two or
// more levels of one solve whose rows are named (rows not null), where no operation outside the
// run is a level of that solve (so every row a level reads is written inside the run). None
// unless there are two or more (a sweep must not advance its own epoch).
template <typename T>
std::vector<SweepPlan> find_sweeps(const std::vector<Op<T>>& ops) {
  std::vector<SweepPlan> sweeps;
  const int count = int(ops.size());
  for (int k = 0; k < count;) {
    int end = k + 1;
    while (end < count && same_solve(ops[k], ops[end])) ++end;
    SweepPlan s{k, end, 0, 0, true};
    bool named = ops[k].kind == OpKind::triangular_level;
    for (int j = k; j < end && named; ++j) {
      named = ops[j].rows != nullptr;
      s.items += ops[j].items;
      s.widest = ops[j].items > s.widest ? ops[j].items : s.widest;
      if (j > k) s.contiguous = s.contiguous && ops[j].rows == ops[j - 1].rows + ops[j - 1].items;
    }
    bool whole = true;  // no level of this solve outside the run
    for (int j = 0; j < count && named; ++j)
      if ((j < k || j >= end) && ops[j].kind == OpKind::triangular_level &&
          ops[j].row_ptr == ops[k].row_ptr && ops[j].y == ops[k].y)
        whole = false;
    if (named && whole && end - k >= 2) sweeps.push_back(s);
    k = end;
  }
  if (sweeps.size() < 2) sweeps.clear();
  return sweeps;
}

// The threads that take part in a sweep: span x its widest level's rows, in whole warps.
inline long long sweep_threads(index_t widest, int span) {
  const long long threads = (long long)span * (long long)widest;
  return threads < 32 ? 32 : (threads + 31) / 32 * 32;
}

}  // namespace cgs::precond
