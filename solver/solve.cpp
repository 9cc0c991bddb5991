#include "solver/solve.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>

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

void check_system(const CsrMatrix<double>& A, const std::vector<double>& b) {
  if (A.rows != A.cols)
    throw InputError("CG needs a square matrix, got " + std::to_string(A.rows) + " x " +
                     std::to_string(A.cols));
  if (b.size() != std::size_t(A.rows))
    throw InputError("the right-hand side has " + std::to_string(b.size()) +
                     " entries but the matrix has " + std::to_string(A.rows) + " rows");
}

void check_guess(const CsrMatrix<double>& A, std::vector<double>& x) {
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

// The solve's times that follow from the CG result.
void summarise_cg_times(SolveReport& report) {
  SolveTimes& times = report.times;
  times.solve_seconds = report.cg.solve_seconds;
  summarise_spmv_times(report.cg.spmv_seconds, times);
  if (report.cg.iterations > 0)
    times.other_per_iteration_seconds =
        (times.solve_seconds - times.spmv_total_seconds) / report.cg.iterations;
}

// ||b - A x|| / ||b|| on the host in double, against the original matrix.
double true_relative_residual(const CsrMatrix<double>& A, const std::vector<double>& b,
                              const std::vector<double>& x) {
  const double b_norm = norm2(b);
  std::vector<double> residual = multiply(A, x);
  for (std::size_t i = 0; i < residual.size(); ++i) residual[i] = b[i] - residual[i];
  return b_norm > 0 ? norm2(residual) / b_norm : norm2(residual);
}

// One run of a prepared solve: the path of every solve but the inspector's timing ones.
template <typename T>
SolveReport solve_in(const CsrMatrix<double>& A, const std::vector<double>& b,
                     std::vector<double>& x, const SolveOptions& options, BuiltBackend<T>& built) {
  return PreparedSolve<T>(A, b, options, built).run(x);
}

template <typename T>
SolveReport build_and_solve(const CsrMatrix<double>& A, const std::vector<double>& b,
                            std::vector<double>& x, const SolveOptions& options) {
  BuiltBackend<T> built = build_backend<T>(A, options);
  return solve_in(A, b, x, options, built);
}

}  // namespace

namespace detail {

// The CG loop of a PreparedSolve with b and 1/diag(A) in place: run() takes the initial guess
// in the backend's row order, fills the report's cg, cg_loop(_note), upload and download times
// and returns x in that order.
template <typename T>
class PreparedLoop {
 public:
  virtual ~PreparedLoop() = default;
  virtual std::vector<double> run(const std::vector<double>& x0, SolveReport& report) = 0;
};

}  // namespace detail

namespace {

// The fused CPU loops (solver/omp_fused_cg.hpp) work on host vectors in precision T: b and
// 1/diag(A) are cast once, x per run; serial or team is decided once (it may time both).
template <typename T>
class HostFusedLoop final : public detail::PreparedLoop<T> {
 public:
  HostFusedLoop(SpmvBackend<T>& backend, const std::vector<double>& b,
                const std::vector<double>& inv_diag, const SolveOptions& options)
      : backend_(backend),
        b_(cast<T>(b)),
        inv_diag_(cast<T>(inv_diag)),
        cg_(options.cg),
        loop_(options.resolved_cpu_loop
                  ? *options.resolved_cpu_loop
                  : resolve_fused_cpu_loop(backend, inv(), b_.data(), options.fused_cpu_choice)) {}

  std::vector<double> run(const std::vector<double>& x0, SolveReport& report) override {
    std::vector<T> x = cast<T>(x0);
    report.cg =
        run_fused_cpu_loop(backend_, loop_, inv(), b_.data(), x.data(), cg_, &report.cg_loop);
    return std::vector<double>(x.begin(), x.end());
  }

 private:
  const T* inv() const { return inv_diag_.empty() ? nullptr : inv_diag_.data(); }

  SpmvBackend<T>& backend_;
  const std::vector<T> b_, inv_diag_;
  const CgOptions cg_;
  const ResolvedCpuLoop loop_;
};

// Vectors in the device's memory (b and 1/diag(A) copied in once, x in and out per run),
// driven by a fused GPU loop (built once: its work vectors and pinned memory are reused) or by
// the CG of solver/cg.hpp through the device's VectorOps.
template <typename T>
class DeviceLoop final : public detail::PreparedLoop<T> {
 public:
  DeviceLoop(SpmvBackend<T>& backend, const std::vector<double>& b,
             const std::vector<double>& inv_diag, const SolveOptions& options)
      : backend_(backend),
        ops_(make_vector_ops<T>(options.backend.device, b.size(), options.backend.threads)),
        cg_(options.cg) {
    cg_.check_every = effective_check_every(options);
    upload_constants(b, inv_diag);
    if (options.backend.device == Device::gpu && options.gpu_loop != GpuLoop::generic)
      fused_ = make_fused_cg(backend, options.gpu_loop, &fused_note_);
  }

