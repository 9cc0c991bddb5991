// The row passes of the fused CPU CG loops (solver/fused/cpu_serial.cpp, cpu_team.cpp), over a
// range of rows, with the format's row walker inlined (spmv/cpu/kernels.hpp).
//
// An iteration k is two passes over the rows, as in the fused GPU loop (solver/cuda/fused_cg_impl.cuh):
//   pass A(k): p_k = z + beta_k p_{k-1}, computed on the fly inside q = A p_k (the product reads
//              z_j + beta_k p_{k-1,j}; the row's own p_k is written to the other of two buffers,
//              since neighbours still read p_{k-1}); p.q; and x += alpha_{k-1} p_{k-1} (x lags
//              one iteration, which saves a pass).
//   pass B(k): r -= alpha_k q and r.r; with a pointwise preconditioner also z = d .* r and r.z.
// A preconditioner with a program runs it after pass B (its operations between barriers), and
// its last operations give r.z. The scalars and every decision are solver/cg_step.hpp's; the
// arithmetic of every entry is that of the generic loop (solver/generic_cg.hpp) with the CPU
// VectorOps: only the order of the additions in the dot products differs (SIMD lanes, parts).
#pragma once

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "solver/cg_step.hpp"
#include "solver/cg_types.hpp"
#include "spmv/cpu/kernels.hpp"

namespace cgs::fused {

// The CG vectors, host memory. d: the pointwise preconditioner's diagonal (null: the identity,
// or a program preconditioner, which writes z itself); z is r for the identity.
template <typename T>
struct Vectors {
  const T* b;
  const T* d;
  T* x;
  T* r;
  T* z;
  T* p_old;  // p_{k-1} during pass A(k)
  T* p_new;  // p_k, written by pass A(k)
  T* q;
};

struct Sums {
  double rr = 0, rz = 0;
};

// r = b - A x over rows [first, last); with d also z = d .* r. Returns r.r and r.z (r.z = r.r
// without d).
template <typename T, typename View>
Sums start_pass(const View& A, index_t first, index_t last, const Vectors<T>& v) {
  Sums s;
  cpu::walk_rows(A, first, last, cpu::read_from(static_cast<const T*>(v.x)),
                 [&](index_t row0, index_t count, const double* Ax) {
                   double rr = 0, rz = 0;
                   for (index_t i = 0; i < count; ++i) {
                     const index_t row = row0 + i;
                     const T r = v.b[row] - T(Ax[i]);
                     v.r[row] = r;
                     rr += double(r) * double(r);
                     if (v.d) {
                       v.z[row] = v.d[row] * r;
                       rz += double(r) * double(v.z[row]);
                     }
                   }
                   s.rr += rr;
                   s.rz += rz;
                 });
  if (!v.d) s.rz = s.rr;
  return s;
}

// Pass A over rows [first, last) (see the top of the file); returns its share of p.q.
template <typename T, typename View>
double pass_a(const View& A, index_t first, index_t last, const Vectors<T>& v, T beta,
              T alpha_prev) {
  const T* z = v.z;
  const T* p_old = v.p_old;
  T* p_new = v.p_new;
  T* q = v.q;
  T* x = v.x;
  double pq = 0;
  cpu::walk_rows(
      A, first, last, [=](index_t j) { return cg::next_p(z[j], beta, p_old[j]); },
      [&](index_t row0, index_t count, const double* Ap) {
        double sum = 0;
#pragma omp simd reduction(+ : sum)
        for (index_t i = 0; i < count; ++i) {
          const index_t row = row0 + i;
          const T p = cg::next_p(z[row], beta, p_old[row]);
          const T qi = T(Ap[i]);
          p_new[row] = p;
          q[row] = qi;
          x[row] = cg::next_x(x[row], alpha_prev, p_old[row]);
          sum += double(p) * double(qi);
        }
        pq += sum;
      });
  return pq;
}

// Pass B over rows [first, last): r -= alpha q and r.r; with d also z = d .* r and r.z. `omp
// simd` lets the compiler split the sums into SIMD lanes: a plain loop adds one term at a time, a
// latency chain that would cost more than the rest of the pass. With and without d are separate
// loops so that neither carries a branch.
template <typename T>
Sums pass_b(index_t first, index_t last, T alpha, const Vectors<T>& v) {
  const T* q = v.q;
  T* r = v.r;
  double rr = 0, rz = 0;
  if (v.d) {
    const T* d = v.d;
    T* z = v.z;
#pragma omp simd reduction(+ : rr, rz)
    for (index_t i = first; i < last; ++i) {
      const T ri = cg::next_r(r[i], alpha, q[i]);
      const T zi = d[i] * ri;
      r[i] = ri;
      z[i] = zi;
      rr += double(ri) * double(ri);
      rz += double(ri) * double(zi);
    }
    return {rr, rz};
  }
#pragma omp simd reduction(+ : rr)
  for (index_t i = first; i < last; ++i) {
    const T ri = cg::next_r(r[i], alpha, q[i]);
    r[i] = ri;
    rr += double(ri) * double(ri);
  }
  return {rr, rr};
}

// x += alpha p over rows [first, last): the update pass A would have made next.
template <typename T>
void update_x(index_t first, index_t last, T alpha, const T* p, T* x) {
#pragma omp simd
  for (index_t i = first; i < last; ++i) x[i] = cg::next_x(x[i], alpha, p[i]);
}

template <typename T>
double norm2(const T* b, index_t n) {
  double bb = 0;
#pragma omp simd reduction(+ : bb)
  for (index_t i = 0; i < n; ++i) bb += double(b[i]) * double(b[i]);
  return bb;
}

// The work vectors of a solve: p in two buffers, zeros (p_0 = 0, so that p_1 = z); z is r for
// the identity.
template <typename T>
struct Workspace {
  std::vector<T> r, z, p0, p1, q;
  Workspace(index_t n, bool has_z) : r(n), z(has_z ? n : 0), p0(n), p1(n), q(n) {}
  Vectors<T> vectors(const T* b, const T* d, T* x) {
    return {b, d, x, r.data(), z.empty() ? r.data() : z.data(), p0.data(), p1.data(), q.data()};
  }
};

// The history and progress of a solve, kept by one thread.
class Monitor {
 public:
  Monitor(const CgOptions& options, long max_iters) : options_(options), max_iters_(max_iters) {
    if (options.record_history) history_.reserve(std::size_t(std::min(max_iters, 1L << 20)) + 1);
  }
  // After the decision of iteration k (s holds its r.r).
  void record(long k, const cg::State& s) {
    if (options_.record_history) history_.push_back(s.rr);
    if (options_.progress && k > 0 &&
        (s.stopped || k == max_iters_ || k % std::max(1, options_.check_every) == 0))
      options_.progress(k, std::sqrt(s.rr / s.bb));
  }
  const std::vector<double>& history() const { return history_; }

 private:
  const CgOptions& options_;
  long max_iters_;
  std::vector<double> history_;
};

}  // namespace cgs::fused
