#include "formats/convert.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace cgs {

template <typename T>
CsrMatrix<T> csr_from_triplets(index_t rows, index_t cols, std::vector<index_t> row_idx,
                               std::vector<index_t> col_idx, std::vector<T> values) {
  // Counting sort by row (stable), then sort each row by column and sum duplicates in place.
  CsrMatrix<T> A;
  A.rows = rows;
  A.cols = cols;
  std::vector<index_t> count(std::size_t(rows) + 1, 0);
  for (index_t r : row_idx) ++count[r + 1];
  std::partial_sum(count.begin(), count.end(), count.begin());
  const std::size_t entries = values.size();
  std::vector<std::pair<index_t, T>> sorted(entries);
  std::vector<index_t> next(count.begin(), count.end() - 1);
  for (std::size_t k = 0; k < entries; ++k) sorted[next[row_idx[k]]++] = {col_idx[k], values[k]};

  A.row_ptr.assign(std::size_t(rows) + 1, 0);
  A.col_idx.reserve(entries);
  A.values.reserve(entries);
  for (index_t r = 0; r < rows; ++r) {
    auto first = sorted.begin() + count[r], last = sorted.begin() + count[r + 1];
    const auto by_column = [](const auto& a, const auto& b) { return a.first < b.first; };
    // Files usually list each row in order already; sorting only when needed saves a third of a
    // large read (stable_sort allocates a buffer per call).
    if (!std::is_sorted(first, last, by_column)) std::stable_sort(first, last, by_column);
    for (auto it = first; it != last; ++it) {
      if (A.col_idx.size() > std::size_t(A.row_ptr[r]) && A.col_idx.back() == it->first) {
        A.values.back() += it->second;  // duplicate entry: summed
      } else {
        A.col_idx.push_back(it->first);
        A.values.push_back(it->second);
      }
    }
    A.row_ptr[r + 1] = static_cast<index_t>(A.values.size());
  }
  return A;
}

template <typename T>
CooMatrix<T> to_coo(const CsrMatrix<T>& A) {
  CooMatrix<T> C;
  C.rows = A.rows;
  C.cols = A.cols;
  C.row_idx.resize(A.values.size());
  for (index_t r = 0; r < A.rows; ++r)
    std::fill(C.row_idx.begin() + A.row_ptr[r], C.row_idx.begin() + A.row_ptr[r + 1], r);
  C.col_idx = A.col_idx;
  C.values = A.values;
  return C;
}

namespace {

// Column index written into padding slots: the row's last real column (already in cache when
// the padding is read) or column 0 for an empty row. Always a valid index.
template <typename T>
index_t padding_column(const CsrMatrix<T>& A, index_t row) {
  return A.row_length(row) > 0 ? A.col_idx[A.row_ptr[row + 1] - 1] : 0;
}

index_t longest_row(const std::vector<index_t>& row_ptr, index_t first, index_t last) {
  index_t longest = 0;
  for (index_t r = first; r < last; ++r) longest = std::max(longest, row_ptr[r + 1] - row_ptr[r]);
  return longest;
}

}  // namespace

template <typename T>
EllMatrix<T> to_ell(const CsrMatrix<T>& A) {
  EllMatrix<T> E;
  E.rows = A.rows;
  E.cols = A.cols;
  E.nnz = A.nnz();
  E.width = longest_row(A.row_ptr, 0, A.rows);
  E.row_length.resize(A.rows);
  const std::size_t slots = std::size_t(E.width) * std::size_t(A.rows);
  E.col_idx.resize(slots);
  E.values.assign(slots, T(0));
  for (index_t r = 0; r < A.rows; ++r) {
    const index_t length = A.row_length(r);
    E.row_length[r] = length;
    for (index_t j = 0; j < length; ++j) {
      E.col_idx[E.slot(r, j)] = A.col_idx[A.row_ptr[r] + j];
      E.values[E.slot(r, j)] = A.values[A.row_ptr[r] + j];
    }
    const index_t pad = padding_column(A, r);
    for (index_t j = length; j < E.width; ++j) E.col_idx[E.slot(r, j)] = pad;
  }
  return E;
}

template <typename T>
std::vector<index_t> sigma_order(const CsrMatrix<T>& A, index_t sigma) {
  if (sigma < 0)
    throw InputError("HLL sort window must be at least 0, got " + std::to_string(sigma));
  std::vector<index_t> slot_row;
  if (sigma <= 1 || A.rows <= 1) return slot_row;
  slot_row.resize(A.rows);
  std::iota(slot_row.begin(), slot_row.end(), 0);
  const auto longer = [&](index_t a, index_t b) { return A.row_length(a) > A.row_length(b); };
  for (index_t first = 0; first < A.rows; first += std::min(sigma, A.rows - first)) {
    const auto window = slot_row.begin() + first;
    std::stable_sort(window, window + std::min(sigma, A.rows - first), longer);
  }
  bool identity = true;
  for (index_t s = 0; s < A.rows && identity; ++s) identity = slot_row[s] == s;
  if (identity) slot_row.clear();  // already in order: the unsorted layout, bit for bit
  return slot_row;
}

