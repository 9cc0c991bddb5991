// A preconditioner's apply, z = M^-1 r, as a program: a short list of operations, each a
// parallel loop over items (rows) that reads vectors finished by earlier operations and writes
// one or more vectors at its own rows. Between two operations every item of the first is done
// (a barrier). Every CG loop runs programs with the same operation bodies (run_item below,
// written once for host and device): the serial loop item by item, the OpenMP team and the GPU
// grid with a barrier or grid sync between operations, the generic loop one parallel region or
// one kernel per operation. So a preconditioner is its set-up (turning A into a program) and
// runs in every loop without code of its own there.
//
// Vectors are named by slots: 0 is r (read only), 1 is z (the result), 2... are the program's
// own work vectors. An operation may read a vector at other rows only if an earlier operation
// wrote it (or it is r); it may read and write its own row of one vector (in place). The
// operation that finishes an entry of z may ask for r_i z_i to be summed (`dot`): the fused
// loops get r.z with it, without another pass.
#pragma once

#include <cstdint>

#include "base/rounded.hpp"
#include "formats/types.hpp"
#include "solver/cg_step.hpp"

namespace cgs::precond {

enum class OpKind : std::int32_t {
  // y_i = d_i (alpha (S x)_i + gamma v_i) + beta u_i   (each term optional: S, v, d, u)
  product,
  // One level of a sparse triangular solve: for the level's rows i,
  // y_i = d_i (u_i - (S y)_i), S holding the off-diagonal part of the triangle (so it reads y
  // only at rows of earlier levels) and d the inverse of its diagonal. With `substitution` set,
  // a direct solver's substitution instead: y_i = (u_i - S_i,j1 y_j1 - S_i,j2 y_j2 - ...) / d_i,
  // each product and difference rounded on its own in S's stored order and d the diagonal
  // itself: EPANET's linsolve bit for bit, on every device.
  triangular_level,
  // Dense blocks on the diagonal: y_i = alpha sum_j B_b(i - b m, j) x_{b m + j}, b = i / m,
  // m = block, each block m x m column-major (rows past the end are absent: zero).
  block_product,
  // One step of the Chebyshev iteration for A z = r with the Jacobi-scaled matrix:
  //   res_i = v_i - (S x)_i         (v: the residual before, x: the last direction)
  //   dir_i = alpha x_i + beta d_i res_i
  //   w_i   = (z before)_i + dir_i  (the z before is u; u = w in place after the first step)
  // written to slots: res -> t, dir -> y, z -> w (t and y may be kNoSlot: a last step whose
  // residual and direction no later operation reads writes w alone).
  chebyshev_step,
};

inline constexpr int kNoSlot = -1;
inline constexpr int kSlotR = 0, kSlotZ = 1, kFirstWorkSlot = 2;

// One operation, with its arrays already in the memory of the device that runs it.
template <typename T>
struct Op {
  OpKind kind;
  index_t items;        // loop length
  const index_t* rows;  // item -> row (a triangular level's rows); null: row = item
  // S, CSR: rows of the output (null row_ptr: no matrix term)
  const index_t* row_ptr;
  const index_t* col_idx;
  const T* values;
  const T* d;  // per-row factor (null: 1)
  index_t block;
  const T* blocks;
  int x, u, v, y, w, t;  // slots (kNoSlot: unused)
  double alpha, beta, gamma;
  int dot;  // 1: add r_i z_i of every row this operation writes to r.z
  int substitution;  // triangular_level: 1 for a direct solver's rounding (above)
};

// The vectors an operation touches, looked up once per operation (not per item).
template <typename T>
struct OpVectors {
  const T* x;
  const T* v;
  const T* u;
  T* y;
  T* w;
  T* t;
  const T* r;
  const T* z;
};

template <typename T>
CGS_HD OpVectors<T> vectors_of(const Op<T>& op, T* const* vec) {
  auto at = [vec](int slot) { return slot == kNoSlot ? nullptr : vec[slot]; };
  return {at(op.x), at(op.v), at(op.u), at(op.y), at(op.w), at(op.t), vec[kSlotR], vec[kSlotZ]};
}

// (S x)_row in double.
template <typename T>
CGS_HD double sparse_row(const Op<T>& op, index_t row, const T* x) {
  double sum = 0;
  const index_t end = op.row_ptr[row + 1];
  for (index_t k = op.row_ptr[row]; k < end; ++k)
    sum += double(op.values[k]) * double(x[op.col_idx[k]]);
  return sum;
}

template <typename T>
CGS_HD void product_row(const Op<T>& op, const OpVectors<T>& v, index_t row) {
  double s = op.row_ptr ? op.alpha * sparse_row(op, row, v.x) : 0.0;
  if (v.v) s += op.gamma * double(v.v[row]);
  if (op.d) s *= double(op.d[row]);
  if (v.u) s += op.beta * double(v.u[row]);
  v.y[row] = T(s);
}

// y_at(k): y at S's entry k's column (k of this row), in double, as the rows before this one left
// it (a sweep on the GPU reads it where the writer posted it, triangular_sweep.cuh; everywhere
// else v.y[col_idx[k]]). Returns y_row as written.
template <typename T, typename YAt>
CGS_HD T triangular_row(const Op<T>& op, const OpVectors<T>& v, index_t row, YAt y_at) {
  const index_t end = op.row_ptr[row + 1];
  if (op.substitution) {
    double s = double(v.u[row]);
    for (index_t k = op.row_ptr[row]; k < end; ++k)
      s = rounded::sub(s, rounded::mul(double(op.values[k]), y_at(k)));
    return v.y[row] = T(rounded::div(s, double(op.d[row])));
  }
  double sum = 0;  // (S y)_row, as sparse_row
  for (index_t k = op.row_ptr[row]; k < end; ++k) sum += double(op.values[k]) * y_at(k);
  const double s = double(v.u[row]) - sum;
  return v.y[row] = T(s * double(op.d[row]));
}

template <typename T>
CGS_HD void triangular_row(const Op<T>& op, const OpVectors<T>& v, index_t row) {
  const T* y = v.y;
  const index_t* cols = op.col_idx;
  triangular_row(op, v, row, [y, cols](index_t k) { return double(y[cols[k]]); });
}

template <typename T>
CGS_HD void block_row(const Op<T>& op, const OpVectors<T>& v, index_t row) {
  const index_t m = op.block, b = row / m, first = b * m, local = row - first;
  const index_t count = op.items - first < m ? op.items - first : m;
  const T* B = op.blocks + offset_t(b) * m * m + local;
  const T* x = v.x + first;
  double s = 0;
  for (index_t j = 0; j < count; ++j) s += double(B[offset_t(j) * m]) * double(x[j]);
  v.y[row] = T(op.alpha * s);
}

template <typename T>
CGS_HD void chebyshev_row(const Op<T>& op, const OpVectors<T>& v, index_t row) {
  const double res = double(v.v[row]) - (op.row_ptr ? sparse_row(op, row, v.x) : 0.0);
  const double dir = op.alpha * double(v.x[row]) + op.beta * double(op.d[row]) * res;
  if (v.t) v.t[row] = T(res);
  if (v.y) v.y[row] = T(dir);
  v.w[row] = T(double(v.u[row]) + dir);
}

// Items first, first + stride, ... < end of `op` (the CPU takes a range with stride 1, the GPU
// a grid-stride loop); vec[slot] is the slot's vector. Returns the sum of r_i z_i over the rows
// written when op.dot is set (else 0).
template <typename T>
CGS_HD double run_items(const Op<T>& op, T* const* vec, long long first, long long end,
                        long long stride) {
  const OpVectors<T> v = vectors_of(op, vec);
  double rz = 0;
  auto loop = [&](auto row_body) {
    for (long long i = first; i < end; i += stride) {
      const index_t row = op.rows ? op.rows[i] : index_t(i);
      row_body(op, v, row);
      if (op.dot) rz += double(v.r[row]) * double(v.z[row]);
    }
  };
  switch (op.kind) {  // outside the loop: each loop runs one body
    case OpKind::product:
      loop([](const auto& o, const auto& w, index_t r) { product_row(o, w, r); });
      break;
    case OpKind::triangular_level:
      loop([](const auto& o, const auto& w, index_t r) { triangular_row(o, w, r); });
      break;
    case OpKind::block_product:
      loop([](const auto& o, const auto& w, index_t r) { block_row(o, w, r); });
      break;
    case OpKind::chebyshev_step:
      loop([](const auto& o, const auto& w, index_t r) { chebyshev_row(o, w, r); });
      break;
  }
  return rz;
}

}  // namespace cgs::precond
