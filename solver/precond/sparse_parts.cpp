#include "solver/precond/sparse_parts.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdint>

#include "formats/types.hpp"

namespace cgs::precond {

namespace {

// The entries of A that keep(i, j) accepts, row by row, on every host core: the rows' counts,
// their offsets, then each row copied (a serial pass with push_back was a large part of ic0's
// set-up on a 9M-row grid). Calls visit(i, k) for each entry k it drops.
template <typename Keep, typename Visit>
CsrMatrix<double> filter_rows(const CsrMatrix<double>& A, Keep keep, Visit visit) {
  const std::int64_t n = A.rows;
  CsrMatrix<double> F;
  F.rows = A.rows;
  F.cols = A.cols;
  F.row_ptr.assign(std::size_t(n) + 1, 0);
#pragma omp parallel for schedule(static) if (n > 100000)
  for (std::int64_t i = 0; i < n; ++i) {
    index_t count = 0;
    for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
      count += keep(index_t(i), A.col_idx[k]);
    F.row_ptr[std::size_t(i) + 1] = count;
  }
  for (std::int64_t i = 0; i < n; ++i) F.row_ptr[std::size_t(i) + 1] += F.row_ptr[std::size_t(i)];
  F.col_idx.resize(std::size_t(F.row_ptr[std::size_t(n)]));
  F.values.resize(F.col_idx.size());
#pragma omp parallel for schedule(static) if (n > 100000)
  for (std::int64_t i = 0; i < n; ++i) {
    index_t at = F.row_ptr[std::size_t(i)];
    for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
      if (keep(index_t(i), A.col_idx[k])) {
        F.col_idx[std::size_t(at)] = A.col_idx[k];
        F.values[std::size_t(at++)] = A.values[k];
      } else {
        visit(index_t(i), k);
      }
    }
  }
  return F;
}

}  // namespace

CsrMatrix<double> triangle(const CsrMatrix<double>& A, bool lower) {
  return filter_rows(
      A, [lower](index_t i, index_t j) { return lower ? j <= i : j >= i; },
      [](index_t, index_t) {});
}

CsrMatrix<double> strictly_triangle(const CsrMatrix<double>& A, bool lower) {
  return filter_rows(
      A, [lower](index_t i, index_t j) { return lower ? j < i : j > i; }, [](index_t, index_t) {});
}

namespace {

// Where L(i, j) sits in L's arrays, or -1 when row i has no column j (columns ascending).
index_t find_in_row(const CsrMatrix<double>& L, index_t i, index_t j) {
  const auto first = L.col_idx.begin() + L.row_ptr[std::size_t(i)];
  const auto last = L.col_idx.begin() + L.row_ptr[std::size_t(i) + 1];
  const auto at = std::lower_bound(first, last, j);
  return at != last && *at == j ? index_t(at - L.col_idx.begin()) : -1;
}

}  // namespace

std::optional<CsrMatrix<double>> mirrored_upper(const CsrMatrix<double>& A,
                                                const CsrMatrix<double>& L) {
  CsrMatrix<double> U = strictly_triangle(A, false);
  if (U.nnz() != L.nnz()) return std::nullopt;
  const std::int64_t n = U.rows;
  bool mirrored = true;
#pragma omp parallel for schedule(static) reduction(&& : mirrored) if (n > 100000)
  for (std::int64_t j = 0; j < n; ++j)
    for (index_t s = U.row_ptr[std::size_t(j)]; s < U.row_ptr[std::size_t(j) + 1]; ++s)
      mirrored = mirrored && find_in_row(L, U.col_idx[std::size_t(s)], index_t(j)) >= 0;
  if (!mirrored) return std::nullopt;
  return U;
}

void gather_mirrored_values(const CsrMatrix<double>& L, CsrMatrix<double>& U) {
  const std::int64_t n = U.rows;
#pragma omp parallel for schedule(static) if (n > 100000)
  for (std::int64_t j = 0; j < n; ++j)
    for (index_t s = U.row_ptr[std::size_t(j)]; s < U.row_ptr[std::size_t(j) + 1]; ++s)
      U.values[std::size_t(s)] =
          L.values[std::size_t(find_in_row(L, U.col_idx[std::size_t(s)], index_t(j)))];
}

