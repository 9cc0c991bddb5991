// Narrow levels of a triangular sweep on one warp: the cluster loop's one-block programs
// (cluster_cg.cu, run_program) hand a run of operations of at most 32 items each to the first
// warp; this runs them.
//
// Why not the generic operation (program.hpp's run_items) a level at a time: each level then
// reloads the operation, looks up its vectors, switches on its kind and walks a chain of
// dependent loads (its rows, their bounds, their entries, then y), about 130 instructions and
// ~0.5 us a level: Richmond's 268 levels cost 143 us an iteration (H200, 2026-11-26). The levels
// of one sweep share S, d, u and y and differ only in their rows, and nothing a level needs but y
// depends on the level before. So the sweep's arrays are looked up once, and each lane reads its
// next level's row, bounds, first entry, u and d while the current level sums: a level's critical
// path is its reads of y, the sum, the store and the warp barrier. Same sums in the same order as
// run_items (the same bits).
#pragma once

#include "solver/precond/program.hpp"

namespace cgs::cluster {

// Whether `next` continues the triangular sweep of `op` (same matrix, diagonal and vectors).
template <typename T>
__device__ bool continues_sweep(const precond::Op<T>& op, const precond::Op<T>& next) {
  return next.kind == precond::OpKind::triangular_level && next.row_ptr == op.row_ptr &&
         next.col_idx == op.col_idx && next.values == op.values && next.d == op.d &&
         next.u == op.u && next.y == op.y && next.dot == op.dot;
}

// One lane's row of a level, read before the level runs (row < 0: no row for this lane).
template <typename T>
struct RowAhead {
  index_t row = -1;
  index_t first = 0, end = 0;  // its entries of S; the first one's column and value below
  index_t col = 0;
  T value = 0, u = 0, d = 0, r = 0;
};

template <typename T>
__device__ RowAhead<T> read_row_ahead(const precond::Op<T>& op, const T* u, const T* r,
                                      int lane) {
  RowAhead<T> a;
  if (lane >= op.items) return a;
  a.row = op.rows ? op.rows[lane] : index_t(lane);
  a.first = op.row_ptr[a.row];
  a.end = op.row_ptr[a.row + 1];
  if (a.end > a.first) {
    a.col = op.col_idx[a.first];
    a.value = op.values[a.first];
  }
  a.u = u[a.row];
  a.d = op.d[a.row];
  if (op.dot) a.r = r[a.row];
  return a;
}

// What the rows of a sweep share, in registers: the stores to y could alias the operation's
// fields, which would otherwise be reloaded after each store.
template <typename T>
struct Sweep {
  const index_t* col_idx;
  const T* values;
  T* y;
  bool dot;
};

// y_row = d_row (u_row - (S y)_row) for a row read ahead; returns r_row y_row when the sweep
// sums r.z (y is z then), else 0.
template <typename T>
__device__ double solve_row(const Sweep<T>& sweep, const RowAhead<T>& a) {
  if (a.row < 0) return 0;
  double sum = 0;
  if (a.end > a.first) sum += double(a.value) * double(sweep.y[a.col]);
  for (index_t k = a.first + 1; k < a.end; ++k)
    sum += double(sweep.values[k]) * double(sweep.y[sweep.col_idx[k]]);
  const T value = T((double(a.u) - sum) * double(a.d));
  sweep.y[a.row] = value;
  return sweep.dot ? double(a.r) * double(value) : 0.0;
}

// Runs ops[first, end) (each at most 32 items) on the calling warp, a __syncwarp after each;
// returns this lane's share of r.z.
template <typename T>
__device__ double run_narrow_operations(const precond::Op<T>* ops, int first, int end,
                                        T* const* table) {
  const int lane = int(threadIdx.x % 32);
  double rz = 0;
  for (int j = first; j < end;) {
    const precond::Op<T>& op = ops[j];
    if (op.kind != precond::OpKind::triangular_level) {
      rz += precond::run_items(op, table, lane, (long long)op.items, 32);
      __syncwarp();
      ++j;
      continue;
    }
    const T* u = table[op.u];
    const T* r = table[precond::kSlotR];
    const Sweep<T> sweep{op.col_idx, op.values, table[op.y], op.dot != 0};
    RowAhead<T> current = read_row_ahead(op, u, r, lane);
    for (;;) {
      const bool more = j + 1 < end && continues_sweep(op, ops[j + 1]);
      RowAhead<T> next;
      if (more) next = read_row_ahead(ops[j + 1], u, r, lane);
      rz += solve_row(sweep, current);
      __syncwarp();  // the level's y before the next level reads it
      ++j;
      if (!more) break;
      current = next;
    }
  }
  return rz;
}

}  // namespace cgs::cluster
