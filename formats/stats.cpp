#include "formats/stats.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <sstream>
#include <vector>

#include "formats/convert.hpp"

namespace cgs {

template <typename T>
MatrixStats compute_stats(const CsrMatrix<T>& A, index_t hack_size) {
  MatrixStats s;
  s.rows = A.rows;
  s.cols = A.cols;
  s.nnz = A.nnz();
  s.hack_size = hack_size;
  s.value_size = sizeof(T);
  if (A.rows == 0) return s;

  s.min_row_length = A.row_length(0);
  offset_t hll_slots = 0;
  index_t hack_width = 0;
  for (index_t r = 0; r < A.rows; ++r) {
    const index_t length = A.row_length(r);
    s.min_row_length = std::min(s.min_row_length, length);
    s.max_row_length = std::max(s.max_row_length, length);
    if (length == 0) ++s.empty_rows;
    hack_width = std::max(hack_width, length);
    if ((r + 1) % hack_size == 0 || r + 1 == A.rows) {  // a hack ends here
      hll_slots += offset_t(hack_width) * hack_size;
      hack_width = 0;
    }
  }
  s.mean_row_length = double(s.nnz) / A.rows;
  double deviation = 0;
  for (index_t r = 0; r < A.rows; ++r) deviation += std::abs(A.row_length(r) - s.mean_row_length);
  s.row_length_avg_deviation_pct =
      s.mean_row_length > 0 ? 100.0 * deviation / A.rows / s.mean_row_length : 0.0;

  const double ell_slots = double(s.max_row_length) * A.rows;
  s.ell_fill = s.nnz > 0 ? ell_slots / s.nnz : 0.0;
  s.hll_fill = s.nnz > 0 ? double(hll_slots) / s.nnz : 0.0;

  const std::size_t v = sizeof(T), i = sizeof(index_t);
  s.bytes_coo = std::size_t(s.nnz) * (v + 2 * i);
  s.bytes_csr = std::size_t(s.nnz) * (v + i) + (std::size_t(A.rows) + 1) * i;
  s.bytes_ell = std::size_t(ell_slots) * (v + i) + std::size_t(A.rows) * i;
  const std::size_t hacks = (std::size_t(A.rows) + hack_size - 1) / hack_size;
  s.bytes_hll =
      std::size_t(hll_slots) * (v + i) + std::size_t(A.rows) * i + hacks * (i + sizeof(offset_t));
  return s;
}

namespace {
std::string megabytes(std::size_t bytes) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f MB", bytes / 1e6);
  return buffer;
}
}  // namespace

std::string format_stats(const MatrixStats& s) {
  std::ostringstream out;
  char line[256];
  std::snprintf(line, sizeof line, "  rows x cols        %d x %d\n  nonzeros           %d\n",
                s.rows, s.cols, s.nnz);
  out << line;
  std::snprintf(line, sizeof line,
                "  row length         min %d, mean %.2f, max %d (avg deviation %.1f%%), %d empty\n",
                s.min_row_length, s.mean_row_length, s.max_row_length,
                s.row_length_avg_deviation_pct, s.empty_rows);
  out << line;
  std::snprintf(line, sizeof line, "  fill (slots/nnz)   ELL %.2f, HLL(%d) %.2f\n", s.ell_fill,
                s.hack_size, s.hll_fill);
  out << line;
  out << "  storage (" << (s.value_size == 4 ? "float" : "double") << ")   COO "
      << megabytes(s.bytes_coo) << ", CSR " << megabytes(s.bytes_csr) << ", ELL "
      << megabytes(s.bytes_ell) << ", HLL " << megabytes(s.bytes_hll) << "\n";
  return out.str();
}

