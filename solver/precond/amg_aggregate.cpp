#include "solver/precond/amg_aggregate.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "base/prefault.hpp"
#include "formats/convert.hpp"  // diagonal_entry
#include "solver/precond/spectrum.hpp"  // worth_threads

namespace cgs::precond::amg {

std::vector<double> diagonal_of(const CsrMatrix<double>& A) {
  std::vector<double> d(std::size_t(A.rows), 0.0);
#pragma omp parallel for schedule(static) if (worth_threads(A.rows))
  for (index_t i = 0; i < A.rows; ++i) d[i] = diagonal_entry(A, i);
  return d;
}

namespace {

// MIS(2) states, ordered so that a larger key wins: selected rows above undecided ones, and
// rows already out (or never candidates) below both.
enum : std::uint64_t { kOut = 0, kUndecided = 1, kIn = 2 };

// A fixed pseudo-random priority per row (splitmix64 of the index), 31 bits.
std::uint64_t priority(index_t i) {
  std::uint64_t z = std::uint64_t(i) + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return (z ^ (z >> 31)) & 0x7fffffffull;
}

// (state, priority, index) packed so that comparing keys compares the tuples; every key is
// distinct (the index is in it).
std::uint64_t key(std::uint64_t state, index_t i) {
  return (state << 62) | (priority(i) << 31) | std::uint64_t(i);
}

// The largest key over row i and its strong neighbours.
std::uint64_t neighbourhood_max(const CsrMatrix<double>& A, const std::vector<char>& strong,
                                const std::vector<std::uint64_t>& keys, index_t i) {
  std::uint64_t best = keys[i];
  for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
    if (strong[k]) best = std::max(best, keys[A.col_idx[k]]);
  return best;
}

bool has_strong_neighbour(const CsrMatrix<double>& A, const std::vector<char>& strong, index_t i) {
  for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
    if (strong[k]) return true;
  return false;
}

}  // namespace

// The near-ties of pass 2 make a GPU set-up coarsen as the host's does.
void join_strongest(const CsrMatrix<double>& A, const std::vector<char>& strong,
                    const std::vector<index_t>& first, std::vector<index_t>& of) {
#pragma omp parallel for schedule(static) if (worth_threads(A.rows))
  for (index_t i = 0; i < A.rows; ++i) {
    if (first[i] >= 0) continue;
    double best = -1;
    for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
      if (strong[k] && first[A.col_idx[k]] >= 0 &&
          std::abs(A.values[k]) > best * (1 + kGreedyTie)) {
        best = std::abs(A.values[k]);
        of[i] = first[A.col_idx[k]];
      }
  }
}

void start_leftover_aggregates(const CsrMatrix<double>& A, const std::vector<char>& strong,
                               Aggregates& g) {
  // The candidates (rows without an aggregate after pass 2, rare) found on every core, then
  // taken in row order: a candidate may be claimed by an earlier one's new aggregate.
  const int chunks = worth_threads(A.rows) ? omp_get_max_threads() : 1;
  std::vector<std::vector<index_t>> left(static_cast<std::size_t>(chunks));
#pragma omp parallel for schedule(static, 1) num_threads(chunks)
  for (int c = 0; c < chunks; ++c)
    for (index_t i = index_t(std::int64_t(A.rows) * c / chunks);
         i < index_t(std::int64_t(A.rows) * (c + 1) / chunks); ++i)
      if (g.of[i] < 0 && has_strong_neighbour(A, strong, i)) left[std::size_t(c)].push_back(i);
  for (const std::vector<index_t>& rows : left)
    for (index_t i : rows) {
      if (g.of[i] >= 0) continue;
      g.of[i] = g.count;
      for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
        if (strong[k] && g.of[A.col_idx[k]] < 0) g.of[A.col_idx[k]] = g.count;
      ++g.count;
    }
}

namespace {

// A maximal set of rows pairwise at least three strong steps apart (Bell, Dalton, Olson 2012,
// alg. 3): in each round a row whose key is the largest within two steps joins, and rows
// within two steps of a joined row drop out. Rows without strong neighbours never take part.
std::vector<std::uint64_t> distance2_independent_set(const CsrMatrix<double>& A,
                                                     const std::vector<char>& strong) {
  const index_t n = A.rows;
  const std::size_t size = static_cast<std::size_t>(n);
  std::vector<std::uint64_t> state(size), keys(size), near(size);
#pragma omp parallel for schedule(static) if (worth_threads(n))
  for (index_t i = 0; i < n; ++i) state[i] = has_strong_neighbour(A, strong, i) ? kUndecided : kOut;
  for (bool undecided = true; undecided;) {
#pragma omp parallel for schedule(static) if (worth_threads(n))
    for (index_t i = 0; i < n; ++i) keys[i] = key(state[i], i);
#pragma omp parallel for schedule(static) if (worth_threads(n))
    for (index_t i = 0; i < n; ++i) near[i] = neighbourhood_max(A, strong, keys, i);
    undecided = false;
#pragma omp parallel for schedule(static) reduction(|| : undecided) if (worth_threads(n))
    for (index_t i = 0; i < n; ++i) {
      if (state[i] != kUndecided) continue;
      const std::uint64_t best = neighbourhood_max(A, strong, near, i);
      if (best == keys[i])
        state[i] = kIn;
      else if ((best >> 62) == kIn)
        state[i] = kOut;
      else
        undecided = true;
    }
  }
  return state;
}

}  // namespace

std::vector<char> strong_connections(const CsrMatrix<double>& A, double theta) {
  const std::vector<double> d = diagonal_of(A);
  std::vector<char> strong(A.values.size(), 0);
#pragma omp parallel for schedule(static) if (worth_threads(A.rows))
  for (index_t i = 0; i < A.rows; ++i)
    for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
      const index_t j = A.col_idx[k];
      strong[k] = j != i && std::abs(A.values[k]) >= theta * std::sqrt(std::abs(d[i] * d[j]));
    }
  return strong;
}

