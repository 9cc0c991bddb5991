// Compressed sparse row: the hub format. Every other format is built from CSR, and CSR
// is what the Matrix Market reader, the row sorting and the validation work on.
#pragma once

#include <vector>

#include "formats/types.hpp"

namespace cgs {

template <typename T>
struct CsrMatrix {
  index_t rows = 0;
  index_t cols = 0;
  std::vector<index_t> row_ptr{0};  // rows + 1 entries
  std::vector<index_t> col_idx;     // sorted within each row
  std::vector<T> values;

  index_t nnz() const { return static_cast<index_t>(values.size()); }
  index_t row_length(index_t row) const { return row_ptr[row + 1] - row_ptr[row]; }
};

}  // namespace cgs