SplitTriangle split_diagonal(const CsrMatrix<double>& L) {
  SplitTriangle s;
  s.diagonal.assign(std::size_t(L.rows), 0.0);
  s.off = filter_rows(
      L, [](index_t i, index_t j) { return i != j; },
      [&](index_t i, index_t k) { s.diagonal[std::size_t(i)] = L.values[k]; });
  return s;
}

namespace {

// Rows grouped by their level (a counting sort), each level's rows in the order `step` visits them
// (step 0, 1, ..., n - 1 gives row_at(step)). On every core when large: each thread counts its
// block of steps per level, the counts become each thread's first slot in every level (blocks in
// step order, so each level keeps the serial order), and each thread places its own rows. Serial
// where the per-thread counts (levels x threads) would outgrow the rows (a chain of one-row
// levels).
template <typename RowAt>
LevelSchedule group_by_level(const std::vector<index_t>& level, index_t levels, RowAt row_at) {
  const std::int64_t n = std::int64_t(level.size());
  LevelSchedule s;
  s.start.assign(std::size_t(levels) + 1, 0);
  s.rows.resize(level.size());
  const bool on_team = n > 100000 && std::int64_t(levels) * omp_get_max_threads() <= n;
  std::vector<index_t> next;  // [thread][level]: counts, then that thread's next slot in the level
#pragma omp parallel if (on_team)
  {
    const int team = omp_get_num_threads(), me = omp_get_thread_num();
#pragma omp single
    next.assign(std::size_t(levels) * std::size_t(team), 0);
    index_t* mine = next.data() + std::size_t(levels) * std::size_t(me);
    const std::int64_t begin = n * me / team, end = n * (me + 1) / team;
    for (std::int64_t step = begin; step < end; ++step)
      ++mine[level[std::size_t(row_at(index_t(step)))]];
#pragma omp barrier
#pragma omp for schedule(static)
    for (index_t l = 0; l < levels; ++l) {
      index_t total = 0;
      for (int u = 0; u < team; ++u) {
        index_t& slot = next[std::size_t(u) * std::size_t(levels) + std::size_t(l)];
        const index_t count = slot;
        slot = total;
        total += count;
      }
      s.start[std::size_t(l) + 1] = total;
    }
#pragma omp single
    for (index_t l = 0; l < levels; ++l) s.start[std::size_t(l) + 1] += s.start[std::size_t(l)];
    for (std::int64_t step = begin; step < end; ++step) {
      const index_t i = row_at(index_t(step));
      const index_t l = level[std::size_t(i)];
      s.rows[std::size_t(s.start[std::size_t(l)] + mine[l]++)] = i;
    }
  }
  return s;
}

// A row's level in the forward solve (it reads its columns j < i); the count of levels in `levels`.
std::vector<index_t> forward_level_numbers(const CsrMatrix<double>& A, index_t& levels) {
  const index_t n = A.rows;
  std::vector<index_t> level(std::size_t(n), 0);
  levels = n > 0 ? 1 : 0;
  for (index_t i = 0; i < n; ++i) {
    index_t l = 0;
    for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
      if (A.col_idx[k] < i) l = std::max(l, level[std::size_t(A.col_idx[k])] + 1);
    level[std::size_t(i)] = l;
    levels = std::max(levels, l + 1);
  }
  return level;
}

// A row's level in the backward solve. Row i's level is final once every row after it has been
// visited, so the rows are visited from the last, each raising the levels of the rows it reads
// (its columns below the diagonal): no transpose needed.
std::vector<index_t> backward_level_numbers(const CsrMatrix<double>& A, index_t& levels) {
  const index_t n = A.rows;
  std::vector<index_t> level(std::size_t(n), 0);
  levels = n > 0 ? 1 : 0;
  for (index_t i = n - 1; i >= 0; --i) {
    const index_t above = level[std::size_t(i)] + 1;
    levels = std::max(levels, above);
    for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
      if (A.col_idx[k] >= i) continue;
      index_t& l = level[std::size_t(A.col_idx[k])];
      l = std::max(l, above);
    }
  }
  return level;
}

}  // namespace

