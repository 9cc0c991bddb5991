// Chebyshev: z = p(D^-1 A) D^-1 r, p of degree d - 1 the Chebyshev polynomial that best
// approximates 1/lambda on [a, b] (d steps of the Chebyshev iteration for A z = r from z = 0,
// Jacobi-scaled; Saad, Iterative Methods, alg. 12.1). Every step is one SpMV-like operation,
// so it runs inside the fused loops as easily as Jacobi.
//
// [a, b] comes from 40 Lanczos steps on D^-1/2 A D^-1/2: b is 1.1 times the largest Ritz value
// (never above the Gershgorin bound), because M must stay positive definite for CG and p goes
// negative beyond b; a is the smallest Ritz value (above the true smallest eigenvalue, where p
// is still positive, so only the quality suffers, never the definiteness).
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>

#include "formats/convert.hpp"
#include "formats/types.hpp"
#include "solver/precond/builtin.hpp"
#include "solver/precond/sparse_parts.hpp"

namespace cgs::precond {
namespace {

struct Interval {
  double a, b, ritz_max, gershgorin;
};

// Below this many rows a loop runs on the calling thread: forking a team costs more than the
// rows, and the Lanczos estimate forks ~160 times (fuzz_cli_options: a 16-row set-up took 5.6 s
// of waiting for descheduled team threads on a loaded 2-core machine).
constexpr index_t kParallelRows = 4096;

// sum over i < n of term(i), on every host core, in the same order whatever the thread count
// or timing (a fixed split into chunks, summed in chunk order): the interval, and with it every
// coefficient, comes out bit for bit the same in each set-up, so that a GPU and a host set-up
// of one matrix apply the same polynomial.
template <typename Term>
double ordered_sum(index_t n, Term term) {
  constexpr index_t kChunks = 256;
  double partial[kChunks] = {};
  const index_t size = (n + kChunks - 1) / kChunks;
#pragma omp parallel for schedule(static) if (n >= kParallelRows)
  for (index_t c = 0; c < kChunks; ++c) {
    double s = 0;
    for (index_t i = c * size; i < std::min(n, (c + 1) * size); ++i) s += term(i);
    partial[c] = s;
  }
  double total = 0;
  for (double s : partial) total += s;
  return total;
}

// The set-up runs on every host core whatever device solves: 40 products of a 9M-row matrix on
// one core took 6 s (issue 21).
Interval spectrum_bounds(const CsrMatrix<double>& A, const std::vector<double>& scale) {
  const index_t n = A.rows;
  auto multiply = [&](const std::vector<double>& x, std::vector<double>& y) {
#pragma omp parallel for schedule(static) if (n >= kParallelRows)
    for (index_t i = 0; i < n; ++i) {
      double s = 0;
      for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
        s += A.values[k] * scale[A.col_idx[k]] * x[A.col_idx[k]];
      y[i] = scale[i] * s;
    }
  };
  double gershgorin = 0;
#pragma omp parallel for schedule(static) reduction(max : gershgorin) if (n >= kParallelRows)
  for (index_t i = 0; i < n; ++i) {
    double s = 0;
    for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
      s += std::abs(A.values[k]) * scale[i] * scale[A.col_idx[k]];
    gershgorin = std::max(gershgorin, s);
  }
  const int steps = int(std::min<index_t>(n, 40));
  const std::size_t size = static_cast<std::size_t>(n);
  std::vector<double> v(size), v_old(size, 0.0), w(size);
  std::mt19937_64 rng(20261123);
  std::uniform_real_distribution<double> uniform(-1, 1);
  double norm = 0;
  for (double& x : v) {
    x = uniform(rng);
    norm += x * x;
  }
  for (double& x : v) x /= std::sqrt(norm);
  Eigen::VectorXd alpha(steps), beta(std::max(steps - 1, 0));
  int done = 0;
  double beta_prev = 0;
  for (int j = 0; j < steps; ++j) {
    multiply(v, w);
    const double a = ordered_sum(n, [&](index_t i) { return w[i] * v[i]; });
    double b = ordered_sum(n, [&](index_t i) {
      w[i] -= a * v[i] + beta_prev * v_old[i];
      return w[i] * w[i];
    });
    alpha(j) = a;
    done = j + 1;
    b = std::sqrt(b);
    if (j + 1 == steps || b <= 1e-12 * std::abs(a)) break;  // an invariant subspace: exact
    beta(j) = b;
    v_old.swap(v);
#pragma omp parallel for schedule(static) if (n >= kParallelRows)
    for (index_t i = 0; i < n; ++i) v[i] = w[i] / b;
    beta_prev = b;
  }
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> ritz;
  ritz.computeFromTridiagonal(alpha.head(done), beta.head(std::max(done - 1, 0)),
                              Eigen::EigenvaluesOnly);
  const double lo = ritz.eigenvalues()(0), hi = ritz.eigenvalues()(done - 1);
  Interval s;
  s.ritz_max = hi;
  s.gershgorin = gershgorin;
  s.b = std::min(1.1 * hi, gershgorin);
  s.a = std::min(std::max(lo, s.b * 1e-8), 0.5 * s.b);
  return s;
}

template <typename T>
class Chebyshev final : public Preconditioner<T> {
 public:
  Chebyshev(Device device, int threads, int degree)
      : Preconditioner<T>(device, threads, false), degree_(degree) {}
  std::string name() const override { return "cheb:" + std::to_string(degree_); }

