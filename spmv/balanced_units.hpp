// The units of the GPU's "balanced" CSR kernel (spmv/views.hpp's CsrUnits), built once
// on the host from the row pointers: consecutive whole rows, up to kBalancedUnitRows of them and
// kBalancedUnit nonzeros in all, and rows longer than kBalancedUnit cut into pieces of
// kBalancedUnit nonzeros (the last shorter). A warp takes a unit, so every warp's work is at most
// kBalancedUnit products whatever the row lengths: no warp waits on a row of thousands, and
// rows of 7 fill the warp's lanes (32 rows) instead of leaving them idle.
#pragma once

#include <vector>

#include "spmv/views.hpp"

namespace cgs {

struct BalancedUnits {
  std::vector<index_t> start;      // units + 1: first nonzero of each unit, then nnz
  std::vector<index_t> first_row;  // units + 1: first row of each unit, then the row count
  index_t count() const { return index_t(start.size()) - 1; }
};

inline BalancedUnits balanced_units(const std::vector<index_t>& row_ptr, index_t rows) {
  BalancedUnits units;
  index_t row = 0;
  while (row < rows) {
    const index_t length = row_ptr[row + 1] - row_ptr[row];
    if (length > kBalancedUnit) {  // pieces of one long row
      for (index_t k = row_ptr[row]; k < row_ptr[row + 1]; k += kBalancedUnit) {
        units.start.push_back(k);
        units.first_row.push_back(row);
      }
      ++row;
      continue;
    }
    units.start.push_back(row_ptr[row]);
    units.first_row.push_back(row);
    index_t last = row + 1;  // whole rows while they fit (a long row never does)
    while (last < rows && last - row < kBalancedUnitRows &&
           row_ptr[last + 1] - row_ptr[row] <= kBalancedUnit)
      ++last;
    row = last;
  }
  units.start.push_back(rows > 0 ? row_ptr[rows] : 0);
  units.first_row.push_back(rows);
  return units;
}

}  // namespace cgs
