#include "solver/solve.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>

#include "formats/convert.hpp"
#include "formats/row_order.hpp"
#include "solver/autotune.hpp"
#include "solver/cpu_ops.hpp"
#include "solver/omp_fused_cg.hpp"

namespace cgs {

std::string to_string(Preconditioner p) { return p == Preconditioner::jacobi ? "jacobi" : "none"; }

std::string to_string(CgStatus status) {
  switch (status) {
    case CgStatus::converged: return "converged";
    case CgStatus::max_iterations: return "not converged (maximum iterations reached)";
    case CgStatus::breakdown: return "breakdown: p'Ap <= 0, the matrix is not positive definite";
    case CgStatus::non_finite: return "breakdown: NaN or Inf appeared";
    case CgStatus::zero_rhs: return "converged (b = 0, so x = 0)";
  }
  return "?";
}

double SolveReport::spmv_gflops() const {
  return times.spmv_median_seconds > 0 ? 2.0 * nnz / times.spmv_median_seconds / 1e9 : 0.0;
}

std::vector<double> multiply(const CsrMatrix<double>& A, const std::vector<double>& x) {
  std::vector<double> y(A.rows, 0.0);
#pragma omp parallel for schedule(static)
  for (index_t r = 0; r < A.rows; ++r) {
    double sum = 0;
    for (index_t k = A.row_ptr[r]; k < A.row_ptr[r + 1]; ++k) sum += A.values[k] * x[A.col_idx[k]];
    y[r] = sum;
  }
  return y;
}

int effective_check_every(const SolveOptions& options) {
  if (options.cg.check_every > 0) return options.cg.check_every;
  return options.backend.device == Device::gpu ? 16 : 1;
}

double norm2(const std::vector<double>& v) {
  double sum = 0;
  for (double e : v) sum += e * e;
  return std::sqrt(sum);
}

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void check_system(const CsrMatrix<double>& A, const std::vector<double>& b,
                  std::vector<double>& x) {
  if (A.rows != A.cols)
    throw InputError("CG needs a square matrix, got " + std::to_string(A.rows) + " x " +
                     std::to_string(A.cols));
  if (b.size() != std::size_t(A.rows))
    throw InputError("the right-hand side has " + std::to_string(b.size()) +
                     " entries but the matrix has " + std::to_string(A.rows) + " rows");
  if (x.empty()) x.assign(A.rows, 0.0);
  if (x.size() != std::size_t(A.rows))
    throw InputError("the initial guess has " + std::to_string(x.size()) +
                     " entries but the matrix has " + std::to_string(A.rows) + " rows");
}

// 1 / diag(A) for Jacobi, in P's row order; a non-positive diagonal means A is not SPD.
std::vector<double> inverse_diagonal(const CsrMatrix<double>& A, const RowPermutation& P) {
  std::vector<double> d = diagonal(A);
  for (std::size_t i = 0; i < d.size(); ++i) {
    if (!(d[i] > 0)) {
      throw InputError("Jacobi preconditioning needs a positive diagonal, but A(" +
                       std::to_string(i + 1) + "," + std::to_string(i + 1) +
                       ") = " + std::to_string(d[i]) + ": the matrix is not SPD");
    }
    d[i] = 1.0 / d[i];
  }
  return P.empty() ? d : P.to_new(d);
}

template <typename T>
std::vector<T> cast(const std::vector<double>& v) {
  return std::vector<T>(v.begin(), v.end());
}

void summarise_spmv_times(const std::vector<double>& times, SolveTimes& t) {
  if (times.empty()) return;
  std::vector<double> sorted = times;
  std::sort(sorted.begin(), sorted.end());
  t.spmv_total_seconds = std::accumulate(sorted.begin(), sorted.end(), 0.0);
  t.spmv_mean_seconds = t.spmv_total_seconds / sorted.size();
  t.spmv_median_seconds = sorted[sorted.size() / 2];
  t.spmv_min_seconds = sorted.front();
}

// The generic path: vectors in the device's memory (copied in once, x copied out once) and the
// CG of solver/cg.hpp driving the device's VectorOps.
template <typename T>
std::vector<double> solve_with_vector_ops(SpmvBackend<T>& backend, const std::vector<double>& b,
                                          const std::vector<double>& x0,
                                          const std::vector<double>& inv_diag,
                                          const SolveOptions& options, SolveReport& report) {
  SolveTimes& times = report.times;
  const std::size_t n = b.size();
  auto ops = make_vector_ops<T>(options.backend.device, n, options.backend.threads);
  auto start = Clock::now();
  DeviceVector<T> b_dev(*ops, n), x_dev(*ops, n), inv_dev(*ops, inv_diag.size());
  ops->upload(cast<T>(b).data(), b_dev.data(), n);
  ops->upload(cast<T>(x0).data(), x_dev.data(), n);
  if (!inv_diag.empty()) ops->upload(cast<T>(inv_diag).data(), inv_dev.data(), n);
  times.upload_seconds = since(start);

  CgOptions cg = options.cg;
  cg.check_every = effective_check_every(options);
  const T* inv = inv_diag.empty() ? nullptr : inv_dev.data();
  std::unique_ptr<FusedCg<T>> fused;
  report.cg_loop = "generic";
  if (options.backend.device == Device::gpu && options.gpu_loop != GpuLoop::generic) {
    fused = make_fused_cg(backend, options.gpu_loop, &report.cg_loop_note);
  }
  if (fused) {
    report.cg_loop = to_string(fused->loop());
    report.cg = fused->solve(inv, b_dev.data(), x_dev.data(), cg);
  } else {
    report.cg = conjugate_gradient(backend, *ops, inv, b_dev.data(), x_dev.data(), cg);
  }

  start = Clock::now();
  std::vector<T> x_out(n);
  ops->download(x_dev.data(), x_out.data(), n);
  times.download_seconds = since(start);
  return std::vector<double>(x_out.begin(), x_out.end());
}

template <typename T>
SolveReport solve_in(const CsrMatrix<double>& A, const std::vector<double>& b,
                     std::vector<double>& x, const SolveOptions& options, BuiltBackend<T>& built) {
  SolveReport report;
  report.nnz = A.nnz();
  report.times.sort_seconds = built.sort_seconds;
  report.times.convert_seconds = built.convert_seconds;
  std::unique_ptr<SpmvBackend<T>>& backend = built.backend;
  report.backend_name = backend->name();

  // The backend holds P A P^T (P empty: file order): b and x go in permuted, x comes back.
  const RowPermutation& P = built.permutation;
  const std::vector<double> b_in = P.empty() ? b : P.to_new(b);
  const std::vector<double> x_in = P.empty() ? x : P.to_new(x);
  const bool jacobi = options.preconditioner == Preconditioner::jacobi;
  const std::vector<double> inv_diag = jacobi ? inverse_diagonal(A, P) : std::vector<double>{};
  if (options.backend.device != Device::gpu && options.fused_cpu_loop &&
      has_fused_cpu_loop(*backend)) {
    std::vector<T> b_host = cast<T>(b_in), x_host = cast<T>(x_in), inv_host = cast<T>(inv_diag);
    report.cg =
        omp_fused_conjugate_gradient(*backend, jacobi ? inv_host.data() : nullptr, b_host.data(),
                                     x_host.data(), options.cg, &report.cg_loop);
    x.assign(x_host.begin(), x_host.end());
  } else {
    x = solve_with_vector_ops(*backend, b_in, x_in, inv_diag, options, report);
    report.times.upload_seconds += backend->transfer_seconds();
  }
  if (!P.empty()) x = P.to_original(x);

  report.times.solve_seconds = report.cg.solve_seconds;
  summarise_spmv_times(report.cg.spmv_seconds, report.times);
  if (report.cg.iterations > 0)
    report.times.other_per_iteration_seconds =
        (report.times.solve_seconds - report.times.spmv_total_seconds) / report.cg.iterations;

  if (!options.true_residual) {
    report.true_relative_residual = std::numeric_limits<double>::quiet_NaN();
    return report;
  }
  const double b_norm = norm2(b);
  std::vector<double> residual = multiply(A, x);
  for (std::size_t i = 0; i < residual.size(); ++i) residual[i] = b[i] - residual[i];
  report.true_relative_residual = b_norm > 0 ? norm2(residual) / b_norm : norm2(residual);
  return report;
}

template <typename T>
SolveReport build_and_solve(const CsrMatrix<double>& A, const std::vector<double>& b,
                            std::vector<double>& x, const SolveOptions& options) {
  BuiltBackend<T> built = build_backend<T>(A, options);
  return solve_in(A, b, x, options, built);
}

}  // namespace