  std::vector<double> run(const std::vector<double>& x0, SolveReport& report) override {
    const std::size_t n = x0.size();
    auto start = Clock::now();
    ops_->upload(cast<T>(x0).data(), x_->data(), n);
    report.times.upload_seconds = constants_upload_seconds_ + since(start);
    const T* inv = inv_diag_->size() > 0 ? inv_diag_->data() : nullptr;
    report.cg_loop = fused_ ? to_string(fused_->loop()) : "generic";
    report.cg_loop_note = fused_note_;
    report.cg = fused_ ? fused_->solve(inv, b_->data(), x_->data(), cg_)
                       : conjugate_gradient(backend_, *ops_, inv, b_->data(), x_->data(), cg_);
    report.times.upload_seconds += backend_.transfer_seconds();

    start = Clock::now();
    std::vector<T> x(n);
    ops_->download(x_->data(), x.data(), n);
    report.times.download_seconds = since(start);
    return std::vector<double>(x.begin(), x.end());
  }

 private:
  // Allocating the vectors counts as uploading, as it always has in the report.
  void upload_constants(const std::vector<double>& b, const std::vector<double>& inv_diag) {
    const auto start = Clock::now();
    b_.emplace(*ops_, b.size());
    x_.emplace(*ops_, b.size());
    inv_diag_.emplace(*ops_, inv_diag.size());
    ops_->upload(cast<T>(b).data(), b_->data(), b.size());
    if (!inv_diag.empty()) ops_->upload(cast<T>(inv_diag).data(), inv_diag_->data(), b.size());
    constants_upload_seconds_ = since(start);
  }

  SpmvBackend<T>& backend_;
  std::unique_ptr<VectorOps<T>> ops_;  // before the vectors, which it releases
  std::optional<DeviceVector<T>> b_, x_, inv_diag_;
  double constants_upload_seconds_ = 0;
  CgOptions cg_;
  std::unique_ptr<FusedCg<T>> fused_;  // null: the generic loop
  std::string fused_note_;             // why not, when a fused loop was asked for
};

}  // namespace

template <typename T>
PreparedSolve<T>::PreparedSolve(const CsrMatrix<double>& A, const std::vector<double>& b,
                                const SolveOptions& options, BuiltBackend<T>& built)
    : A_(A), b_(b), built_(built), true_residual_(options.true_residual) {
  check_system(A, b);
  // The backend holds P A P^T (P empty: file order): b and x go in permuted, x comes back.
  const RowPermutation& P = built.permutation;
  const std::vector<double> b_in = P.empty() ? b : P.to_new(b);
  const bool jacobi = options.preconditioner == Preconditioner::jacobi;
  const std::vector<double> inv_diag = jacobi ? inverse_diagonal(A, P) : std::vector<double>{};
  SpmvBackend<T>& backend = *built.backend;
  if (options.backend.device != Device::gpu && options.fused_cpu_loop &&
      has_fused_cpu_loop(backend))
    loop_ = std::make_unique<HostFusedLoop<T>>(backend, b_in, inv_diag, options);
  else
    loop_ = std::make_unique<DeviceLoop<T>>(backend, b_in, inv_diag, options);
}

template <typename T>
PreparedSolve<T>::~PreparedSolve() = default;

template <typename T>
SolveReport PreparedSolve<T>::run(std::vector<double>& x) {
  check_guess(A_, x);
  SolveReport report;
  report.nnz = A_.nnz();
  report.times.sort_seconds = built_.sort_seconds;
  report.times.convert_seconds = built_.convert_seconds;
  report.backend_name = built_.backend->name();
  const RowPermutation& P = built_.permutation;
  x = loop_->run(P.empty() ? x : P.to_new(x), report);
  if (!P.empty()) x = P.to_original(x);
  summarise_cg_times(report);
  report.true_relative_residual =
      true_residual_ ? true_relative_residual(A_, b_, x) : std::numeric_limits<double>::quiet_NaN();
  return report;
}

template class PreparedSolve<float>;
template class PreparedSolve<double>;

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

namespace {

// The solve of solve_system in A's own order (after the optional reverse Cuthill-McKee).
SolveReport solve_in_order(const CsrMatrix<double>& A, const std::vector<double>& b,
                           std::vector<double>& x, const SolveOptions& options) {
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
  chosen.resolved_cpu_loop = choice.cpu_loop;
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

}  // namespace

SolveReport solve_system(const CsrMatrix<double>& A, const std::vector<double>& b,
                         std::vector<double>& x, const SolveOptions& options) {
  check_system(A, b);  // before building or inspecting anything
  check_guess(A, x);
  if (!options.reorder_rcm) return solve_in_order(A, b, x, options);
  // Reverse Cuthill-McKee: everything below (sorting by length, the inspector, the backend)
  // sees P A P^T, b and x0 come in permuted, x goes out in the file's order.
  const auto start = Clock::now();
  const RowPermutation P = reverse_cuthill_mckee(A);
  const CsrMatrix<double> reordered = permute_symmetric(A, P);
  const double reorder_seconds = since(start);
  std::vector<double> x_new = x.empty() ? x : P.to_new(x);
  SolveReport report = solve_in_order(reordered, P.to_new(b), x_new, options);
  x = P.to_original(x_new);
  report.times.sort_seconds += reorder_seconds;
  return report;
}

}  // namespace cgs
