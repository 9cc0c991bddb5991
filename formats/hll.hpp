// Hacked (sliced) ELLPACK: rows are grouped into hacks of `hack_size` rows; each hack is its own
// column-major ELLPACK block, padded only to that hack's longest row. Entry j of local row r of
// hack h is at hack_offset[h] + j * hack_size + r. The last hack is padded to hack_size rows
// (rows past `rows` have length 0), so every block has the same height.
//
// HYB tail: a row longer than `tail_from` keeps its first tail_from entries in its
// hack and the rest in a CSR tail over those rows only. One row of thousands among rows of 7
// would otherwise widen its hack to thousands of slots and, on the GPU, make one thread walk
// them all while its warp waits. tail_from at or past the longest row: no tail.
//
// SELL-C-sigma storage order (Kreutzer et al. 2014): with sigma > 0 the rows are
// stored sorted by descending length inside windows of sigma consecutive rows (stable), so that
// a hack holds rows of similar length and pads little. Only the storage order changes: columns
// and x stay as they are, and the product of slot s goes to y[slot_row[s]]. sigma is a multiple
// of hack_size, so a window is whole hacks and its slots hold exactly its own rows. Every
// per-row array below (row_length, tail_rows) is indexed by slot, so that the kernels walk
// slots as before and only their final write goes through slot_row.
#pragma once

#include <limits>
#include <vector>

#include "formats/types.hpp"

namespace cgs {

inline constexpr index_t kNoHllTail = std::numeric_limits<index_t>::max();

template <typename T>
struct HllMatrix {
  index_t rows = 0;
  index_t cols = 0;
  index_t hack_size = 32;
  index_t nnz = 0;                    // real nonzeros (without padding), tail included
  std::vector<index_t> hack_width;    // per hack: its longest row, at most tail_from
  std::vector<offset_t> hack_offset;  // hacks + 1 entries, into col_idx / values
  std::vector<index_t> row_length;    // per slot (rows entries): its row's length, tail included
  std::vector<index_t> col_idx;
  std::vector<T> values;

  index_t sigma = 0;              // rows sorted inside windows of sigma rows; 0: file order
  std::vector<index_t> slot_row;  // slot -> row; empty: the identity (sigma 0)
  std::vector<index_t> row_slot;  // row -> slot (the inverse, for row functions); empty: identity

  index_t tail_from = kNoHllTail;
  std::vector<index_t> tail_rows;  // ascending: the slots whose rows are longer than tail_from
  std::vector<index_t> tail_ptr;   // tail_rows.size() + 1 entries, into tail_col_idx/values
  std::vector<index_t> tail_col_idx;
  std::vector<T> tail_values;

  index_t hacks() const { return static_cast<index_t>(hack_width.size()); }
  index_t tail_nnz() const { return tail_ptr.empty() ? 0 : tail_ptr.back(); }
  bool sorted() const { return !slot_row.empty(); }
  index_t row_of_slot(index_t slot) const { return sorted() ? slot_row[slot] : slot; }
};

}  // namespace cgs
