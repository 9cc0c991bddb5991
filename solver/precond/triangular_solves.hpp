// The two triangular solves of a Cholesky-type preconditioner (IC(0), the exact sparse
// Cholesky) as program operations: L y = r, then L^T z = y, level by level. One writer, so that
// both preconditioners' programs are built the same way.
#pragma once

#include <cstddef>

#include "solver/precond/program_spec.hpp"
#include "solver/precond/sparse_parts.hpp"

namespace cgs::precond {

// The handles the solves read, already in the program: the strictly lower triangle L (rows in
// forward-solve order), its transpose as the upper one, both level orders' row lists and 1/diag.
struct TriangularSolveHandles {
  int lower_ptr, lower_cols, lower_values;
  int upper_ptr, upper_cols, upper_values;
  int forward_rows, backward_rows;
  int inverse_diagonal;
};

// Adds the work vector between the solves, then one operation per level of each solve; one
// sweep per solve over rows 0..n-1 where one thread runs the whole program (sequential), as a
// sweep in elimination order is a valid triangular solve only there. substitution: a direct
// solver's rounding, h.inverse_diagonal then holding the diagonal itself (program.hpp).
template <typename T>
void add_triangular_solves(ProgramSpec<T>& spec, const TriangularSolveHandles& h, index_t n,
                           bool sequential, const LevelSchedule& forward,
                           const LevelSchedule& backward, bool substitution = false) {
  const int between = spec.add_work(std::size_t(n));  // L^-1 r
  auto level_op = [&](index_t from, index_t items, bool forward_solve) {
    OpSpec op;
    op.kind = OpKind::triangular_level;
    op.items = items;
    op.rows = forward_solve ? h.forward_rows : h.backward_rows;
    op.rows_from = from;
    op.row_ptr = forward_solve ? h.lower_ptr : h.upper_ptr;
    op.col_idx = forward_solve ? h.lower_cols : h.upper_cols;
    op.values = forward_solve ? h.lower_values : h.upper_values;
    op.d = h.inverse_diagonal;
    op.u = forward_solve ? kSlotR : between;
    op.y = forward_solve ? between : kSlotZ;
    op.dot = forward_solve ? 0 : 1;
    op.substitution = substitution ? 1 : 0;
    spec.ops.push_back(op);
  };
  if (sequential) {
    level_op(0, n, true);
    level_op(0, n, false);
    return;
  }
  for (index_t l = 0; l < forward.levels(); ++l) level_op(forward.start[l], forward.size(l), true);
  for (index_t l = 0; l < backward.levels(); ++l)
    level_op(backward.start[l], backward.size(l), false);
}

}  // namespace cgs::precond