Aggregates greedy_roots(const CsrMatrix<double>& A, const std::vector<char>& strong) {
  // Pass 1: a row whose strong neighbours are all free takes them as its aggregate.
  const index_t n = A.rows;
  Aggregates g;
  reserve_prefaulted(g.of, std::size_t(n));
  g.of.assign(std::size_t(n), -1);
  // The pass is serial (every parallel form measured keeps either its cost or its aggregates,
  // not both: BENCHMARKS 20m): a row's entries are fetched ahead, which saved 10-20%.
  constexpr index_t kAhead = 64;
  for (index_t i = 0; i < n; ++i) {
    if (i + kAhead < n) {
      __builtin_prefetch(A.col_idx.data() + A.row_ptr[i + kAhead]);
      __builtin_prefetch(strong.data() + A.row_ptr[i + kAhead]);
    }
    // One walk of the row, and none where the row is taken already (most rows, in a grid's
    // order): free where it and all its strong neighbours are; skipped without strong ones.
    if (g.of[i] >= 0) continue;
    bool coupled = false, free = true;
    for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1] && free; ++k)
      if (strong[k]) {
        coupled = true;
        free = g.of[A.col_idx[k]] < 0;
      }
    if (!coupled || !free) continue;
    g.of[i] = g.count;
    for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
      if (strong[k]) g.of[A.col_idx[k]] = g.count;
    ++g.count;
  }
  return g;
}

Aggregates greedy_aggregate(const CsrMatrix<double>& A, const std::vector<char>& strong) {
  Aggregates g = greedy_roots(A, strong);
  // Pass 2: the rows left join their strongest aggregated neighbour.
  std::vector<index_t> first;
  reserve_prefaulted(first, g.of.size());
  first = g.of;
  join_strongest(A, strong, first, g.of);
  // Pass 3: a row still left (its neighbours all joined in pass 2) starts an aggregate with
  // its free neighbours.
  start_leftover_aggregates(A, strong, g);
  return g;
}

index_t greedy_block_rows(index_t n) { return std::max<index_t>(index_t(1) << 20, (n + 31) / 32); }