 protected:
  void analyze_pattern(const CsrMatrix<double>&) override {}

  void compute_values(const CsrMatrix<double>& A, ProgramSpec<T>& spec) override {
    const std::vector<double> d = diagonal(A);
    std::vector<double> scale(d.size()), inverse(d.size());
    for (std::size_t i = 0; i < d.size(); ++i) {
      scale[i] = 1 / std::sqrt(d[i]);
      inverse[i] = 1 / d[i];
    }
    const Interval s = spectrum_bounds(A, scale);
    std::ostringstream what;
    what.precision(17);  // exact: a test rebuilds the polynomial from these
    what << "[" << s.a << ", " << s.b << "] (largest Ritz value " << s.ritz_max << ", Gershgorin "
         << s.gershgorin << ")";
    this->report_.set_fact("interval", what.str());
    const std::vector<OpSpec> ops = steps(spec, A, s, inverse);
    if (!spec.ops.empty()) {
      spec.value_arrays[inverse_] = cast_to<T>(inverse);
      spec.ops = ops;  // new coefficients for the new [a, b]: the seam places them again
      return;
    }
    spec.ops = ops;
  }

 private:
  // Op 0: d0 = D^-1 r / theta (z itself when d = 1); op k = 1 .. d-1: res_k = res_{k-1} - A
  // d_{k-1}, d_k = rho_k rho_{k-1} d_{k-1} + 2 rho_k / delta D^-1 res_k, z += d_k.
  std::vector<OpSpec> steps(ProgramSpec<T>& spec, const CsrMatrix<double>& A, const Interval& s,
                            const std::vector<double>& inverse) {
    const bool first_time = spec.ops.empty();
    if (first_time) {
      inverse_ = spec.add_values(cast_to<T>(inverse));
      if (degree_ > 1) {
        a_ptr_ = spec.add_indices(A.row_ptr);
        a_cols_ = spec.add_indices(A.col_idx);
        a_values_ = spec.add_values(cast_to<T>(A.values));
        residual_ = spec.add_work(std::size_t(A.rows));
        direction_[0] = spec.add_work(std::size_t(A.rows));
        direction_[1] = spec.add_work(std::size_t(A.rows));
      }
    } else if (degree_ > 1) {
      spec.value_arrays[a_values_] = cast_to<T>(A.values);
    }
    const double theta = (s.b + s.a) / 2, delta = (s.b - s.a) / 2, sigma = theta / delta;
    std::vector<OpSpec> ops;
    OpSpec start;
    start.kind = OpKind::product;
    start.items = A.rows;
    start.v = kSlotR;
    start.gamma = 1 / theta;
    start.d = inverse_;
    start.y = degree_ == 1 ? kSlotZ : direction_[0];
    start.dot = degree_ == 1;
    ops.push_back(start);
    double rho_prev = 1 / sigma;
    for (int k = 1; k < degree_; ++k) {
      const double rho = 1 / (2 * sigma - rho_prev);
      OpSpec op;
      op.kind = OpKind::chebyshev_step;
      op.items = A.rows;
      op.row_ptr = a_ptr_;
      op.col_idx = a_cols_;
      op.values = a_values_;
      op.d = inverse_;
      op.x = direction_[(k - 1) % 2];
      op.y = direction_[k % 2];
      op.v = k == 1 ? kSlotR : residual_;
      op.t = residual_;
      op.u = k == 1 ? direction_[0] : kSlotZ;
      op.w = kSlotZ;
      op.alpha = rho * rho_prev;
      op.beta = 2 * rho / delta;
      op.dot = k + 1 == degree_;
      ops.push_back(op);
      rho_prev = rho;
    }
    return ops;
  }

  int degree_;
  int inverse_ = kNoArray, a_ptr_ = kNoArray, a_cols_ = kNoArray, a_values_ = kNoArray;
  int residual_ = kNoSlot, direction_[2] = {kNoSlot, kNoSlot};
};

}  // namespace

template <typename T>
std::unique_ptr<Preconditioner<T>> make_chebyshev(const PrecondSpec& spec, Device device,
                                                  int threads) {
  return std::make_unique<Chebyshev<T>>(device, threads, integer_argument(spec, 4, 1, 64));
}

template std::unique_ptr<Preconditioner<float>> make_chebyshev(const PrecondSpec&, Device, int);
template std::unique_ptr<Preconditioner<double>> make_chebyshev(const PrecondSpec&, Device, int);

}  // namespace cgs::precond
