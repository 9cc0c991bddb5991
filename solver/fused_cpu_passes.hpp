// The two row passes of the fused CPU CG loops (solver/serial_fused_cg.*, solver/omp_fused_cg.*),
// over a range of rows, with each format's row products inlined (spmv/cpu/kernels.hpp).
//
// An iteration k is two passes over the rows, as in the fused GPU loop (solver/cuda/fused_cg.cu):
//   pass A(k): p_k = z + beta_k p_{k-1}, computed on the fly inside q = A p_k (the product reads
//              z_j + beta_k p_{k-1,j}; the row's own p_k is written to the other of two buffers,
//              since neighbours still read p_{k-1}); p.q; and x += alpha_{k-1} p_{k-1} (x lags
//              one iteration, which saves a pass).
//   pass B(k): alpha_k = rz / pq; r -= alpha_k q; z = inv_diag .* r; r.r and r.z.
// After the last iteration one more sweep adds alpha_k p_k to x. The arithmetic of every entry is
// that of solver/cg.hpp with CpuVectorOps (p, alpha and beta in T, products and sums in double);
// only the order of the additions in the dot products differs (SIMD lanes).
#pragma once

#include <algorithm>
#include <cmath>
#include <utility>

#include "solver/cg.hpp"
#include "spmv/cpu/kernels.hpp"

