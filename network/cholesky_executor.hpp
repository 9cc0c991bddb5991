// A sparse Cholesky factorisation compiled into a flat schedule, and its executor: the same code
// on the host (one system, the reference) and on the device (a batch of systems of one pattern,
// one thread a system: the batched Cholesky engine, batch_cholesky.hpp, and the trials engine).
//
// The schedule (network/cholesky_schedule.cpp compiles it from precond::SparseCholesky's analysis) names
// every operation of EPANET's left-looking factorisation by slot: a system's factor is one array,
// the diagonal of L at slots 0..n-1 and L's entries below it at n + e (precond::SparseCholesky's order).
//   column j:   pivot = A's diagonal - sum of the squares of slots pivot_terms[pivot_ptr[j]..)
//               (the entries L(j, k) of the earlier columns, in linsolve's list order);
//   entry e:    L(r, j) = (A(r, j) - sum of slot update_source[u] * slot update_multiplier[u]
//               over u in update_ptr[e]..) / pivot.
// Every sum runs in the order linsolve adds its terms (last in, first out lists), and each
// product is formed as linsolve forms it, so the executor's factor equals precond::SparseCholesky's bit
// for bit; on the device no multiply-add is contracted (__dmul_rn, __dadd_rn) for the same bits.
#pragma once

#include <cmath>

#include "base/host_device.hpp"
#include "base/rounded.hpp"

namespace cgs {

// Non-owning: host arrays (the executor on the host, the upload) or device arrays (the kernel).
struct CholeskyScheduleView {
  int n = 0;                               // rows
  int entries = 0;                         // entries of L below its diagonal
  int a_nnz = 0;                           // entries of A (both triangles)
  const int* order = nullptr;              // [n]: the row of A eliminated k-th
  const int* diag_source = nullptr;        // [n]: A's entry on column k's diagonal (-1: none, 0)
  const int* value_source = nullptr;       // [entries]: A's entry at L's entry e (-1: fill-in, 0)
  const int* col_ptr = nullptr;            // [n + 1]: L's entries below the diagonal by columns
  const int* row = nullptr;                // [entries]: their rows (elimination numbering)
  const int* pivot_ptr = nullptr;          // [n + 1]
  const int* pivot_terms = nullptr;        // slots L(j, k) summed squared into column j's pivot
  const int* update_ptr = nullptr;         // [entries + 1]
  const int* update_source = nullptr;      // slot L(r, k)
  const int* update_multiplier = nullptr;  // slot L(j, k)
  long updates() const { return update_ptr ? update_ptr[entries] : 0; }  // host view only
};

namespace chol {

// Products and sums as the host rounds them (no contraction into a fused multiply-add).
using rounded::add;
using rounded::mul;
using rounded::sub;

// One system's values: element i at data[i * stride] (stride 1 on the host; on the device the
// batch's systems are interleaved, system s's base at s, stride the batch size).
struct Strided {
  double* data;
  long stride;
  CGS_HD double& operator[](long i) const { return data[i * stride]; }
};
struct ConstStrided {
  const double* data;
  long stride;
  CGS_HD double operator[](long i) const { return data[i * stride]; }
};

// The factor's starting values from A: 0.0 + a, as the sum into a cleared array that
// precond::SparseCholesky's gather replaces (-0.0 becomes 0.0).
CGS_HD void gather(const CholeskyScheduleView& s, ConstStrided a, Strided factor) {
  for (int k = 0; k < s.n; ++k)
    factor[k] = s.diag_source[k] >= 0 ? add(0.0, a[s.diag_source[k]]) : 0.0;
  for (int e = 0; e < s.entries; ++e)
    factor[s.n + e] = s.value_source[e] >= 0 ? add(0.0, a[s.value_source[e]]) : 0.0;
}

// The numeric factorisation in place; -1, or the column whose pivot was <= 0 (or NaN: EPANET's
// error 110), where it stopped.
CGS_HD int factorize(const CholeskyScheduleView& s, Strided factor) {
  for (int j = 0; j < s.n; ++j) {
    double diag_update = 0.0;
    for (int t = s.pivot_ptr[j]; t < s.pivot_ptr[j + 1]; ++t) {
      const double l = factor[s.pivot_terms[t]];
      diag_update = add(diag_update, mul(l, l));
    }
    double pivot = sub(factor[j], diag_update);
    if (!(pivot > 0.0)) return j;
    pivot = sqrt(pivot);
    factor[j] = pivot;
    for (int e = s.col_ptr[j]; e < s.col_ptr[j + 1]; ++e) {
      double update = 0.0;
      for (int u = s.update_ptr[e]; u < s.update_ptr[e + 1]; ++u)
        update = add(update, mul(factor[s.update_source[u]], factor[s.update_multiplier[u]]));
      factor[s.n + e] = sub(factor[s.n + e], update) / pivot;
    }
  }
  return -1;
}

// L y = b by columns, then L^T x = y by rows of L^T, in place on rhs (elimination numbering), as
// precond::SparseCholesky::solve.
CGS_HD void substitute(const CholeskyScheduleView& s, ConstStrided factor, Strided rhs) {
  for (int j = 0; j < s.n; ++j) {
    const double bj = rhs[j] / factor[j];
    rhs[j] = bj;
    for (int e = s.col_ptr[j]; e < s.col_ptr[j + 1]; ++e)
      rhs[s.row[e]] = sub(rhs[s.row[e]], mul(factor[s.n + e], bj));
  }
  for (int j = s.n - 1; j >= 0; --j) {
    double bj = rhs[j];
    for (int e = s.col_ptr[j]; e < s.col_ptr[j + 1]; ++e)
      bj = sub(bj, mul(factor[s.n + e], rhs[s.row[e]]));
    rhs[j] = bj / factor[j];
  }
}

}  // namespace chol

}  // namespace cgs
