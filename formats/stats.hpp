// Matrix statistics (`cgsolve --info`) and the ELLPACK memory guard.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "formats/csr.hpp"
#include "formats/hll.hpp"

namespace cgs {

struct MatrixStats {
  index_t rows = 0;
  index_t cols = 0;
  index_t nnz = 0;
  index_t min_row_length = 0;
  index_t max_row_length = 0;
  double mean_row_length = 0;
  double row_length_avg_deviation_pct = 0;  // mean |len - mean| / mean * 100 (Cranfield study)
  index_t empty_rows = 0;
  double ell_fill = 0;  // stored ELL slots / nnz
  double hll_fill = 0;  // stored HLL slots / nnz (for the given hack size)
  index_t hack_size = 32;
  std::size_t bytes_coo = 0, bytes_csr = 0, bytes_ell = 0, bytes_hll = 0;  // for double values
  std::size_t value_size = 8;
};

template <typename T>
MatrixStats compute_stats(const CsrMatrix<T>& A, index_t hack_size);

std::string format_stats(const MatrixStats& s);  // human-readable block

// How much of the matrix sits in long rows: what decides, without timing, whether a GPU kernel
// with one thread (or a few lanes) per row would serialise the product on a few rows while the
// rest of the grid waits. Long: over max(64, 16 x mean) entries. Irregular: long rows
// hold 1% of the nonzeros, or a row has over 4,096 entries.
struct RowSpread {
  index_t threshold = 0;
  double long_share = 0;
  index_t longest = 0;
  bool irregular() const { return long_share >= 0.01 || longest > 4096; }
};
template <typename T>
RowSpread row_spread(const CsrMatrix<T>& A);

// The HYB tail of HLL (formats/hll.hpp) from the row lengths alone: the threshold K that
// minimises the hacks' slots plus kHllTailEntryCost slots for each entry moved to the tail and
// kHllTailRowCost for each tail row (a warp reads its piece, however short). A row
// goes to the tail only where it stands out in its hack: lowering K by one saves hack_size slots
// in each hack as wide as K and costs kHllTailEntryCost in each row as long, so K stops where the
// hacks that wide have hack_size / kHllTailEntryCost rows (8 of 32) reaching it on average. No
// tail (from = kNoHllTail) unless it saves kHllTailMinSaving of the cost: a regular matrix keeps
// one kernel launch per product.
inline constexpr double kHllTailEntryCost = 4.0;
inline constexpr double kHllTailRowCost = 32.0;
inline constexpr double kHllTailMinSaving = 0.25;
struct HllTail {
  index_t from = kNoHllTail;
  index_t rows = 0;             // rows longer than from
  long long nnz = 0;            // entries in the tail
  long long slots = 0;          // the hacks' slots with the tail
  long long slots_without = 0;  // and without
  bool any() const { return from != kNoHllTail; }
  // The model's cost of the layout: slots, plus the tail's entries and rows at their weights.
  double cost() const {
    return any() ? double(slots) + kHllTailEntryCost * double(nnz) + kHllTailRowCost * double(rows)
                 : double(slots);
  }
};
// sigma > 0: on the rows sorted inside windows of sigma rows (convert.hpp's sigma_order), rows
// over kHllSortedMaxWidth always in the tail (see choose_hll_sigma below).
template <typename T>
HllTail choose_hll_tail(const CsrMatrix<T>& A, index_t hack_size, index_t sigma = 0);

// SELL-C-sigma (formats/hll.hpp): whether to store the rows sorted by length inside windows of
// sigma rows, from the row lengths alone. Only irregular rows (RowSpread::irregular(), the test
// that sends CSR to a load-balanced kernel) are sorted: sorting scatters the writes to y inside
// a window and costs the fused loops' row function a look-up, while the hacks of regular rows
// (Poisson, water networks, bcsstk-like) pad little that a GPU thread would read (each stops at
// its row's length), so they keep their order and today's layout bit for bit. On irregular rows
// each window sigma = 2, 4, 8, ... hack sizes up to the first that holds every row is costed as
// the layout it gives, its tail chosen on the sorted hacks (HllTail::cost) with rows over
// kHllSortedMaxWidth always in the tail: sorting gathers the longest rows into the same hacks,
// where no padding argues for a tail, but one thread would still walk each of them alone
// (thousands of dependent loads) while the tail's warp pieces take 8 a lane. The smallest window
// within kHllSigmaSlack of the cheapest is taken (a small window keeps y's writes close), and
// only where it costs kHllSortMinSaving less than the rows' own order with its own tail.
inline constexpr double kHllSigmaSlack = 0.05;
inline constexpr double kHllSortMinSaving = 0.25;
inline constexpr index_t kHllSortedMaxWidth = 64;
struct HllSigmaCandidate {
  index_t sigma = 0;  // 0: the rows' own order
  HllTail tail;       // the tail chosen on that order
};
// Every candidate, the rows' own order (sigma 0) first, whatever the rows' spread; `lengths` in
// row order.
std::vector<HllSigmaCandidate> hll_sigma_candidates(std::vector<index_t> lengths,
                                                    index_t hack_size);
struct HllOrder {
  index_t sigma = 0;  // 0: no sorting
  HllTail tail;       // on the chosen order
  HllTail unsorted;   // on the rows' own order
  bool sorted() const { return sigma > 0; }
};
template <typename T>
HllOrder choose_hll_sigma(const CsrMatrix<T>& A, index_t hack_size);

// Refuses ELLPACK when padding would be wasteful or not fit: fill over `max_fill` times the
// nonzeros, or more than `max_bytes` (default: half the machine's memory). Throws InputError
// with the sizes, suggesting HLL or CSR.
void check_ell_size(const MatrixStats& s, double max_fill, std::size_t max_bytes);

std::size_t physical_memory_bytes();

}  // namespace cgs