namespace {

// The rows longer than tail_from, their entries past tail_from in CSR, in slot order.
template <typename T>
void fill_hll_tail(const CsrMatrix<T>& A, HllMatrix<T>& H) {
  H.tail_ptr.assign(1, 0);
  for (index_t s = 0; s < A.rows; ++s) {
    const index_t r = H.row_of_slot(s);
    if (A.row_length(r) <= H.tail_from) continue;
    H.tail_rows.push_back(s);
    H.tail_col_idx.insert(H.tail_col_idx.end(), A.col_idx.begin() + A.row_ptr[r] + H.tail_from,
                          A.col_idx.begin() + A.row_ptr[r + 1]);
    H.tail_values.insert(H.tail_values.end(), A.values.begin() + A.row_ptr[r] + H.tail_from,
                         A.values.begin() + A.row_ptr[r + 1]);
    H.tail_ptr.push_back(index_t(H.tail_values.size()));
  }
}

// slot_row and its inverse for the window sigma (empty where the order is the file's).
template <typename T>
void set_storage_order(const CsrMatrix<T>& A, index_t sigma, HllMatrix<T>& H) {
  if (sigma > 0 && sigma % H.hack_size != 0)  // a negative sigma: sigma_order says so
    throw InputError("HLL sort window " + std::to_string(sigma) +
                     " must be a multiple of the hack size " + std::to_string(H.hack_size));
  H.sigma = sigma;
  H.slot_row = sigma_order(A, sigma);
  if (!H.sorted()) return;
  H.row_slot.resize(A.rows);
  for (index_t s = 0; s < A.rows; ++s) H.row_slot[H.slot_row[s]] = s;
}

}  // namespace

template <typename T>
HllMatrix<T> to_hll(const CsrMatrix<T>& A, index_t hack_size, index_t tail_from, index_t sigma) {
  if (hack_size < 1)
    throw InputError("hack size must be at least 1, got " + std::to_string(hack_size));
  if (tail_from < 0)
    throw InputError("HLL tail threshold must be at least 0, got " + std::to_string(tail_from));
  HllMatrix<T> H;
  H.rows = A.rows;
  H.cols = A.cols;
  H.nnz = A.nnz();
  H.hack_size = hack_size;
  H.tail_from = tail_from;
  set_storage_order(A, sigma, H);
  H.row_length.resize(A.rows);
  for (index_t s = 0; s < A.rows; ++s) H.row_length[s] = A.row_length(H.row_of_slot(s));
  const index_t hacks = A.rows == 0 ? 0 : (A.rows - 1) / hack_size + 1;
  H.hack_width.resize(hacks);
  H.hack_offset.assign(std::size_t(hacks) + 1, 0);
  for (index_t h = 0; h < hacks; ++h) {
    const auto first = H.row_length.begin() + h * hack_size;
    const auto last = H.row_length.begin() + std::min(A.rows, (h + 1) * hack_size);
    H.hack_width[h] = std::min(tail_from, *std::max_element(first, last));
    H.hack_offset[h + 1] = H.hack_offset[h] + offset_t(H.hack_width[h]) * hack_size;
  }
  H.col_idx.assign(H.hack_offset.back(), 0);
  H.values.assign(H.hack_offset.back(), T(0));
  for (index_t s = 0; s < A.rows; ++s) {
    const index_t h = s / hack_size, local = s % hack_size, r = H.row_of_slot(s);
    const index_t in_hack = std::min(H.row_length[s], tail_from);
    const index_t pad = in_hack > 0 ? A.col_idx[A.row_ptr[r] + in_hack - 1] : 0;
    for (index_t j = 0; j < H.hack_width[h]; ++j) {
      const offset_t slot = H.hack_offset[h] + offset_t(j) * hack_size + local;
      const bool real = j < in_hack;
      H.col_idx[slot] = real ? A.col_idx[A.row_ptr[r] + j] : pad;
      H.values[slot] = real ? A.values[A.row_ptr[r] + j] : T(0);
    }
  }
  fill_hll_tail(A, H);
  return H;
}

template <typename T>
void assign_values(CsrMatrix<T>& A, const T* csr_values) {
  std::copy(csr_values, csr_values + A.values.size(), A.values.begin());
}

template <typename T>
void assign_values(CooMatrix<T>& A, const T* csr_values) {
  std::copy(csr_values, csr_values + A.values.size(), A.values.begin());  // same entry order
}

template <typename T>
void assign_values(EllMatrix<T>& A, const T* csr_values) {
  const T* v = csr_values;
  for (index_t r = 0; r < A.rows; ++r)
    for (index_t j = 0; j < A.row_length[r]; ++j) A.values[A.slot(r, j)] = *v++;
}