void check_ell_size(const MatrixStats& s, double max_fill, std::size_t max_bytes) {
  const double ratio = s.bytes_csr > 0 ? double(s.bytes_ell) / double(s.bytes_csr) : 0.0;
  if (ratio <= max_fill && s.bytes_ell <= max_bytes) return;
  std::ostringstream why;
  why << "ELLPACK would need " << megabytes(s.bytes_ell) << " (" << s.rows << " rows padded to "
      << s.max_row_length << " entries), " << ratio << "x the CSR storage of "
      << megabytes(s.bytes_csr);
  if (s.bytes_ell > max_bytes)
    why << " and more than the limit of " << megabytes(max_bytes);
  else
    why << " (limit --max-ell-fill " << max_fill << ")";
  why << "; use --format hll (" << megabytes(s.bytes_hll)
      << " before its HYB tail takes the long rows, which pads nothing to them) or --format csr "
         "instead";
  throw InputError(why.str());
}

std::size_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page_size > 0 ? std::size_t(pages) * std::size_t(page_size)
                                    : std::size_t(1) << 34;
}

template <typename T>
RowSpread row_spread(const CsrMatrix<T>& A) {
  RowSpread s;
  const double mean = A.rows > 0 ? double(A.nnz()) / double(A.rows) : 0.0;
  s.threshold = index_t(std::max(64.0, 16.0 * mean));
  long long in_long = 0;
  for (index_t i = 0; i < A.rows; ++i) {
    const index_t length = A.row_length(i);
    s.longest = std::max(s.longest, length);
    if (length > s.threshold) in_long += length;
  }
  s.long_share = A.nnz() > 0 ? double(in_long) / double(A.nnz()) : 0.0;
  return s;
}

namespace {

// The tail threshold for hacks of given widths: rows_of[L] rows of length L, hacks_of[W] hacks
// whose longest row is W (both sized longest + 1), `slots` their slots without a tail. Rows
// longer than max_width always go to the tail (a threshold of at most max_width is forced).
HllTail best_tail(const std::vector<long long>& rows_of, const std::vector<long long>& hacks_of,
                  long long slots, index_t hack_size, index_t max_width) {
  HllTail tail;
  tail.slots_without = slots;
  // From K = longest down: at K - 1 every hack as wide as K loses hack_size slots and every row
  // as long as K moves one more entry to the tail.
  const index_t longest = index_t(rows_of.size()) - 1;
  const bool forced = longest > max_width;
  long long moved = 0, hacks_as_wide = 0, rows_as_long = 0;
  double best_cost = forced ? std::numeric_limits<double>::infinity() : double(slots);
  for (index_t k = longest; k >= 1; --k) {
    hacks_as_wide += hacks_of[k];
    rows_as_long += rows_of[k];
    slots -= hacks_as_wide * hack_size;
    moved += rows_as_long;
    const double cost =
        double(slots) + kHllTailEntryCost * double(moved) + kHllTailRowCost * double(rows_as_long);
    if (k - 1 > max_width || cost >= best_cost) continue;
    best_cost = cost;
    tail.from = k - 1;
    tail.slots = slots;
    tail.nnz = moved;
    tail.rows = index_t(rows_as_long);
  }
  if (!forced && best_cost > (1 - kHllTailMinSaving) * double(tail.slots_without)) {
    HllTail none;
    none.slots = none.slots_without = tail.slots_without;
    return none;
  }
  return tail;
}

// best_tail for row lengths in storage order (hack h: lengths [h * hack_size, ...)).
HllTail tail_for_lengths(const std::vector<index_t>& lengths, index_t hack_size,
                         index_t max_width = kNoHllTail) {
  const index_t longest = lengths.empty() ? 0 : *std::max_element(lengths.begin(), lengths.end());
  std::vector<long long> rows_of(std::size_t(longest) + 1, 0), hacks_of(rows_of);
  long long slots = 0;
  for (std::size_t first = 0; first < lengths.size(); first += hack_size) {
    const std::size_t last = std::min(lengths.size(), first + std::size_t(hack_size));
    index_t width = 0;
    for (std::size_t r = first; r < last; ++r) {
      ++rows_of[lengths[r]];
      width = std::max(width, lengths[r]);
    }
    ++hacks_of[width];
    slots += (long long)width * hack_size;
  }
  return best_tail(rows_of, hacks_of, slots, hack_size, max_width);
}

template <typename T>
std::vector<index_t> row_lengths(const CsrMatrix<T>& A) {
  std::vector<index_t> lengths(A.rows);
  for (index_t r = 0; r < A.rows; ++r) lengths[r] = A.row_length(r);
  return lengths;
}

}  // namespace

