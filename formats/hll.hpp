// Hacked (sliced) ELLPACK: rows are grouped into hacks of `hack_size` rows; each hack is its own
// column-major ELLPACK block, padded only to that hack's longest row. Entry j of local row r of
// hack h is at hack_offset[h] + j * hack_size + r. The last hack is padded to hack_size rows
// (rows past `rows` have length 0), so every block has the same height.
//
// HYB tail (issue 28): a row longer than `tail_from` keeps its first tail_from entries in its
// hack and the rest in a CSR tail over those rows only. One row of thousands among rows of 7
// would otherwise widen its hack to thousands of slots and, on the GPU, make one thread walk
// them all while its warp waits. tail_from at or past the longest row: no tail.
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
  std::vector<index_t> row_length;    // per row (rows entries): its whole length, tail included
  std::vector<index_t> col_idx;
  std::vector<T> values;

  index_t tail_from = kNoHllTail;
  std::vector<index_t> tail_rows;  // ascending: the rows longer than tail_from
  std::vector<index_t> tail_ptr;   // tail_rows.size() + 1 entries, into tail_col_idx/values
  std::vector<index_t> tail_col_idx;
  std::vector<T> tail_values;

  index_t hacks() const { return static_cast<index_t>(hack_width.size()); }
  index_t tail_nnz() const { return tail_ptr.empty() ? 0 : tail_ptr.back(); }
};

}  // namespace cgs
