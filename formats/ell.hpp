// ELLPACK: every row padded to the longest row's length `width`, stored column-major
// (entry j of row i at j * rows + i) so that consecutive threads read consecutive addresses.
// `row_length` lets kernels stop at each row's real length; padding entries hold value 0 and
// a valid column index, so reading them is always safe.
#pragma once

#include <vector>

#include "formats/types.hpp"

namespace cgs {

template <typename T>
struct EllMatrix {
  index_t rows = 0;
  index_t cols = 0;
  index_t width = 0;  // longest row
  index_t nnz = 0;    // real nonzeros (without padding)
  std::vector<index_t> row_length;
  std::vector<index_t> col_idx;  // width * rows, column-major
  std::vector<T> values;         // width * rows, column-major

  offset_t slot(index_t row, index_t j) const { return offset_t(j) * rows + row; }
};

}  // namespace cgs