template <typename T>
void assign_values(HllMatrix<T>& A, const T* csr_values) {
  // csr_values come row by row; a sorted layout finds each row's slot (and its tail row, by a
  // binary search among the tail's slots) through row_slot. No allocation.
  const T* v = csr_values;
  for (index_t r = 0; r < A.rows; ++r) {
    const index_t s = A.sorted() ? A.row_slot[r] : r;
    const index_t h = s / A.hack_size, local = s % A.hack_size;
    const index_t in_hack = std::min(A.row_length[s], A.tail_from);
    for (index_t j = 0; j < in_hack; ++j)
      A.values[A.hack_offset[h] + offset_t(j) * A.hack_size + local] = *v++;
    if (A.row_length[s] <= in_hack) continue;
    const auto t =
        std::lower_bound(A.tail_rows.begin(), A.tail_rows.end(), s) - A.tail_rows.begin();
    std::copy(v, v + (A.row_length[s] - in_hack), A.tail_values.begin() + A.tail_ptr[t]);
    v += A.row_length[s] - in_hack;
  }
}

template <typename T>
CsrMatrix<T> transpose(const CsrMatrix<T>& A) {
  CsrMatrix<T> B;
  B.rows = A.cols;
  B.cols = A.rows;
  B.row_ptr.assign(std::size_t(A.cols) + 1, 0);
  for (index_t c : A.col_idx) ++B.row_ptr[c + 1];
  std::partial_sum(B.row_ptr.begin(), B.row_ptr.end(), B.row_ptr.begin());
  B.col_idx.resize(A.col_idx.size());
  B.values.resize(A.values.size());
  std::vector<index_t> next(B.row_ptr.begin(), B.row_ptr.end() - 1);
  for (index_t r = 0; r < A.rows; ++r)  // rows in order, so each row of B comes out sorted
    for (index_t k = A.row_ptr[r]; k < A.row_ptr[r + 1]; ++k) {
      const index_t slot = next[A.col_idx[k]]++;
      B.col_idx[slot] = r;
      B.values[slot] = A.values[k];
    }
  return B;
}

bool is_symmetric(const CsrMatrix<double>& A, double relative_tol, index_t* row, index_t* col) {
  if (A.rows != A.cols) return false;
  const CsrMatrix<double> At = transpose(A);
  double largest = 0;
  for (double v : A.values) largest = std::max(largest, std::abs(v));
  const double tolerance = relative_tol * largest;
  for (index_t r = 0; r < A.rows; ++r) {
    // Both rows are sorted: walk them together; an entry missing on one side counts as 0.
    index_t i = A.row_ptr[r], j = At.row_ptr[r];
    while (i < A.row_ptr[r + 1] || j < At.row_ptr[r + 1]) {
      const index_t ci = i < A.row_ptr[r + 1] ? A.col_idx[i] : A.cols;
      const index_t cj = j < At.row_ptr[r + 1] ? At.col_idx[j] : A.cols;
      const index_t c = std::min(ci, cj);
      const double a = ci == c ? A.values[i++] : 0.0;
      const double b = cj == c ? At.values[j++] : 0.0;
      if (std::abs(a - b) > tolerance) {
        if (row) *row = r;
        if (col) *col = c;
        return false;
      }
    }
  }
  return true;
}

template <typename T>
std::vector<T> to_dense(const CsrMatrix<T>& A) {
  std::vector<T> D(std::size_t(A.rows) * A.cols, T(0));
  for (index_t r = 0; r < A.rows; ++r)
    for (index_t k = A.row_ptr[r]; k < A.row_ptr[r + 1]; ++k)
      D[std::size_t(r) * A.cols + A.col_idx[k]] += A.values[k];
  return D;
}

template <typename T>
std::vector<T> diagonal(const CsrMatrix<T>& A) {
  std::vector<T> d(std::min(A.rows, A.cols), T(0));
  // Rows on every core: each solve's set-up reads it (Jacobi, Chebyshev, the SPD check).
#pragma omp parallel for schedule(static) if (d.size() > 100000)
  for (index_t r = 0; r < index_t(d.size()); ++r) d[r] = diagonal_entry(A, r);
  return d;
}

#define CGSOLVE_INSTANTIATE(T)                                                    \
  template CsrMatrix<T> csr_from_triplets(index_t, index_t, std::vector<index_t>, \
                                          std::vector<index_t>, std::vector<T>);  \
  template CooMatrix<T> to_coo(const CsrMatrix<T>&);                              \
  template EllMatrix<T> to_ell(const CsrMatrix<T>&);                              \
  template HllMatrix<T> to_hll(const CsrMatrix<T>&, index_t, index_t, index_t);   \
  template std::vector<index_t> sigma_order(const CsrMatrix<T>&, index_t);        \
  template CsrMatrix<T> transpose(const CsrMatrix<T>&);                           \
  template std::vector<T> to_dense(const CsrMatrix<T>&);                          \
  template std::vector<T> diagonal(const CsrMatrix<T>&);                          \
  template void assign_values(CsrMatrix<T>&, const T*);                           \
  template void assign_values(CooMatrix<T>&, const T*);                           \
  template void assign_values(EllMatrix<T>&, const T*);                           \
  template void assign_values(HllMatrix<T>&, const T*);
CGSOLVE_INSTANTIATE(float)
CGSOLVE_INSTANTIATE(double)
#undef CGSOLVE_INSTANTIATE

}  // namespace cgs
