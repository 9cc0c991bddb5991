// Coordinate format: one (row, column, value) triple per nonzero, sorted by row, then column.
#pragma once

#include <vector>

#include "formats/types.hpp"

namespace cgs {

template <typename T>
struct CooMatrix {
  index_t rows = 0;
  index_t cols = 0;
  std::vector<index_t> row_idx;
  std::vector<index_t> col_idx;
  std::vector<T> values;

  index_t nnz() const { return static_cast<index_t>(values.size()); }
};

}  // namespace cgs