template <typename T>
BuiltBackend<T> build_backend(const CsrMatrix<double>& A, const SolveOptions& options) {
  // Row sorting: P A P^T once, before anything else (see formats/row_order.hpp).
  BuiltBackend<T> built;
  auto start = Clock::now();
  CsrMatrix<double> sorted;
  if (options.sort_rows) {
    built.permutation = sort_rows_by_length(A);
    sorted = permute_symmetric(A, built.permutation);
  }
  const CsrMatrix<double>& system = options.sort_rows ? sorted : A;
  built.sort_seconds = since(start);

  start = Clock::now();
  if constexpr (std::is_same_v<T, double>)
    built.backend = make_backend(system, options.backend);
  else
    built.backend = make_backend(cast_values<T>(system), options.backend);
  built.convert_seconds = since(start) - built.backend->transfer_seconds();
  return built;
}

template <typename T>
SolveReport solve_with_backend(const CsrMatrix<double>& A, const std::vector<double>& b,
                               std::vector<double>& x, const SolveOptions& options,
                               BuiltBackend<T>& built) {
  check_system(A, b, x);
  return solve_in(A, b, x, options, built);
}

template BuiltBackend<float> build_backend(const CsrMatrix<double>&, const SolveOptions&);
template BuiltBackend<double> build_backend(const CsrMatrix<double>&, const SolveOptions&);
template SolveReport solve_with_backend(const CsrMatrix<double>&, const std::vector<double>&,
                                        std::vector<double>&, const SolveOptions&,
                                        BuiltBackend<float>&);
