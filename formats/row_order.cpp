#include "formats/row_order.hpp"

#include <algorithm>
#include <cstdint>
#include <numeric>

#include "formats/convert.hpp"

namespace cgs {
namespace {
// Rows below which a permutation pass runs on one thread.
constexpr std::int64_t kTeamRows = 100000;
}  // namespace

template <typename T>
std::vector<T> RowPermutation::to_new(const std::vector<T>& original) const {
  std::vector<T> permuted(original.size());
  const std::int64_t n = std::int64_t(new_to_old.size());
#pragma omp parallel for schedule(static) if (n > kTeamRows)
  for (std::int64_t k = 0; k < n; ++k) permuted[k] = original[new_to_old[k]];
  return permuted;
}

template <typename T>
std::vector<T> RowPermutation::to_original(const std::vector<T>& permuted) const {
  std::vector<T> original(permuted.size());
  const std::int64_t n = std::int64_t(new_to_old.size());
#pragma omp parallel for schedule(static) if (n > kTeamRows)
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

// Breadth-first levels from `root` over the rows not yet numbered: fills `reached` with the rows
// in the order reached and `depth` (stamped in `seen` with `stamp` so that neither need be
// cleared). `reached` is the caller's, reused: a pass over a 9M-row grid allocated and grew a
// new one each time.
template <typename T>
void breadth_first(const CsrMatrix<T>& A, index_t root, const std::vector<char>& numbered,
                   std::vector<index_t>& seen, index_t stamp, std::vector<index_t>& depth,
                   std::vector<index_t>& reached) {
  reached.assign(1, root);
  seen[root] = stamp;
  depth[root] = 0;
  for (std::size_t next = 0; next < reached.size(); ++next) {
    const index_t row = reached[next];
    for (index_t e = A.row_ptr[row]; e < A.row_ptr[row + 1]; ++e) {
      const index_t col = A.col_idx[e];
      if (numbered[col] || seen[col] == stamp) continue;
      seen[col] = stamp;
      depth[col] = depth[row] + 1;
      reached.push_back(col);
    }
  }
}

// Stable insertion sort of [first, last) by `less`: a row's few new neighbours, where
// std::stable_sort's temporary buffer (an allocation per row) was most of RCM's time.
template <typename Less>
void stable_sort_small(index_t* first, index_t* last, Less less) {
  for (index_t* i = first + (first != last); i < last; ++i) {
    const index_t value = *i;
    index_t* j = i;
    for (; j > first && less(value, *(j - 1)); --j) *j = *(j - 1);
    *j = value;
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
  std::vector<index_t> seen(n, -1), depth(n, 0), order, reached;
  order.reserve(n);
  index_t stamp = 0;
  auto degree = [&](index_t r) { return A.row_length(r); };
  auto by_degree = [&](index_t a, index_t b) { return degree(a) < degree(b); };
  for (index_t first = 0; first < n; ++first) {
    if (numbered[first]) continue;
    // A pseudo-peripheral root of this part (George and Liu): from the part's first row, move
    // to a least-degree row of the deepest level while the depth grows.
    index_t root = first, eccentricity = -1;
    for (int attempt = 0; attempt < 8; ++attempt) {
      breadth_first(A, root, numbered, seen, stamp++, depth, reached);
      const index_t deepest = depth[reached.back()];
      if (deepest <= eccentricity) break;
      eccentricity = deepest;
      index_t best = reached.back();
      for (index_t r : reached)
        if (depth[r] == deepest && degree(r) < degree(best)) best = r;
      root = best;
    }
    // Cuthill-McKee from the root: each row's unnumbered neighbours by increasing degree.
    const std::size_t begin = order.size();
    order.push_back(root);
    numbered[root] = 1;
    for (std::size_t next = begin; next < order.size(); ++next) {
      const index_t row = order[next];
      const std::size_t added = order.size();
      for (index_t e = A.row_ptr[row]; e < A.row_ptr[row + 1]; ++e)
        if (!numbered[A.col_idx[e]]) {
          numbered[A.col_idx[e]] = 1;
          order.push_back(A.col_idx[e]);
        }
      if (order.size() - added > 64)  // a hub's neighbours: n log n, not n^2
        std::stable_sort(order.begin() + std::ptrdiff_t(added), order.end(), by_degree);
      else
        stable_sort_small(order.data() + added, order.data() + order.size(), by_degree);
    }
  }
  std::reverse(order.begin(), order.end());
  return RowPermutation{std::move(order)};
}

template <typename T>
bool is_wavefront_order(const CsrMatrix<T>& A) {
  const index_t n = A.rows;
  std::vector<index_t> level(std::size_t(n), 0);
  for (index_t i = 0; i < n; ++i) {
    index_t low = n, high = -1;  // the levels of row i's earlier neighbours
    for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
      const index_t j = A.col_idx[k];
      if (j >= i) continue;
      low = std::min(low, level[std::size_t(j)]);
      high = std::max(high, level[std::size_t(j)]);
    }
    if (high < 0 ? i > 0 : low != high) return false;
    level[std::size_t(i)] = high + 1;
  }
  return true;
}

template <typename T>
CsrMatrix<T> permute_symmetric(const CsrMatrix<T>& A, const RowPermutation& P) {
  if (A.rows != A.cols)
    throw InputError("a symmetric row permutation needs a square matrix, got " +
                     std::to_string(A.rows) + " x " + std::to_string(A.cols));
  const std::int64_t n = A.rows;
  std::vector<index_t> old_to_new(A.rows);
  // Small matrices stay on the calling thread: starting a team costs more than they take (an
  // 865-row network system spent 1.2-2.2 ms here on 16 cores, 50 ms on 2 loaded cores).
  const bool on_team = n > kTeamRows;
#pragma omp parallel for schedule(static) if (on_team)
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
#pragma omp parallel if (on_team)
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

CsrMatrix<double> numbered_entries(const CsrMatrix<double>& A) {
  CsrMatrix<double> numbered = same_pattern<double>(A);
  numbered.values.resize(A.values.size());
  const std::int64_t entries = std::int64_t(A.values.size());
#pragma omp parallel for schedule(static) if (entries > 1000000)
  for (std::int64_t k = 0; k < entries; ++k) numbered.values[std::size_t(k)] = double(k);
  return numbered;
}

template std::vector<float> RowPermutation::to_new(const std::vector<float>&) const;
template std::vector<double> RowPermutation::to_new(const std::vector<double>&) const;
template std::vector<float> RowPermutation::to_original(const std::vector<float>&) const;
template std::vector<double> RowPermutation::to_original(const std::vector<double>&) const;
template RowPermutation sort_rows_by_length(const CsrMatrix<float>&);
template RowPermutation sort_rows_by_length(const CsrMatrix<double>&);
template RowPermutation reverse_cuthill_mckee(const CsrMatrix<float>&);
template RowPermutation reverse_cuthill_mckee(const CsrMatrix<double>&);
template bool is_wavefront_order(const CsrMatrix<float>&);
template bool is_wavefront_order(const CsrMatrix<double>&);
template CsrMatrix<float> permute_symmetric(const CsrMatrix<float>&, const RowPermutation&);
template CsrMatrix<double> permute_symmetric(const CsrMatrix<double>&, const RowPermutation&);

}  // namespace cgs
