// The 1D Poisson matrix tridiag(-1, 2, -1) of n rows, in the caller's own CSR arrays, solved for
// b = A * ones with Jacobi-preconditioned CG; then new values for the same pattern (2I + the
// same), solved again by the same analyzed solver. Exit 0 when both answers are all ones.
#include <cgsolve/api.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

int main() {
  const int n = 1000;
  std::vector<int> row_ptr{0}, col_idx;
  std::vector<double> values;
  for (int i = 0; i < n; ++i) {
    for (int j = i - 1; j <= i + 1; ++j)
      if (j >= 0 && j < n) col_idx.push_back(j), values.push_back(i == j ? 2.0 : -1.0);
    row_ptr.push_back(static_cast<int>(col_idx.size()));
  }
  cgsolve::CsrRef A;
  A.rows = A.cols = n;
  A.row_ptr = row_ptr.data();
  A.col_idx = col_idx.data();
  A.values = values.data();

  cgsolve::Options options;
  options.precond = "jacobi";
  options.tol = 1e-10;
  try {
    cgsolve::Solver solver(A, options);
    std::printf("plan: %s\n", solver.plan().summary.c_str());
    for (int pass = 0; pass < 2; ++pass) {
      std::vector<double> b(n), x(n);
      for (int i = 0; i < n; ++i)  // b = A * ones: the row sums
        for (int k = row_ptr[i]; k < row_ptr[i + 1]; ++k) b[i] += values[k];
      const cgsolve::Result r = solver.solve(b.data(), x.data());
      double error = 0;
      for (double xi : x) error = std::max(error, std::abs(xi - 1));
      std::printf("pass %d: %s after %ld iterations, residual %.2e, max |x - 1| = %.2e\n", pass,
                  r.status.c_str(), r.iterations, r.true_relative_residual, error);
      if (!r.converged || error > 1e-6) return 1;
      for (int i = 0; i < n; ++i)  // A + 2I: the diagonal entries
        for (int k = row_ptr[i]; k < row_ptr[i + 1]; ++k)
          if (col_idx[k] == i) values[k] += 2;
      solver.set_values(values.data());
    }
  } catch (const cgsolve::InputError& e) {
    std::fprintf(stderr, "bad input: %s\n", e.what());
    return 2;
  }
  return 0;
}