template SolveReport solve_with_backend(const CsrMatrix<double>&, const std::vector<double>&,
                                        std::vector<double>&, const SolveOptions&,
                                        BuiltBackend<double>&);

SolveReport solve_system(const CsrMatrix<double>& A, const std::vector<double>& b,
                         std::vector<double>& x, const SolveOptions& options) {
  check_system(A, b, x);
  const bool single = options.precision == Precision::single;
  if (!options.auto_format && !options.auto_kernel)
    return single ? build_and_solve<float>(A, b, x, options)
                  : build_and_solve<double>(A, b, x, options);
  // The inspector decides and the solve runs on the winner it built, exactly as if its choice
  // had been asked for (same backend, same row order), without building it again.
  AutoChoice choice = choose_backend(A, options);
  SolveOptions chosen = options;
  chosen.backend = choice.backend;
  chosen.sort_rows = choice.sort_rows;
  SolveReport report = single ? solve_in(A, b, x, chosen, choice.built_float)
                              : solve_in(A, b, x, chosen, choice.built_double);
  report.autotuned = true;
  report.auto_format = choice.backend.format;
  report.auto_kernel = choice.backend.kernel;
  report.auto_sort_rows = choice.sort_rows;
  report.auto_reason = choice.reason;
  report.times.autotune_seconds = choice.seconds;
  report.times.thread_start_seconds = choice.thread_start_seconds;
  return report;
}

}  // namespace cgs
