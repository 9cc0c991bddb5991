#include "formats/row_order.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <numeric>

#include "formats/convert.hpp"

namespace cgs {

template <typename T>
std::vector<T> RowPermutation::to_new(const std::vector<T>& original) const {
  std::vector<T> permuted(original.size());
  const std::int64_t n = std::int64_t(new_to_old.size());
#pragma omp parallel for schedule(static) if (n > 100000)
  for (std::int64_t k = 0; k < n; ++k) permuted[k] = original[new_to_old[k]];
  return permuted;
}

template <typename T>
std::vector<T> RowPermutation::to_original(const std::vector<T>& permuted) const {
  std::vector<T> original(permuted.size());
  const std::int64_t n = std::int64_t(new_to_old.size());
#pragma omp parallel for schedule(static) if (n > 100000)
  for (std::int64_t k = 0; k < n; ++k) original[new_to_old[k]] = permuted[k];
  return original;
}

template <typename T>
RowPermutation sort_rows_by_length(const CsrMatrix<T>& A) {
  RowPermutation P;
  P.new_to_old.resize(A.rows);
  std::iota(P.new_to_old.begin(), P.new_to_old.end(), 0);
  std::stable_sort(P.new_to_old.begin(), P.new_to_old.end(),
                   [&](index_t a, index_t b) { return A.row_length(a) > A.row_length(b); });
  return P;
}

namespace {

constexpr index_t kUnclaimed = std::numeric_limits<index_t>::max();

// Whether a level of this many rows is worth the thread team (three passes with a barrier each).
bool worth_team(std::size_t rows) { return rows >= 4096; }

// A breadth-first sweep one level at a time, each level in the order a serial sweep (a queue)
// gives it: a new row belongs to the first row of the previous level, in that level's order,
// that neighbours it (the one a queue would have popped first), and each parent lists its
// children in column order, or stably by degree (Cuthill-McKee). So the order is the serial
// one bit for bit, whatever the team; a wide level runs on every core (issue 21: RCM on a 9M-row
// grid was 3.7 s on one core). Rows [begin, order.size()) are the first level (already taken);
// taken(c) says a row is excluded or numbered, take(c) numbers it. claim is kUnclaimed
// on every row on entry and on return.
struct Sweep {
  index_t depth;              // the deepest level's number (the first level is 0)
  std::size_t deepest_begin;  // where the deepest level starts in `order`
};
template <typename T, typename Taken, typename Take>
Sweep level_sweep(const CsrMatrix<T>& A, std::vector<index_t>& order, std::size_t begin,
                  std::vector<index_t>& claim, bool by_degree, Taken taken, Take take) {
  std::vector<index_t> count;
  std::vector<std::size_t> offset;
  // Claims are read by every thread that neighbours a row and written by its parent's thread:
  // relaxed atomics (the passes are ordered by the team's barriers).
  auto slot = [&](index_t c) { return std::atomic_ref<index_t>(claim[std::size_t(c)]); };
  auto by_length = [&](index_t a, index_t b) { return A.row_length(a) < A.row_length(b); };
  std::size_t lo = begin;
  std::vector<index_t> children;
  for (index_t depth = 0;; ++depth) {
    const std::size_t hi = order.size();
    const std::int64_t width = std::int64_t(hi - lo);
    if (!worth_team(hi - lo)) {  // a narrow level: the serial queue's step, no claims
      for (std::size_t q = lo; q < hi; ++q) {
        const index_t row = order[q];
        children.clear();
        for (index_t e = A.row_ptr[row]; e < A.row_ptr[row + 1]; ++e) {
          const index_t c = A.col_idx[e];
          if (taken(c)) continue;
          take(c);
          children.push_back(c);
        }
        if (by_degree) std::stable_sort(children.begin(), children.end(), by_length);
        order.insert(order.end(), children.begin(), children.end());
      }
      if (order.size() == hi) return {depth, lo};
      lo = hi;
      continue;
    }
    const bool team = true;
    // 1. Each untaken neighbour is claimed by its first parent: the least position.
#pragma omp parallel for schedule(static) if (team)
    for (std::int64_t p = 0; p < width; ++p) {
      const index_t row = order[lo + std::size_t(p)];
      for (index_t e = A.row_ptr[row]; e < A.row_ptr[row + 1]; ++e) {
        const index_t c = A.col_idx[e];
        if (taken(c)) continue;
        auto claimed = slot(c);
        index_t now = claimed.load(std::memory_order_relaxed);
        while (index_t(p) < now &&
               !claimed.compare_exchange_weak(now, index_t(p), std::memory_order_relaxed)) {
        }
      }
    }
    // 2. Each parent counts its children (a repeated column counts once: the claim is moved to
    //    -2 - p by its first occurrence).
    count.assign(std::size_t(width), 0);
#pragma omp parallel for schedule(static) if (team)
    for (std::int64_t p = 0; p < width; ++p) {
      const index_t row = order[lo + std::size_t(p)];
      for (index_t e = A.row_ptr[row]; e < A.row_ptr[row + 1]; ++e) {
        auto claimed = slot(A.col_idx[e]);
        if (claimed.load(std::memory_order_relaxed) == index_t(p)) {
          claimed.store(-2 - index_t(p), std::memory_order_relaxed);
          ++count[std::size_t(p)];
        }
      }
    }
    offset.assign(std::size_t(width) + 1, 0);
    for (std::size_t p = 0; p < std::size_t(width); ++p) offset[p + 1] = offset[p] + count[p];
    order.resize(hi + offset.back());
    // 3. Each parent writes its children at its offset, releasing their claims.
#pragma omp parallel if (team)
    {
      std::vector<index_t> children;  // this thread's
#pragma omp for schedule(static)
      for (std::int64_t p = 0; p < width; ++p) {
        const index_t row = order[lo + std::size_t(p)];
        children.clear();
        for (index_t e = A.row_ptr[row]; e < A.row_ptr[row + 1]; ++e) {
          const index_t c = A.col_idx[e];
          auto claimed = slot(c);
          if (claimed.load(std::memory_order_relaxed) != -2 - index_t(p)) continue;
          claimed.store(kUnclaimed, std::memory_order_relaxed);
          children.push_back(c);
        }
        if (by_degree) std::stable_sort(children.begin(), children.end(), by_length);
        for (std::size_t j = 0; j < children.size(); ++j) {
          order[hi + offset[std::size_t(p)] + j] = children[j];
          take(children[j]);
        }
      }
    }
    if (order.size() == hi) return {depth, lo};  // no children: [lo, hi) is the deepest level
    lo = hi;
  }
}

}  // namespace

template <typename T>
RowPermutation reverse_cuthill_mckee(const CsrMatrix<T>& A) {
  if (A.rows != A.cols)
    throw InputError("reverse Cuthill-McKee needs a square matrix, got " + std::to_string(A.rows) +
                     " x " + std::to_string(A.cols));
  const index_t n = A.rows;
  std::vector<char> numbered(n, 0);
  std::vector<index_t> seen(n, -1), claim(n, kUnclaimed), order, reached;
  order.reserve(n);
  index_t stamp = 0;
  auto degree = [&](index_t r) { return A.row_length(r); };
  for (index_t first = 0; first < n; ++first) {
    if (numbered[first]) continue;
    // A pseudo-peripheral root of this part (George and Liu): from the part's first row, move
    // to a least-degree row of the deepest level while the depth grows.
    index_t root = first, eccentricity = -1;
    for (int attempt = 0; attempt < 8; ++attempt) {
      const index_t mark = stamp++;
      reached.assign(1, root);
      seen[root] = mark;
      const Sweep sweep = level_sweep(
          A, reached, 0, claim, false, [&](index_t c) { return numbered[c] || seen[c] == mark; },
          [&](index_t c) { seen[c] = mark; });
      if (sweep.depth <= eccentricity) break;
      eccentricity = sweep.depth;
      index_t best = reached.back();
      for (std::size_t k = sweep.deepest_begin; k < reached.size(); ++k)
        if (degree(reached[k]) < degree(best)) best = reached[k];
      root = best;
    }
    // Cuthill-McKee from the root: each row's unnumbered neighbours by increasing degree.
    const std::size_t begin = order.size();
    order.push_back(root);
    numbered[root] = 1;
    level_sweep(
        A, order, begin, claim, true, [&](index_t c) { return numbered[c] != 0; },
        [&](index_t c) { numbered[c] = 1; });
  }
  std::reverse(order.begin(), order.end());
  return RowPermutation{std::move(order)};
}

template <typename T>
CsrMatrix<T> permute_symmetric(const CsrMatrix<T>& A, const RowPermutation& P) {
  if (A.rows != A.cols)
    throw InputError("a symmetric row permutation needs a square matrix, got " +
                     std::to_string(A.rows) + " x " + std::to_string(A.cols));
  const std::int64_t n = A.rows;
  std::vector<index_t> old_to_new(A.rows);
#pragma omp parallel for schedule(static)
  for (std::int64_t k = 0; k < n; ++k) old_to_new[P.new_to_old[k]] = index_t(k);

  CsrMatrix<T> B;
  B.rows = B.cols = A.rows;
  B.row_ptr.assign(std::size_t(A.rows) + 1, 0);
  for (index_t k = 0; k < A.rows; ++k)
    B.row_ptr[k + 1] = B.row_ptr[k] + A.row_length(P.new_to_old[k]);
  B.col_idx.resize(A.col_idx.size());
  B.values.resize(A.values.size());
  // Once their offsets are known the rows are independent: renumbered and sorted on all cores
  // (the set-up of ic0 and bjacobi on a 9M-row matrix spent a third of its reordering here).
#pragma omp parallel
  {
    std::vector<std::pair<index_t, T>> row;
#pragma omp for schedule(static)
    for (std::int64_t k = 0; k < n; ++k) {
      const index_t old = P.new_to_old[k];
      row.clear();
      for (index_t e = A.row_ptr[old]; e < A.row_ptr[old + 1]; ++e)
        row.emplace_back(old_to_new[A.col_idx[e]], A.values[e]);
      std::sort(row.begin(), row.end(),
                [](const auto& a, const auto& b) { return a.first < b.first; });
      for (std::size_t j = 0; j < row.size(); ++j) {
        B.col_idx[B.row_ptr[k] + j] = row[j].first;
        B.values[B.row_ptr[k] + j] = row[j].second;
      }
    }
  }
  return B;
}

template std::vector<float> RowPermutation::to_new(const std::vector<float>&) const;
template std::vector<double> RowPermutation::to_new(const std::vector<double>&) const;
template std::vector<float> RowPermutation::to_original(const std::vector<float>&) const;
template std::vector<double> RowPermutation::to_original(const std::vector<double>&) const;
template RowPermutation sort_rows_by_length(const CsrMatrix<float>&);
template RowPermutation sort_rows_by_length(const CsrMatrix<double>&);
template RowPermutation reverse_cuthill_mckee(const CsrMatrix<float>&);
template RowPermutation reverse_cuthill_mckee(const CsrMatrix<double>&);
template CsrMatrix<float> permute_symmetric(const CsrMatrix<float>&, const RowPermutation&);
template CsrMatrix<double> permute_symmetric(const CsrMatrix<double>&, const RowPermutation&);

}  // namespace cgs
