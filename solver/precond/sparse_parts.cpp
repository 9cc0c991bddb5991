#include "solver/precond/sparse_parts.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdint>

#include "formats/types.hpp"

namespace cgs::precond {

namespace {

// The entries of A that keep(i, j) accepts, row by row, on every host core: the rows' counts,
// their offsets, then each row copied (a serial pass with push_back was a large part of ic0's
// set-up on a 9M-row grid, issue 21). Calls visit(i, k) for each entry k it drops.
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

SplitTriangle split_diagonal(const CsrMatrix<double>& L) {
  SplitTriangle s;
  s.diagonal.assign(std::size_t(L.rows), 0.0);
  s.off = filter_rows(
      L, [](index_t i, index_t j) { return i != j; },
      [&](index_t i, index_t k) { s.diagonal[std::size_t(i)] = L.values[k]; });
  return s;
}

std::vector<std::vector<index_t>> level_sets(const CsrMatrix<double>& S, bool lower) {
  const index_t n = S.rows;
  std::vector<index_t> level(std::size_t(n), 0);
  index_t levels = 0;
  for (index_t step = 0; step < n; ++step) {
    const index_t i = lower ? step : n - 1 - step;
    index_t l = 0;
    for (index_t k = S.row_ptr[i]; k < S.row_ptr[i + 1]; ++k)
      l = std::max(l, level[S.col_idx[k]] + 1);
    level[i] = l;
    levels = std::max(levels, l + 1);
  }
  std::vector<index_t> sizes(static_cast<std::size_t>(levels), 0);
  for (index_t l : level) ++sizes[std::size_t(l)];
  std::vector<std::vector<index_t>> sets(static_cast<std::size_t>(levels));
  for (index_t l = 0; l < levels; ++l) sets[std::size_t(l)].reserve(sizes[std::size_t(l)]);
  for (index_t step = 0; step < n; ++step) {
    const index_t i = lower ? step : n - 1 - step;
    sets[level[i]].push_back(i);
  }
  return sets;
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
