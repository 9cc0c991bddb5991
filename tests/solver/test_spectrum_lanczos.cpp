// spectrum_bounds's Lanczos (Chebyshev's interval, AMG's damping of P): one thread team for all
// its steps with the vectors kept unnormalised (issue 52). Against a textbook Lanczos written here
// (unit vectors, three passes a step): the same tridiagonal's extremes to rounding; the same
// bits on one and on two threads; an invariant subspace ends it early with the exact value.
#include <doctest/doctest.h>
#include <omp.h>

#include <cmath>
#include <vector>

#include "formats/generators.hpp"
#include "solver/precond/amg_start.hpp"
#include "solver/precond/spectrum.hpp"
#include "test_matrices.hpp"

using namespace cgs;
using namespace cgs::testing;

namespace {

// `steps` textbook Lanczos steps on diag(scale) A diag(scale) from the unit vector v: the
// interval interval_from_lanczos makes of its tridiagonal.
precond::Interval textbook_lanczos(const CsrMatrix<double>& A, const std::vector<double>& scale,
                                   std::vector<double> v, int steps, double gershgorin) {
  const std::size_t n = v.size();
  std::vector<double> v_old(n, 0.0), y(n), alpha, beta;
  double beta_prev = 0;
  for (int j = 0; j < steps; ++j) {
    double a = 0;
    for (index_t i = 0; i < A.rows; ++i) {
      double s = 0;
      for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
        s += scale[i] * A.values[k] * scale[A.col_idx[k]] * v[A.col_idx[k]];
      y[i] = s;
      a += s * v[i];
    }
    double b = 0;
    for (std::size_t i = 0; i < n; ++i) {
      y[i] -= a * v[i] + beta_prev * v_old[i];
      b += y[i] * y[i];
    }
    b = std::sqrt(b);
    alpha.push_back(a);
    if (j + 1 == steps || b <= 1e-12 * std::abs(a)) break;
    beta.push_back(b);
    v_old = v;
    for (std::size_t i = 0; i < n; ++i) v[i] = y[i] / b;
    beta_prev = b;
  }
  return precond::interval_from_lanczos(alpha, beta, gershgorin);
}

std::vector<double> inverse_sqrt_diagonal(const CsrMatrix<double>& A) {
  std::vector<double> s(std::size_t(A.rows), 1.0);
  for (index_t i = 0; i < A.rows; ++i)
    for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
      if (A.col_idx[k] == i) s[std::size_t(i)] = 1 / std::sqrt(A.values[k]);
  return s;
}

}  // namespace

TEST_CASE(
    "spectrum: the one-team Lanczos is the textbook Lanczos to rounding, alike on 1 and 2 "
    "threads") {
  // Above worth_threads (100,000 rows), so that the team runs on two threads; and a small one.
  const CsrMatrix<double> matrices[] = {generate_matrix("gen:poisson2d:360"),
                                        generate_matrix("gen:poisson3d:12")};
  const int threads = omp_get_max_threads();
  for (const CsrMatrix<double>& A : matrices) {
    CAPTURE(A.rows);
    const std::vector<double> scale = inverse_sqrt_diagonal(A);
    const std::vector<double> start = precond::amg::hashed_lanczos_start(A.rows);
    double last = 0;  // the Ritz maximum grows with the Krylov space
    for (int steps : {1, 2, 10}) {
      CAPTURE(steps);
      omp_set_num_threads(1);
      const precond::Interval one = precond::spectrum_bounds(A, scale, steps, {}, &start);
      omp_set_num_threads(2);
      const precond::Interval two = precond::spectrum_bounds(A, scale, steps, {}, &start);
      omp_set_num_threads(threads);
      CHECK(one.ritz_max == two.ritz_max);  // bit for bit
      CHECK(one.a == two.a);
      const precond::Interval ref = textbook_lanczos(A, scale, start, steps, one.gershgorin);
      CHECK(one.ritz_max == doctest::Approx(ref.ritz_max).epsilon(1e-12));
      CHECK(one.a == doctest::Approx(ref.a).epsilon(1e-9));  // the smallest Ritz value, less sure
      // D^-1/2 A D^-1/2 of a Dirichlet Laplacian: its spectrum lies in (0, 2).
      CHECK(one.ritz_max < 2.0);
      CHECK(one.ritz_max > last);
      last = one.ritz_max;
      CHECK(one.b <= one.gershgorin);
    }
    CHECK(last > 1.8);  // 10 steps: near the top of the spectrum (2 - O(h^2))
  }
}

TEST_CASE("spectrum: an invariant subspace ends the Lanczos early with the exact eigenvalue") {
  // 3 I: every start vector is an eigenvector, so the first step leaves nothing (b = 0).
  const index_t n = 200001;
  CsrMatrix<double> A;
  A.rows = A.cols = n;
  A.row_ptr.resize(std::size_t(n) + 1);
  A.col_idx.resize(std::size_t(n));
  A.values.assign(std::size_t(n), 3.0);
  for (index_t i = 0; i <= n; ++i) A.row_ptr[std::size_t(i)] = i;
  for (index_t i = 0; i < n; ++i) A.col_idx[std::size_t(i)] = i;
  const precond::Interval s = precond::spectrum_bounds(A, std::vector<double>(n, 1.0), 10);
  CHECK(s.ritz_max == doctest::Approx(3.0).epsilon(1e-14));
  CHECK(s.gershgorin == 3.0);
  CHECK(s.b == doctest::Approx(3.0).epsilon(1e-14));  // 1.1 x 3 capped by Gershgorin's 3
}