namespace cgs::fused {

// The rows [first, last) of a stored matrix, as its row-block walker wants them: for HLL in
// whole hacks (first is a multiple of the hack size; last too, or the end), for COO with the
// first entry of the range.
struct RowRange {
  index_t first = 0, last = 0;
  index_t first_entry = 0;  // COO
};

template <typename T>
RowRange row_range(const CsrMatrix<T>&, index_t first, index_t last) {
  return {first, last};
}
template <typename T>
RowRange row_range(const EllMatrix<T>&, index_t first, index_t last) {
  return {first, last};
}
template <typename T>
RowRange row_range(const HllMatrix<T>&, index_t first, index_t last) {
  return {first, last};
}
template <typename T>
RowRange row_range(const CooMatrix<T>& A, index_t first, index_t last) {
  const auto at = std::lower_bound(A.row_idx.begin(), A.row_idx.end(), first);
  return {first, last, index_t(at - A.row_idx.begin())};
}

template <typename T, typename Value, typename Finish>
void walk_rows(const CsrMatrix<T>& A, const RowRange& range, Value value, Finish finish) {
  cpu::csr_row_blocks(A, range.first, range.last, value, finish);
}
template <typename T, typename Value, typename Finish>
void walk_rows(const EllMatrix<T>& A, const RowRange& range, Value value, Finish finish) {
  cpu::ell_row_blocks(A, range.first, range.last, value, finish);
}
template <typename T, typename Value, typename Finish>
void walk_rows(const CooMatrix<T>& A, const RowRange& range, Value value, Finish finish) {
  cpu::coo_row_blocks(A, range.first, range.last, range.first_entry, value, finish);
}
// An HLL part starts at a hack (or, empty, at the end: rounding up keeps it empty).
template <typename T, typename Value, typename Finish>
void walk_rows(const HllMatrix<T>& A, const RowRange& range, Value value, Finish finish) {
  const index_t size = A.hack_size;
  cpu::hll_row_blocks(A, (range.first + size - 1) / size, (range.last + size - 1) / size, value,
                      finish);
}

// Calls f with the stored matrix of whichever format `m` holds.
template <typename T, typename F>
decltype(auto) visit(const HostMatrix<T>& m, F&& f) {
  if (m.csr) return f(*m.csr);
  if (m.coo) return f(*m.coo);
  if (m.ell) return f(*m.ell);
  return f(*m.hll);
}

// The CG vectors, host memory. z is r without a preconditioner (inv_diag null).
template <typename T>
struct Vectors {
  const T* b;
  const T* inv_diag;
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

// One expression for p_k, so that the value the product reads and the stored p_k are the same.
template <typename T>
inline T next_p(T z, T beta, T p_old) {
  return z + beta * p_old;
}

// r = b - A x, z = inv_diag .* r; returns r.r and r.z. (p_old must hold zeros: p_1 = z.)
template <typename T, typename Matrix>
Sums start_pass(const Matrix& A, const RowRange& range, const Vectors<T>& v) {
  Sums s;
  walk_rows(A, range, cpu::read_from(v.x), [&](index_t first, index_t count, const double* Ax) {
    double rr = 0, rz = 0;
    for (index_t i = 0; i < count; ++i) {
      const index_t row = first + i;
      const T r = v.b[row] - T(Ax[i]);
      v.r[row] = r;
      rr += double(r) * double(r);
      if (v.inv_diag) {
        v.z[row] = v.inv_diag[row] * r;
        rz += double(r) * double(v.z[row]);
      }
    }
    s.rr += rr;
    s.rz += rz;
  });
  if (!v.inv_diag) s.rz = s.rr;
  return s;
}

// Pass A over the range (see the top of the file); returns its share of p.q.
template <typename T, typename Matrix>
double pass_a(const Matrix& A, const RowRange& range, const Vectors<T>& v, T beta, T alpha_prev) {
  const T* z = v.z;
  const T* p_old = v.p_old;
  T* p_new = v.p_new;
  T* q = v.q;
  T* x = v.x;
  double pq = 0;
  walk_rows(
      A, range, [=](index_t j) { return next_p(z[j], beta, p_old[j]); },
      [&](index_t first, index_t count, const double* Ap) {
        double sum = 0;
#pragma omp simd reduction(+ : sum)
        for (index_t i = 0; i < count; ++i) {
          const index_t row = first + i;
          const T p = next_p(z[row], beta, p_old[row]);
          const T qi = T(Ap[i]);
          p_new[row] = p;
          q[row] = qi;
          x[row] += alpha_prev * p_old[row];
          sum += double(p) * double(qi);
        }
        pq += sum;
      });
  return pq;
}

// Pass B over rows [first, last): r -= alpha q, z = inv_diag .* r; returns r.r and r.z. `omp
// simd` lets the compiler split the sums into SIMD lanes: a plain loop adds one term at a time, a
// latency chain that would cost more than the rest of the pass. Jacobi and plain CG get
// separate loops so that neither carries a branch.
template <typename T>
Sums pass_b(index_t first, index_t last, T alpha, const Vectors<T>& v) {
  const T* q = v.q;
  T* r = v.r;
  double rr = 0, rz = 0;
  if (v.inv_diag) {
    const T* d = v.inv_diag;
    T* z = v.z;
#pragma omp simd reduction(+ : rr, rz)
    for (index_t i = first; i < last; ++i) {
      const T ri = r[i] - alpha * q[i];
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
    const T ri = r[i] - alpha * q[i];
    r[i] = ri;
    rr += double(ri) * double(ri);
  }
  return {rr, rr};
}

// x += alpha p over rows [first, last): the update pass A would have made next.
template <typename T>
void update_x(index_t first, index_t last, T alpha, const T* p, T* x) {
#pragma omp simd
  for (index_t i = first; i < last; ++i) x[i] += alpha * p[i];
}

// p.q <= 0 (A is not positive definite) or a NaN/Inf: no step can be taken.
inline bool breaks_down(double pq, double rz) {
  return !(pq > 0) || !std::isfinite(pq) || !std::isfinite(rz);
}

// What one solve records, kept by one thread, and turned into a CgResult at the end with the
// semantics of solver/cg.hpp.
class Outcome {
 public:
  Outcome(const CgOptions& options, double rhs_norm, long max_iters)
      : options_(options), rhs_norm_(rhs_norm), max_iters_(max_iters) {
    if (options.record_history) history_.reserve(std::size_t(std::min(max_iters, 1L << 20)) + 1);
  }

  // r.r after iteration k (0: the start); returns whether the tolerance is met.
  bool record(long k, double rr, double rr_threshold) {
    rr_ = rr;
    iterations_ = k;
    if (options_.record_history) history_.push_back(rr);
    const bool done = rr <= rr_threshold;
    if (done) converged_at_ = k;
    if (options_.progress && k > 0 &&
        (done || k == max_iters_ || k % std::max(1, options_.check_every) == 0))
      options_.progress(k, std::sqrt(rr) / rhs_norm_);
    return done;
  }
  // Iteration k could not finish: p.q and r.z (or r.r) as they were.
  void breakdown(long k, double pq, double rz) {
    breakdown_at_ = k;
    pq_ = pq;
    rz_ = rz;
  }

  CgResult result(double seconds) const {
    CgResult result;
    result.rhs_norm = rhs_norm_;
    result.iterations = breakdown_at_ >= 0 ? breakdown_at_ : iterations_;
    result.converged_at = converged_at_;
    result.residual_norm = std::sqrt(rr_);
    result.solve_seconds = seconds;
    for (double rr : history_) result.residual_history.push_back(std::sqrt(rr));
    if (breakdown_at_ >= 0)
      result.status =
          std::isfinite(pq_) && std::isfinite(rz_) ? CgStatus::breakdown : CgStatus::non_finite;
    else
      result.status = converged_at_ >= 0 ? CgStatus::converged : CgStatus::max_iterations;
    return result;
  }

 private:
  const CgOptions& options_;
  double rhs_norm_;
  long max_iters_;
  long iterations_ = 0, converged_at_ = -1, breakdown_at_ = -1;
  double rr_ = 0, pq_ = 0, rz_ = 0;
  std::vector<double> history_;
};

// b = 0: x = 0 is the answer, no iteration needed (as solver/cg.hpp).
template <typename T>
CgResult zero_rhs(index_t n, T* x) {
  std::fill(x, x + n, T(0));
  CgResult result;
  result.status = CgStatus::zero_rhs;
  result.converged_at = 0;
  return result;
}

template <typename T>
double norm2(const T* b, index_t n) {
  double bb = 0;
#pragma omp simd reduction(+ : bb)
  for (index_t i = 0; i < n; ++i) bb += double(b[i]) * double(b[i]);
  return std::sqrt(bb);
}

// What every fused loop fixes before its first iteration, as solver/cg.hpp does: the iteration
// limit (10 n when not given) and the stopping test on r.r, from ||b||.
struct Limits {
  long max_iters;
  double rhs_norm;
  double rr_threshold;
};

template <typename T>
Limits limits(const T* b, index_t n, const CgOptions& options) {
  Limits l;
  l.max_iters = options.max_iters > 0 ? options.max_iters : 10 * long(n);
  l.rhs_norm = norm2(b, n);
  const double threshold = std::max(options.tol * l.rhs_norm, options.atol);
  l.rr_threshold = threshold * threshold;
  return l;
}

// The work vectors of a solve: p in two buffers, zeros (p_0 = 0, so that p_1 = z).
template <typename T>
struct Workspace {
  std::vector<T> r, z, p0, p1, q;
  Workspace(index_t n, bool preconditioned) : r(n), z(preconditioned ? n : 0), p0(n), p1(n), q(n) {}
  Vectors<T> vectors(const T* b, const T* inv_diag, T* x) {
    return {b,         inv_diag,  x,       r.data(), inv_diag ? z.data() : r.data(),
            p0.data(), p1.data(), q.data()};
  }
};

}  // namespace cgs::fused
