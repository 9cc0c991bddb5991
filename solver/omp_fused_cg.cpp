#include "solver/omp_fused_cg.hpp"

#include <omp.h>

#include <chrono>
#include <cmath>
#include <vector>

namespace cgs {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// One thread's partial sums, on a cache line of its own.
struct alignas(64) Partial {
  double pq = 0, rr = 0, rz = 0;
};

struct Sums {
  double rr = 0, rz = 0;
};

// Every thread adds the partials in the same order, so every thread gets the same bits and
// takes the same decisions without another barrier. p.q and (r.r, r.z) are summed separately:
// a thread may already write its next r.r while a slower one still sums p.q.
double sum_pq(const std::vector<Partial>& partial) {
  double pq = 0;
  for (const Partial& p : partial) pq += p.pq;
  return pq;
}

Sums sum_rr_rz(const std::vector<Partial>& partial) {
  Sums s;
  for (const Partial& p : partial) {
    s.rr += p.rr;
    s.rz += p.rz;
  }
  return s;
}

// The vector kernels of one part. `omp simd` lets the compiler reassociate the sums into SIMD
// lanes: a plain loop adds one term at a time, a 4-cycle dependency chain that costs more than the
// SpMV itself on the small systems of water networks. Jacobi and plain CG get separate loops so
// that neither carries a branch.
template <typename T>
double dot_range(const T* a, const T* b, index_t first, index_t last) {
  double sum = 0;
#pragma omp simd reduction(+ : sum)
  for (index_t i = first; i < last; ++i) sum += double(a[i]) * double(b[i]);
  return sum;
}

// x += alpha p; r -= alpha q; z = inv_diag .* r (when given). Returns r.r and r.z.
template <typename T>
Sums update_xrz_range(T alpha, const T* p, const T* q, const T* inv_diag, T* x, T* r, T* z,
                      index_t first, index_t last) {
  double rr = 0, rz = 0;
  if (inv_diag) {
#pragma omp simd reduction(+ : rr, rz)
    for (index_t i = first; i < last; ++i) {
      x[i] += alpha * p[i];
      const T ri = r[i] - alpha * q[i];
      r[i] = ri;
      z[i] = inv_diag[i] * ri;
      rr += double(ri) * double(ri);
      rz += double(ri) * double(z[i]);
    }
    return {rr, rz};
  }
#pragma omp simd reduction(+ : rr)
  for (index_t i = first; i < last; ++i) {
    x[i] += alpha * p[i];
    const T ri = r[i] - alpha * q[i];
    r[i] = ri;
    rr += double(ri) * double(ri);
  }
  return {rr, rr};
}

template <typename T>
struct Workspace {
  std::vector<T> r, z, p, q;
  explicit Workspace(std::size_t n, bool preconditioned)
      : r(n), z(preconditioned ? n : 0), p(n), q(n) {}
};

}  // namespace