namespace {

// Whether every strong neighbour of row j lies in block b or next to it.
bool next_to_block(const CsrMatrix<double>& A, const std::vector<char>& strong, index_t j,
                   index_t b, index_t block_rows) {
  for (index_t k = A.row_ptr[j]; k < A.row_ptr[j + 1]; ++k)
    if (strong[k] && std::abs(A.col_idx[k] / block_rows - b) > 1) return false;
  return true;
}

// The greedy's pass 1 over block b's rows in order: a free row whose strong neighbours are all
// free (and, outside the block, all claimable: next_to_block) becomes a root and claims them;
// root[i] is the root row that row i joined, -1 while free.
void block_roots(const CsrMatrix<double>& A, const std::vector<char>& strong, index_t b,
                 index_t block_rows, std::vector<index_t>& root) {
  const index_t begin = b * block_rows, end = std::min(A.rows, begin + block_rows);
  for (index_t i = begin; i < end; ++i) {
    if (root[i] >= 0 || !has_strong_neighbour(A, strong, i)) continue;
    bool free = true;
    for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1] && free; ++k) {
      if (!strong[k]) continue;
      const index_t j = A.col_idx[k];
      // Claimable first (a row two blocks away is another thread's: not even read), then free.
      const index_t at = j / block_rows;
      free = (at == b || (std::abs(at - b) == 1 && next_to_block(A, strong, j, b, block_rows))) &&
             root[j] < 0;
    }
    if (!free) continue;
    root[i] = i;
    for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
      if (strong[k]) root[A.col_idx[k]] = i;
  }
}

}  // namespace

Aggregates blocked_greedy_aggregate(const CsrMatrix<double>& A, const std::vector<char>& strong,
                                    index_t block_rows) {
  const index_t n = A.rows;
  block_rows = std::max<index_t>(block_rows, 1);
  const index_t blocks = (n + block_rows - 1) / block_rows;
  // Pass 1: the even blocks at once, then the odd ones (seeing the even blocks' claims). A row
  // outside a root's block is claimed only if all its strong neighbours are next to that block,
  // so two blocks of one parity never touch one row: each block's thread owns what it writes.
  std::vector<index_t> root(std::size_t(n), -1);
  for (index_t parity = 0; parity < 2; ++parity) {
#pragma omp parallel for schedule(dynamic, 1) if (blocks > 2)
    for (index_t b = parity; b < blocks; b += 2) block_roots(A, strong, b, block_rows, root);
  }
  // Aggregates numbered by their roots in row order, as the greedy numbers them.
  Aggregates g;
  std::vector<index_t> number(std::size_t(n), -1);
  for (index_t i = 0; i < n; ++i)
    if (root[i] == i) number[i] = g.count++;
  std::vector<index_t> first(std::size_t(n), -1);
#pragma omp parallel for schedule(static) if (worth_threads(n))
  for (index_t i = 0; i < n; ++i)
    if (root[i] >= 0) first[i] = number[root[i]];
  g.of = first;
  join_strongest(A, strong, first, g.of);   // pass 2, in parallel: each row reads `first` only
  start_leftover_aggregates(A, strong, g);  // pass 3, serial (rows left are rare)
  return g;
}

Aggregates mis2_aggregate(const CsrMatrix<double>& A, const std::vector<char>& strong) {
  const index_t n = A.rows;
  const std::vector<std::uint64_t> state = distance2_independent_set(A, strong);
  Aggregates g;
  std::vector<index_t> root(std::size_t(n), -1);  // a root's aggregate, numbered in row order
  for (index_t i = 0; i < n; ++i)
    if (state[i] == kIn) root[i] = g.count++;
  // Each root's strong neighbours join it (MIS(2): at most one root is a neighbour).
  std::vector<index_t> first(root);
#pragma omp parallel for schedule(static) if (worth_threads(n))
  for (index_t i = 0; i < n; ++i)
    for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1] && first[i] < 0; ++k)
      if (strong[k] && root[A.col_idx[k]] >= 0) first[i] = root[A.col_idx[k]];
  // Rows two steps from a root join their strongest aggregated neighbour (the first on ties).
  g.of = first;
#pragma omp parallel for schedule(static) if (worth_threads(n))
  for (index_t i = 0; i < n; ++i) {
    if (first[i] >= 0) continue;
    double best = -1;
    for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
      if (strong[k] && first[A.col_idx[k]] >= 0 && std::abs(A.values[k]) > best) {
        best = std::abs(A.values[k]);
        g.of[i] = first[A.col_idx[k]];
      }
  }
  // Left over only if the strong graph is not symmetric: an aggregate each.
  for (index_t i = 0; i < n; ++i)
    if (g.of[i] < 0 && has_strong_neighbour(A, strong, i)) g.of[i] = g.count++;
  return g;
}

}  // namespace cgs::precond::amg