template <typename T>
HllTail choose_hll_tail(const CsrMatrix<T>& A, index_t hack_size, index_t sigma) {
  if (A.rows == 0 || hack_size < 1) return {};
  const std::vector<index_t> slot_row = sigma_order(A, sigma);  // empty: the rows' own order
  std::vector<index_t> lengths(std::size_t(A.rows));
  for (index_t s = 0; s < A.rows; ++s)
    lengths[s] = A.row_length(slot_row.empty() ? s : slot_row[s]);
  return tail_for_lengths(lengths, hack_size, sigma > 0 ? kHllSortedMaxWidth : kNoHllTail);
}

std::vector<HllSigmaCandidate> hll_sigma_candidates(std::vector<index_t> lengths,
                                                    index_t hack_size) {
  std::vector<HllSigmaCandidate> candidates;
  const index_t rows = index_t(lengths.size());
  if (rows == 0 || hack_size < 1) return candidates;
  candidates.push_back({0, tail_for_lengths(lengths, hack_size)});
  // Windows sorted descending by a bottom-up merge sort: the windows of 2 sigma are two sorted
  // windows of sigma merged, so every candidate together costs one sort of the lengths.
  const auto longer = std::greater<index_t>();
  for (index_t first = 0; first < rows; first += hack_size)
    std::sort(lengths.begin() + first, lengths.begin() + std::min(rows, first + hack_size), longer);
  for (long long sigma = 2 * (long long)hack_size;; sigma *= 2) {
    const long long half = sigma / 2;
    for (long long first = 0; first + half < rows; first += sigma)
      std::inplace_merge(lengths.begin() + first, lengths.begin() + first + half,
                         lengths.begin() + std::min<long long>(rows, first + sigma), longer);
    if (sigma > std::numeric_limits<index_t>::max()) break;
    candidates.push_back(
        {index_t(sigma), tail_for_lengths(lengths, hack_size, kHllSortedMaxWidth)});
    if (sigma >= rows) break;  // one window holds every row: larger ones change nothing
  }
  return candidates;
}

template <typename T>
HllOrder choose_hll_sigma(const CsrMatrix<T>& A, index_t hack_size) {
  HllOrder order;
  if (A.rows == 0 || hack_size < 1) return order;
  if (!row_spread(A).irregular()) {  // regular rows: their own order, today's layout
    order.unsorted = order.tail = choose_hll_tail(A, hack_size);
    return order;
  }
  const std::vector<HllSigmaCandidate> candidates = hll_sigma_candidates(row_lengths(A), hack_size);
  order.unsorted = order.tail = candidates.front().tail;
  double best = order.unsorted.cost();
  for (const HllSigmaCandidate& c : candidates) best = std::min(best, c.tail.cost());
  // The smallest window within kHllSigmaSlack of the best: a small window keeps the writes to y
  // of a hack's rows close together.
  for (const HllSigmaCandidate& c : candidates) {
    if (c.sigma == 0 || c.tail.cost() > (1 + kHllSigmaSlack) * best) continue;
    if (c.tail.cost() <= (1 - kHllSortMinSaving) * order.unsorted.cost()) {
      order.sigma = c.sigma;
      order.tail = c.tail;
    }
    break;
  }
  return order;
}

template HllTail choose_hll_tail(const CsrMatrix<float>&, index_t, index_t);
template HllTail choose_hll_tail(const CsrMatrix<double>&, index_t, index_t);
template HllOrder choose_hll_sigma(const CsrMatrix<float>&, index_t);
template HllOrder choose_hll_sigma(const CsrMatrix<double>&, index_t);
template RowSpread row_spread(const CsrMatrix<float>&);
template RowSpread row_spread(const CsrMatrix<double>&);
template MatrixStats compute_stats(const CsrMatrix<float>&, index_t);
template MatrixStats compute_stats(const CsrMatrix<double>&, index_t);

}  // namespace cgs
