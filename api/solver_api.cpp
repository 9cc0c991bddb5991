// cgsolve/api.hpp over the staged solver (solver/solver.hpp, solver/solve.hpp): the caller's CSR
// arrays checked and copied into the engine's CsrMatrix, the options resolved by the program's
// own option definitions (app/cli_options.hpp), the report turned into a Result.
#include <algorithm>
#include <cstdio>
#include <limits>

#include "api/api_common.hpp"
#include "app/cli_options.hpp"
#include "formats/convert.hpp"
#include "solver/solve.hpp"
#include "spmv/cuda/cuda_backends.hpp"

namespace cgsolve {

namespace detail {

std::string number_text(double v) {
  char text[40];
  std::snprintf(text, sizeof text, "%.17g", v);
  return text;
}

}  // namespace detail

namespace {

using cgs::index_t;

template <typename I>
index_t index_at(const void* p, std::int64_t k) {
  return static_cast<index_t>(static_cast<const I*>(p)[k]);
}

template <typename I>
void copy_indices(const CsrRef& A, cgs::CsrMatrix<double>& M) {
  const I* row_ptr = static_cast<const I*>(A.row_ptr);
  const I* col_idx = static_cast<const I*>(A.col_idx);
  if (row_ptr[0] != 0) throw InputError("the CSR row pointers do not start at 0");
  for (std::int64_t i = 0; i < A.rows; ++i)
    if (row_ptr[i + 1] < row_ptr[i])
      throw InputError("the CSR row pointers decrease at row " + std::to_string(i + 1));
  const std::int64_t nnz = row_ptr[A.rows];
  if (nnz > std::numeric_limits<index_t>::max())
    throw InputError("the matrix has " + std::to_string(nnz) +
                     " stored entries; cgsolve's formats take at most 2^31 - 1");
  M.row_ptr.assign(row_ptr, row_ptr + A.rows + 1);
  M.col_idx.resize(std::size_t(nnz));
  for (std::int64_t i = 0; i < A.rows; ++i)
    for (I k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
      const I c = col_idx[k];
      if (c < 0 || c >= A.cols)
        throw InputError("column index " + std::to_string(c) + " out of range in row " +
                         std::to_string(i + 1));
      if (k > row_ptr[i] && c <= col_idx[k - 1])
        throw InputError("the column indices of row " + std::to_string(i + 1) +
                         " are not strictly ascending (sort them and sum duplicates)");
      M.col_idx[std::size_t(k)] = static_cast<index_t>(c);
    }
}

std::int64_t nnz_of(const CsrRef& A) {
  return A.index_type == IndexType::int32 ? index_at<std::int32_t>(A.row_ptr, A.rows)
                                          : static_cast<const std::int64_t*>(A.row_ptr)[A.rows];
}

// The caller's arrays as the engine's matrix (checked: the engine's kernels trust it).
cgs::CsrMatrix<double> to_matrix(const CsrRef& A) {
  if (A.rows < 0 || A.cols < 0 || A.rows > std::numeric_limits<index_t>::max() ||
      A.cols > std::numeric_limits<index_t>::max())
    throw InputError("the matrix is " + std::to_string(A.rows) + " x " + std::to_string(A.cols) +
                     "; cgsolve takes at most 2^31 - 1 rows and columns");
  if (!A.row_ptr || (A.rows > 0 && (!A.col_idx || !A.values)))
    throw InputError("the CSR arrays are missing (null pointers)");
  cgs::CsrMatrix<double> M;
  M.rows = static_cast<index_t>(A.rows);
  M.cols = static_cast<index_t>(A.cols);
  if (A.index_type == IndexType::int32)
    copy_indices<std::int32_t>(A, M);
  else
    copy_indices<std::int64_t>(A, M);
  M.values.assign(A.values, A.values + M.col_idx.size());
  return M;
}

// As the cgsolve program refuses a matrix (app/cgsolve.cpp, require_spd_candidate).
void require_spd_candidate(const cgs::CsrMatrix<double>& A) {
  if (A.rows != A.cols)
    throw InputError("the matrix is " + std::to_string(A.rows) + " x " + std::to_string(A.cols) +
                     "; CG needs a square SPD matrix");
  index_t row = 0, col = 0;
  if (!cgs::is_symmetric(A, 1e-12, &row, &col))
    throw InputError("the matrix is not symmetric (A(" + std::to_string(row + 1) + "," +
                     std::to_string(col + 1) + ") differs from A(" + std::to_string(col + 1) +
                     "," + std::to_string(row + 1) + ")); CG needs an SPD matrix");
}

// The options as the program's command line, parsed by its own definitions.
cgs::SolveRequest to_request(const Options& o) {
  detail::Args args = {{"--format", o.format},       {"--device", o.device},
                       {"--precond", o.precond},     {"--precision", o.precision},
                       {"--cpu-loop", o.cpu_loop},   {"--gpu-loop", o.gpu_loop},
                       {"--threads", std::to_string(o.threads)},
                       {"--tol", detail::number_text(o.tol)},
                       {"--atol", detail::number_text(o.atol)},
                       {"--max-iters", std::to_string(o.max_iters)},
                       {"--check-every", std::to_string(o.check_every)}};
  if (!o.kernel.empty()) args.push_back({"--kernel", o.kernel});
  if (o.sort_rows) args.push_back({"--sort-rows", ""});
  if (o.rcm) args.push_back({*o.rcm ? "--rcm" : "--no-rcm", ""});
  args.insert(args.end(), o.more.begin(), o.more.end());
  CLI::App app;
  cgs::SolverCli cli;
  cgs::add_solver_options(app, cli);
  detail::parse_args(app, args);
  cli.resolve();
  cli.request.cg.record_history = o.record_history;
  if (cli.request.backend.device == cgs::Device::gpu) {
    std::string why;
    if (!cgs::cuda_device_available(&why)) throw cgs::DeviceError(why);
  }
  return cli.request;
}

// The device in the options' words (Options::device: cpu, serial, gpu), not the backends' names
// (omp, cuda): a caller compares what ran with what it asked.
std::string device_word(cgs::Device d) {
  switch (d) {
    case cgs::Device::serial: return "serial";
    case cgs::Device::omp: return "cpu";
    case cgs::Device::gpu: return "gpu";
  }
  return "?";
}

PlanInfo plan_info(const cgs::Plan& p) {
  PlanInfo info;
  info.format = cgs::to_string(p.format);
  info.device = device_word(p.device);
  info.loop = cgs::to_string(p.loop);
  info.precond = p.precond.text();
  info.precision = cgs::to_string(p.precision);
  info.kernel = p.kernel;
  info.threads = p.threads;
  info.rcm = p.rcm;
  info.sort_rows = p.sort_rows;
  info.summary = p.summary();
  info.reasons = p.reasons;
  info.inspection = p.inspection;
  return info;
}

Result to_result(cgs::SolveReport&& r) {
  Result out;
  out.iterations = r.cg.iterations;
  out.converged = r.cg.ok();
  out.status = cgs::to_string(r.cg.status);
  out.relative_residual = r.cg.relative_residual();
  out.true_relative_residual = r.true_relative_residual;
  out.residual_history = std::move(r.cg.residual_history);
  const cgs::SolveTimes& t = r.times;
  out.times = {{"inspect", t.inspect_seconds},       {"probe_kept", t.probe_kept_seconds},
               {"thread_start", t.thread_start_seconds}, {"reorder", t.reorder_seconds},
               {"convert", t.convert_seconds},       {"upload", t.upload_seconds},
               {"precond", t.precond_seconds},       {"set_values", t.set_values_seconds},
               {"solve", t.solve_seconds},           {"download", t.download_seconds}};
  out.plan = plan_info(r.plan);
  out.backend = r.backend_name;
  out.spmv_measured = r.spmv.measured;
  out.spmv_median_s = r.spmv.measured ? r.spmv.median : 0.0;
  out.probe_iterations = r.probe_iterations;
  return out;
}

}  // namespace

struct Solver::Impl {
  cgs::CsrMatrix<double> A;  // the engine's copy, which its true residual is taken against
  std::unique_ptr<cgs::Solver> solver;
  double inspect_seconds = 0, thread_start_seconds = 0;
  std::vector<double> b, x;  // kept: no allocation per solve
};

Solver::Solver(const CsrRef& A, const Options& options) : impl_(std::make_unique<Impl>()) {
  detail::translating([&] {
    const cgs::SolveRequest request = to_request(options);
    impl_->A = to_matrix(A);
    if (options.check_symmetry) require_spd_candidate(impl_->A);
    cgs::PlannedSolver planned = cgs::plan_and_analyze(request, impl_->A);
    impl_->solver = std::move(planned.solver);
    impl_->inspect_seconds = planned.inspect_seconds;
    impl_->thread_start_seconds = planned.thread_start_seconds;
  });
}

Solver::~Solver() = default;
Solver::Solver(Solver&&) noexcept = default;
Solver& Solver::operator=(Solver&&) noexcept = default;

std::int64_t Solver::rows() const { return impl_->A.rows; }
std::int64_t Solver::nnz() const { return impl_->A.nnz(); }
PlanInfo Solver::plan() const { return plan_info(impl_->solver->plan()); }

void Solver::set_values(const double* values) {
  detail::translating([&] {
    std::copy(values, values + impl_->A.values.size(), impl_->A.values.begin());
    impl_->solver->set_values(impl_->A);
  });
}

void Solver::set_values(const CsrRef& A) {
  detail::translating([&] {
    if (A.rows != impl_->A.rows || A.cols != impl_->A.cols || nnz_of(A) != impl_->A.nnz())
      throw cgs::InputError(
          "set_values: the matrix has another sparsity pattern than the one analyzed");
    cgs::CsrMatrix<double> M = to_matrix(A);
    if (M.row_ptr != impl_->A.row_ptr || M.col_idx != impl_->A.col_idx)
      throw cgs::InputError(
          "set_values: the matrix has another sparsity pattern than the one analyzed");
    impl_->A.values = std::move(M.values);
    impl_->solver->set_values(impl_->A);
  });
}

Result Solver::solve(const double* b, double* x, bool guess) {
  return detail::translating([&] {
    Impl& s = *impl_;
    const std::size_t n = std::size_t(s.A.rows);
    s.b.assign(b, b + n);
    if (guess)
      s.x.assign(x, x + n);
    else
      s.x.assign(n, 0.0);
    cgs::SolveReport report = s.solver->solve(s.b, s.x);
    report.times.inspect_seconds = s.inspect_seconds;
    report.times.thread_start_seconds = s.thread_start_seconds;
    std::copy(s.x.begin(), s.x.end(), x);
    return to_result(std::move(report));
  });
}

Result solve(const CsrRef& A, const double* b, double* x, const Options& options, bool guess) {
  return detail::translating([&] {
    const cgs::SolveRequest request = to_request(options);
    const cgs::CsrMatrix<double> M = to_matrix(A);
    if (options.check_symmetry) require_spd_candidate(M);
    const std::size_t n = std::size_t(M.rows);
    const std::vector<double> rhs(b, b + n);
    std::vector<double> sol = guess ? std::vector<double>(x, x + n) : std::vector<double>(n, 0.0);
    cgs::SolveReport report = cgs::solve_system(M, rhs, sol, request);
    std::copy(sol.begin(), sol.end(), x);
    return to_result(std::move(report));
  });
}

std::string version() { return CGSOLVE_VERSION; }

bool built_with_cuda() {
#ifdef CGSOLVE_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

}  // namespace cgsolve
