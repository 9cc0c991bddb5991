#include "solver/precond/spectrum.hpp"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <memory>

namespace cgs::precond {
namespace {

// sum over i < n of term(i), on every host core, in the same order whatever the thread count
// or timing (a fixed split into chunks, summed in chunk order): the interval, and with it every
// coefficient, comes out bit for bit the same in each set-up, so that a GPU and a host set-up
// of one matrix apply the same polynomial.
template <typename Term>
double ordered_sum(index_t n, Term term) {
  constexpr index_t kChunks = 256;
  double partial[kChunks] = {};
  const index_t size = (n + kChunks - 1) / kChunks;
#pragma omp parallel for schedule(static) if (worth_threads(n))
  for (index_t c = 0; c < kChunks; ++c) {
    double s = 0;
    for (index_t i = c * size; i < std::min(n, (c + 1) * size); ++i) s += term(i);
    partial[c] = s;
  }
  double total = 0;
  for (double s : partial) total += s;
  return total;
}

// `steps` Lanczos steps on the CSR matrix (A's pattern, S's values) from the unit vector u:
// the tridiagonal's diagonal alpha and off-diagonal beta (fewer where an invariant subspace
// ends it early). The vectors stay unnormalised (u = b v, b the last off-diagonal; 1 at first)
// and the scalings go to the per-row work, so that a step is two passes of one thread team
// with one synchronisation each: z = S u with sum z.u (alpha = z.u / b^2), then, row by row,
// v = u / b, the next u = z / b - alpha v - beta v_old with sum u.u. Every thread adds the
// chunks' partial sums in chunk order, so all of them hold the same alpha and beta, bit for bit
// on any thread count. Three separate loops a step (v = u / b, the product, the
// orthogonalisation), each its own team and join, cost the spectra phase more than its
// products on this 2-core VM when other work shares it: a join waits for a thread the
// scheduler has parked (AMG's spectra phase on poisson2d:1000, issue 52).
void lanczos_steps(const CsrMatrix<double>& A, const double* S, std::vector<double> u, int steps,
                   std::vector<double>& alpha, std::vector<double>& beta) {
  const index_t n = A.rows;
  constexpr index_t kChunks = 256;  // ordered_sum's split
  const index_t chunk = (n + kChunks - 1) / kChunks;
  std::vector<double> z(u.size()), v_old(u.size(), 0.0);
  double partial_a[kChunks] = {}, partial_b[kChunks] = {};
  alpha.assign(std::size_t(steps), 0.0);
  beta.assign(std::size_t(std::max(steps - 1, 0)), 0.0);
  int done = 0;
#pragma omp parallel if (worth_threads(n))
  {
    double* x = u.data();  // the current u (each thread swaps its own pointers alike)
    double* y = z.data();
    double b = 1, beta_prev = 0;
    for (int j = 0; j < steps; ++j) {
#pragma omp for schedule(static)
      for (index_t c = 0; c < kChunks; ++c) {
        double sum = 0;
        for (index_t i = c * chunk; i < std::min(n, (c + 1) * chunk); ++i) {
          double s = 0;
          for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) s += S[k] * x[A.col_idx[k]];
          y[i] = s;
          sum += s * x[i];
        }
        partial_a[c] = sum;
      }
      double a = 0;
      for (double s : partial_a) a += s;
      a /= b * b;
#pragma omp for schedule(static)
      for (index_t c = 0; c < kChunks; ++c) {
        double sum = 0;
        for (index_t i = c * chunk; i < std::min(n, (c + 1) * chunk); ++i) {
          const double v = x[i] / b;
          const double next = y[i] / b - a * v - beta_prev * v_old[i];
          v_old[i] = v;
          y[i] = next;
          sum += next * next;
        }
        partial_b[c] = sum;
      }
      double bb = 0;
      for (double s : partial_b) bb += s;
      bb = std::sqrt(bb);
#pragma omp master
      {
        alpha[std::size_t(j)] = a;
        done = j + 1;
        if (j + 1 < steps) beta[std::size_t(j)] = bb;
      }
      if (j + 1 == steps || bb <= 1e-12 * std::abs(a)) break;  // an invariant subspace: exact
      std::swap(x, y);
      b = beta_prev = bb;
    }
  }
  alpha.resize(std::size_t(done));
  beta.resize(std::size_t(done - 1));
}

}  // namespace

