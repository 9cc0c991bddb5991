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
  const std::size_t size = static_cast<std::size_t>(n);
  // v_old, v: the last two Lanczos vectors; w / divisor: the next one (w the start vector and
  // divisor 1 at first, then w before its division by its norm); y: the product. A step is
  // three passes: v = w / divisor, the product with a = y.v, then y's orthogonalization with
  // its norm. (The division was once made inside the product, each term's w_j / divisor, to
  // save a barrier: the same bits, but a division a nonzero instead of a row; the spectra phase
  // of AMG's set-up on poisson2d:1000, medians of 3: 0.139-0.167 s that way,
  // 0.123-0.152 s this way, BENCHMARKS 20o.)
  std::vector<double> w = start ? *start : lanczos_start(n), v(size), v_old(size, 0.0), y(size);
  std::vector<double> alpha(static_cast<std::size_t>(steps));
  std::vector<double> beta(static_cast<std::size_t>(std::max(steps - 1, 0)));
  int done = 0;
  double beta_prev = 0, divisor = 1;
  for (int j = 0; j < steps; ++j) {
    // v = w / divisor, then y = S v and a = y.v in one pass (the sum in ordered_sum's fixed
    // order: the same bits on any thread count).
#pragma omp parallel for schedule(static) if (worth_threads(n))
    for (index_t i = 0; i < n; ++i) v[i] = w[i] / divisor;
    const double a = ordered_sum(n, [&](index_t i) {
      double s = 0;
      for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
        s += S[std::size_t(k)] * v[A.col_idx[k]];
      y[i] = s;
      return s * v[i];
    });
    double b = ordered_sum(n, [&](index_t i) {
      y[i] -= a * v[i] + beta_prev * v_old[i];
      return y[i] * y[i];
    });
    alpha[std::size_t(j)] = a;
    done = j + 1;
    b = std::sqrt(b);
    if (j + 1 == steps || b <= 1e-12 * std::abs(a)) break;  // an invariant subspace: exact
    beta[std::size_t(j)] = b;
    v_old.swap(v);  // v is rewritten as w / b by the next product
    w.swap(y);
    beta_prev = divisor = b;
  }
  alpha.resize(std::size_t(done));
  beta.resize(std::size_t(done - 1));
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
