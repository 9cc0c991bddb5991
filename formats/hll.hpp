// Hacked (sliced) ELLPACK: rows are grouped into hacks of `hack_size` rows; each hack is its own
// column-major ELLPACK block, padded only to that hack's longest row. Entry j of local row r of
// hack h is at hack_offset[h] + j * hack_size + r. The last hack is padded to hack_size rows
// (rows past `rows` have length 0), so every block has the same height.
#pragma once

#include <vector>

#include "formats/types.hpp"

namespace cgs {

template <typename T>
struct HllMatrix {
  index_t rows = 0;
  index_t cols = 0;
  index_t hack_size = 32;
  index_t nnz = 0;                    // real nonzeros (without padding)
  std::vector<index_t> hack_width;    // per hack: its longest row
  std::vector<offset_t> hack_offset;  // hacks + 1 entries, into col_idx / values
  std::vector<index_t> row_length;    // per row (rows entries)
  std::vector<index_t> col_idx;
  std::vector<T> values;

  index_t hacks() const { return static_cast<index_t>(hack_width.size()); }
};

}  // namespace cgs