// The set-up runs on every host core whatever device solves: 40 products of a 9M-row matrix on
// one core took 6 s.
Interval spectrum_bounds(const CsrMatrix<double>& A, const std::vector<double>& scale, int steps,
                         const EntryFilter& filter, const std::vector<double>* start) {
  const index_t n = A.rows;
  steps = int(std::min<index_t>(n, steps));
  // Entry k of row i as the estimate sees it (A's, or A_F's: filtered_matrix in amg_setup.cpp).
  auto entry = [&](index_t i, index_t k) {
    if (!filter.strong) return A.values[k];
    if (A.col_idx[k] == i) return (*filter.diagonal)[i];
    return (*filter.strong)[k] ? A.values[k] : 0.0;
  };
  // S = diag(scale) A diag(scale), entry by entry, made once with Gershgorin's row sums, so that
  // each Lanczos product is a plain CSR product: with the filter's branches and the scale's
  // gathers in every product, AMG's 10 steps at poisson2d:1000 cost 3x a CG iteration each
  // (BENCHMARKS 20g). Not zero-filled: first touched by the threads that use it.
  const std::size_t nnz = A.values.size();
  const std::unique_ptr<double[]> S(steps > 0 ? new double[nnz] : nullptr);
  double gershgorin = 0;
#pragma omp parallel for schedule(static) reduction(max : gershgorin) if (worth_threads(n))
  for (index_t i = 0; i < n; ++i) {
    double s = 0;
    for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
      const double e = entry(i, k) * scale[i] * scale[A.col_idx[k]];
      if (S) S[std::size_t(k)] = e;
      s += std::abs(e);
    }
    gershgorin = std::max(gershgorin, s);
  }
  if (steps <= 0) return {gershgorin / 2, gershgorin, gershgorin, gershgorin};  // no estimate
  std::vector<double> alpha, beta;
  lanczos_steps(A, S.get(), start ? *start : lanczos_start(n), steps, alpha, beta);
  return interval_from_lanczos(alpha, beta, gershgorin);
}

Interval interval_from_lanczos(const std::vector<double>& alpha, const std::vector<double>& beta,
                               double gershgorin) {
  const auto [lo, hi] = ritz_extremes(alpha, beta);
  Interval s;
  s.ritz_max = hi;
  s.gershgorin = gershgorin;
  s.b = std::min(1.1 * hi, gershgorin);
  s.a = std::min(std::max(lo, s.b * 1e-8), 0.5 * s.b);
  return s;
}

std::vector<double> lanczos_start(index_t n, std::uint64_t seed) {
  std::vector<double> v(static_cast<std::size_t>(std::max<index_t>(n, 0)));
#pragma omp parallel for schedule(static) if (worth_threads(n))
  for (index_t i = 0; i < n; ++i) v[std::size_t(i)] = lanczos_start_entry(i, seed);
  const double norm = std::sqrt(ordered_sum(n, [&](index_t i) { return v[i] * v[i]; }));
#pragma omp parallel for schedule(static) if (worth_threads(n))
  for (index_t i = 0; i < n; ++i) v[std::size_t(i)] /= norm;
  return v;
}

std::pair<double, double> ritz_extremes(const std::vector<double>& alpha,
                                        const std::vector<double>& beta) {
  const Eigen::Index n = Eigen::Index(alpha.size());
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> ritz;
  ritz.computeFromTridiagonal(Eigen::Map<const Eigen::VectorXd>(alpha.data(), n),
                              Eigen::Map<const Eigen::VectorXd>(beta.data(), n - 1),
                              Eigen::EigenvaluesOnly);
  return {ritz.eigenvalues()(0), ritz.eigenvalues()(n - 1)};
}

}  // namespace cgs::precond