LevelSchedule forward_schedule(const std::vector<index_t>& level, index_t levels) {
  return group_by_level(level, levels, [](index_t step) { return step; });
}
LevelSchedule backward_schedule(const std::vector<index_t>& level, index_t levels) {
  const index_t n = index_t(level.size());
  return group_by_level(level, levels, [n](index_t step) { return n - 1 - step; });
}

LevelSchedule forward_levels(const CsrMatrix<double>& A) {
  index_t levels = 0;
  const std::vector<index_t> level = forward_level_numbers(A, levels);
  return forward_schedule(level, levels);
}

LevelSchedule backward_levels(const CsrMatrix<double>& A) {
  index_t levels = 0;
  const std::vector<index_t> level = backward_level_numbers(A, levels);
  return backward_schedule(level, levels);
}

// The two passes are serial each (a row's level needs its predecessors'), but independent of
// each other: side by side on two threads, then each grouped on the whole team.
std::pair<LevelSchedule, LevelSchedule> solve_levels(const CsrMatrix<double>& A) {
  std::vector<index_t> forward, backward;
  index_t forward_count = 0, backward_count = 0;
#pragma omp parallel sections num_threads(2) if (A.rows > 100000)
  {
#pragma omp section
    forward = forward_level_numbers(A, forward_count);
#pragma omp section
    backward = backward_level_numbers(A, backward_count);
  }
  return {forward_schedule(forward, forward_count), backward_schedule(backward, backward_count)};
}

// Parallel over blocks of A's rows, the same result as one pass in row order: each thread
// counts its block's entries per column, the counts become each thread's first slot in every
// row of At (blocks in row order, so At's columns still ascend), and each thread fills its own
// slots. (The serial pass was 0.2-0.3 s of AMG's 9M-row set-up, P having 27M entries.)
Transposed transpose_with_map(const CsrMatrix<double>& A) {
  Transposed t;
  CsrMatrix<double>& At = t.At;
  At.rows = A.cols;
  At.cols = A.rows;
  At.row_ptr.assign(std::size_t(A.cols) + 1, 0);
  At.col_idx.resize(A.col_idx.size());
  At.values.resize(A.values.size());
  t.position.resize(A.values.size());
  const std::size_t cols = std::size_t(A.cols);
  std::vector<std::vector<index_t>> next;  // per thread, per column of A: its next slot in At
#pragma omp parallel if (A.nnz() > 1000000)
  {
    const int team = omp_get_num_threads(), me = omp_get_thread_num();
#pragma omp single
    next.assign(std::size_t(team), std::vector<index_t>(cols, 0));
    const index_t begin = index_t(std::int64_t(A.rows) * me / team);
    const index_t end = index_t(std::int64_t(A.rows) * (me + 1) / team);
    std::vector<index_t>& mine = next[std::size_t(me)];
    for (index_t k = A.row_ptr[begin]; k < A.row_ptr[end]; ++k) ++mine[std::size_t(A.col_idx[k])];
#pragma omp barrier
#pragma omp for schedule(static)
    for (std::int64_t j = 0; j < std::int64_t(cols); ++j) {
      index_t total = 0;
      for (int u = 0; u < team; ++u) total += next[std::size_t(u)][std::size_t(j)];
      At.row_ptr[std::size_t(j) + 1] = total;
    }
#pragma omp single
    for (std::size_t j = 0; j < cols; ++j) At.row_ptr[j + 1] += At.row_ptr[j];
#pragma omp for schedule(static)
    for (std::int64_t j = 0; j < std::int64_t(cols); ++j) {
      index_t at = At.row_ptr[std::size_t(j)];
      for (int u = 0; u < team; ++u) {
        const index_t count = next[std::size_t(u)][std::size_t(j)];
        next[std::size_t(u)][std::size_t(j)] = at;
        at += count;
      }
    }
    for (index_t i = begin; i < end; ++i) {  // this block's rows in order
      for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
        const index_t at = mine[std::size_t(A.col_idx[k])]++;
        At.col_idx[std::size_t(at)] = i;
        At.values[std::size_t(at)] = A.values[k];
        t.position[std::size_t(k)] = at;
      }
    }
  }
  return t;
}

}  // namespace cgs::precond