template <typename T>
CgResult omp_fused_conjugate_gradient(SpmvBackend<T>& A, const T* inv_diag, const T* b, T* x,
                                      const CgOptions& options) {
  const index_t n = A.rows();
  const int parts = A.parts();
  const long max_iters = options.max_iters > 0 ? options.max_iters : 10 * long(n);
  CgResult result;

  double bb = 0;
  for (index_t i = 0; i < n; ++i) bb += double(b[i]) * double(b[i]);
  result.rhs_norm = std::sqrt(bb);
  if (result.rhs_norm == 0) {  // b = 0: x = 0
    std::fill(x, x + n, T(0));
    result.status = CgStatus::zero_rhs;
    result.converged_at = 0;
    return result;
  }
  const double threshold = std::max(options.tol * result.rhs_norm, options.atol);
  const double rr_threshold = threshold * threshold;

  Workspace<T> w(n, inv_diag != nullptr);
  T* r = w.r.data();
  T* z = inv_diag ? w.z.data() : w.r.data();  // without preconditioner z is r
  T* p = w.p.data();
  T* q = w.q.data();
  std::vector<Partial> partial(parts);
  std::vector<double> history;
  if (options.record_history) history.reserve(std::min<long>(max_iters, 1 << 20) + 1);
  result.spmv_seconds.reserve(std::min<long>(max_iters, 1 << 20));

  long iterations = 0, converged_at = -1, breakdown_at = -1;
  double last_rr = 0, last_pq = 0, last_rz = 0;
  const auto solve_begin = Clock::now();

#pragma omp parallel num_threads(parts)
  {
    const int team = omp_get_num_threads(), me = omp_get_thread_num();
    // Each thread takes the parts me, me + team, ...: all of them when the team is full.
    auto for_my_rows = [&](auto&& body) {
      for (int part = me; part < parts; part += team)
        body(A.part_begin(part), part + 1 < parts ? A.part_begin(part + 1) : n, part);
    };

    // r = b - A x, z = M r, p = z
    for_my_rows([&](index_t first, index_t last, int part) {
      A.apply_part(part, x, q);
      double rr = 0, rz = 0;
      for (index_t i = first; i < last; ++i) {
        r[i] = b[i] - q[i];
        rr += double(r[i]) * double(r[i]);
        if (inv_diag) {
          z[i] = inv_diag[i] * r[i];
          rz += double(r[i]) * double(z[i]);
        }
        p[i] = z[i];
      }
      partial[part].rr = rr;
      partial[part].rz = rz;
    });
#pragma omp barrier
    Sums s = sum_rr_rz(partial);
    double rz = inv_diag ? s.rz : s.rr;
    double rr = s.rr;
    long k = 0;
    bool done = rr <= rr_threshold;
    if (me == 0) {
      if (options.record_history) history.push_back(rr);
      if (done) converged_at = 0;
    }

    while (!done && k < max_iters) {
      ++k;
      // q = A p and p.q, my rows (p is complete: the last barrier of the previous iteration)
      const auto spmv_begin = me == 0 ? Clock::now() : Clock::time_point{};
      for_my_rows([&](index_t first, index_t last, int part) {
        A.apply_part(part, p, q);
        if (me == 0 && part == 0)
          result.spmv_seconds.push_back(seconds_between(spmv_begin, Clock::now()));
        partial[part].pq = dot_range(p, q, first, last);
      });
#pragma omp barrier
      const double pq = sum_pq(partial);
      if (!(pq > 0) || !std::isfinite(pq) || !std::isfinite(rz)) {  // not SPD, or NaN/Inf
        if (me == 0) {
          breakdown_at = k;
          last_pq = pq;
          last_rz = rz;
        }
        break;  // every thread sees the same pq and leaves together
      }
      const T alpha = T(rz / pq);

      // x += alpha p, r -= alpha q, z = M r, and r.r, r.z
      for_my_rows([&](index_t first, index_t last, int part) {
        const Sums sums = update_xrz_range(alpha, p, q, inv_diag, x, r, z, first, last);
        partial[part].rr = sums.rr;
        partial[part].rz = sums.rz;
      });
#pragma omp barrier
      s = sum_rr_rz(partial);
      const double rz_old = rz;
      rr = s.rr;
      rz = inv_diag ? s.rz : s.rr;
      if (!std::isfinite(rr)) {
        if (me == 0) {
          breakdown_at = k;
          last_pq = pq;
          last_rz = rr;
        }
        break;
      }
      done = rr <= rr_threshold;
      if (me == 0) {
        if (options.record_history) history.push_back(rr);
        if (done) converged_at = k;
        if (options.progress) options.progress(k, std::sqrt(rr) / result.rhs_norm);
      }

      // p = z + beta p, my rows; then wait until all of p is new before the next product
      const T beta = T(rz / rz_old);
      for_my_rows([&](index_t first, index_t last, int) {
#pragma omp simd
        for (index_t i = first; i < last; ++i) p[i] = z[i] + beta * p[i];
      });
#pragma omp barrier
    }
    if (me == 0) {
      iterations = k;
      last_rr = rr;
      if (breakdown_at < 0) last_rz = rz;
    }
  }

  result.solve_seconds = seconds_between(solve_begin, Clock::now());
  result.iterations = iterations;
  result.converged_at = converged_at;
  result.residual_norm = std::sqrt(last_rr);
  for (double rr : history) result.residual_history.push_back(std::sqrt(rr));
  if (breakdown_at >= 0) {
    result.iterations = breakdown_at;
    result.status = std::isfinite(last_pq) && std::isfinite(last_rz) ? CgStatus::breakdown
                                                                     : CgStatus::non_finite;
  } else {
    result.status = converged_at >= 0 ? CgStatus::converged : CgStatus::max_iterations;
  }
  return result;
}

template CgResult omp_fused_conjugate_gradient(SpmvBackend<float>&, const float*, const float*,
                                               float*, const CgOptions&);
template CgResult omp_fused_conjugate_gradient(SpmvBackend<double>&, const double*, const double*,
                                               double*, const CgOptions&);

}  // namespace cgs
