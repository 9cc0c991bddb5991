#include "solver/solver.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>

#include "formats/convert.hpp"
#include "formats/row_order.hpp"
#include "solver/cuda/fused_cg.hpp"
#include "spmv/device_buffer.hpp"
#include "solver/fused/cpu_loop.hpp"
#include "solver/generic_cg.hpp"
#include "solver/vector_ops.hpp"

namespace cgs {

std::vector<double> multiply(const CsrMatrix<double>& A, const std::vector<double>& x) {
  std::vector<double> y(A.rows, 0.0);
#pragma omp parallel for schedule(static) if (A.rows > 100000)
  for (index_t r = 0; r < A.rows; ++r) {
    double sum = 0;
    for (index_t k = A.row_ptr[r]; k < A.row_ptr[r + 1]; ++k) sum += A.values[k] * x[A.col_idx[k]];
    y[r] = sum;
  }
  return y;
}

double norm2(const std::vector<double>& v) {
  double sum = 0;
  for (double e : v) sum += e * e;
  return std::sqrt(sum);
}

SpmvStats summarise_spmv(const CgResult& cg) {
  SpmvStats s;
  if (!cg.spmv.measured()) return s;
  std::vector<double> sorted = cg.spmv.samples;
  std::sort(sorted.begin(), sorted.end());
  s.measured = true;
  s.every = cg.spmv.every;
  s.what = cg.spmv.what;
  s.samples = long(sorted.size());
  s.median = sorted[sorted.size() / 2];
  s.min = sorted.front();
  s.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / double(sorted.size());
  // Every pass timed: their sum. Sampled: the median pass times the iterations -- the passes of
  // a CG solve cost alike, and a sample that caught the thread descheduled (a loaded machine)
  // would otherwise count `every` times over (the mean gave totals above the solve's own time).
  s.total = s.every == 1 ? s.mean * double(sorted.size()) : s.median * double(cg.iterations);
  return s;
}

double SolveReport::spmv_gflops() const {
  return spmv.measured && spmv.median > 0 ? 2.0 * nnz / spmv.median / 1e9 : 0.0;
}

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}


// A preconditioner that divides by the diagonal needs it positive; an entry <= 0 means A is not
// SPD. Named in A's own numbering (1-based, as in the file).
// The first row whose diagonal (its entries summed, as diagonal() does) is not positive, found
// on every core without a vector of n diagonals (a fresh 72 MB vector written by one thread cost
// ~40 ms of page faults at 9M rows, at every set-up).
void check_positive_diagonal(const CsrMatrix<double>& A, const PrecondSpec& precond) {
  const index_t n = std::min(A.rows, A.cols);
  index_t first_bad = n;
#pragma omp parallel for schedule(static) reduction(min : first_bad) if (n > 100000)
  for (index_t i = 0; i < n; ++i)
    if (!(diagonal_entry(A, i) > 0)) first_bad = std::min(first_bad, i);
  if (first_bad == n) return;
  throw InputError("the " + precond.name + " preconditioner needs a positive diagonal, but A(" +
                   std::to_string(first_bad + 1) + "," + std::to_string(first_bad + 1) + ") = " +
                   std::to_string(diagonal_entry(A, first_bad)) + ": the matrix is not SPD");
}

double true_relative_residual(const CsrMatrix<double>& A, const std::vector<double>& b,
                              const std::vector<double>& x) {
  const double b_norm = norm2(b);
  std::vector<double> residual = multiply(A, x);
  for (std::size_t i = 0; i < residual.size(); ++i) residual[i] = b[i] - residual[i];
  return b_norm > 0 ? norm2(residual) / b_norm : norm2(residual);
}

// The rows of P A P^T: the plan's orderings composed (RCM first, then sorting by length, which
// reorders what RCM left equal), with, for each entry of the permuted matrix, the entry of A it
// came from, so that new values are a gather (set_values).
struct Reordering {
  RowPermutation P;               // empty: A's own order
  CsrMatrix<double> permuted;     // P A P^T (empty when P is)
  std::vector<index_t> entry_of;  // permuted entry k is A's entry entry_of[k]
};

Reordering reorder(const CsrMatrix<double>& A, const Plan& plan) {
  Reordering r;
  if (!plan.rcm && !plan.sort_rows) return r;
  std::vector<index_t> new_to_old(std::size_t(A.rows));
  std::iota(new_to_old.begin(), new_to_old.end(), 0);
  CsrMatrix<double> current;
  const CsrMatrix<double>* now = &A;
  auto apply = [&](const RowPermutation& step) {
    current = permute_symmetric(*now, step);
    now = &current;
    std::vector<index_t> composed(new_to_old.size());
    for (std::size_t k = 0; k < composed.size(); ++k) composed[k] = new_to_old[step.new_to_old[k]];
    new_to_old = std::move(composed);
  };
  if (plan.rcm) apply(reverse_cuthill_mckee(A));
  if (plan.sort_rows) apply(sort_rows_by_length(*now));
  r.P.new_to_old = std::move(new_to_old);
  // Which entry of A each permuted entry is: permute a copy of A whose values are the entries'
  // numbers (exact in double below 2^53).
  // (Every pass here on all cores: ic0's set-up on a 9M-row matrix is mostly reordering.)
  const CsrMatrix<double> moved = permute_symmetric(numbered_entries(A), r.P);
  const std::int64_t entries = std::int64_t(moved.values.size());
  r.entry_of.resize(moved.values.size());
#pragma omp parallel for schedule(static) if (entries > 1000000)
  for (std::int64_t k = 0; k < entries; ++k)
    r.entry_of[std::size_t(k)] = index_t(moved.values[std::size_t(k)]);
  r.permuted = std::move(current);
  return r;
}

template <typename T>
std::vector<T> cast(const std::vector<double>& v) {
  return std::vector<T>(v.begin(), v.end());
}

template <typename T>
class SolverImpl final : public Solver {
 public:
  explicit SolverImpl(const Plan& plan) : Solver(plan) {}

  void analyze(const CsrMatrix<double>& A) override {
    if (A.rows != A.cols)
      throw InputError("CG needs a square matrix, got " + std::to_string(A.rows) + " x " +
                       std::to_string(A.cols));
    const PrecondEntry& entry = find_preconditioner(plan_.precond.name);
    if (entry.needs_positive_diagonal) check_positive_diagonal(A, plan_.precond);
    setup_ = {};
    A_ = &A;
    pattern_row_ptr_ = A.row_ptr;
    pattern_col_idx_ = A.col_idx;

    auto start = Clock::now();
    order_ = reorder(A, plan_);
    setup_.reorder_seconds = since(start);

    start = Clock::now();
    const CsrMatrix<double>& system = solve_order();
    if constexpr (std::is_same_v<T, double>)
      backend_ = make_backend(system, plan_.backend_options());
    else
      backend_ = make_backend(cast_values<T>(system), plan_.backend_options());
    setup_.upload_seconds = backend_->transfer_seconds();
    setup_.convert_seconds = since(start) - setup_.upload_seconds;

    start = Clock::now();
    M_ = make_preconditioner<T>(plan_.precond, plan_.device, plan_.threads);
    lend_backend_matrix();
    M_->analyze(system);
    setup_.precond_seconds = since(start);

    start = Clock::now();
    prepare_loop();
    setup_.upload_seconds += since(start);
  }

  void set_values(const CsrMatrix<double>& A) override {
    if (!backend_) throw std::logic_error("Solver::set_values before analyze");
    if (A.row_ptr != pattern_row_ptr_ || A.col_idx != pattern_col_idx_)
      throw InputError("set_values: the matrix has another sparsity pattern than the one analyzed");
    const PrecondEntry& entry = find_preconditioner(plan_.precond.name);
    if (entry.needs_positive_diagonal) check_positive_diagonal(A, plan_.precond);
    const auto start = Clock::now();
    A_ = &A;
    if (!order_.P.empty()) {
      const std::int64_t entries = std::int64_t(order_.entry_of.size());
#pragma omp parallel for schedule(static) if (entries > 1000000)
      for (std::int64_t k = 0; k < entries; ++k)
        order_.permuted.values[std::size_t(k)] =
            A.values[std::size_t(order_.entry_of[std::size_t(k)])];
    }
    const CsrMatrix<double>& system = solve_order();
    if constexpr (std::is_same_v<T, double>) {
      backend_->set_values(system.values.data());
    } else {
      const std::vector<T> values = cast<T>(system.values);
      backend_->set_values(values.data());
    }
    M_->set_values(system);
    setup_.set_values_seconds = since(start);
  }

  SolveReport solve(const std::vector<double>& b, std::vector<double>& x, bool true_residual,
                    const CgOptions* stop) override {
    if (!backend_) throw std::logic_error("Solver::solve before analyze");
    check_sizes(*A_, b, x);
    SolveReport report;
    report.plan = plan_;
    report.nnz = A_->nnz();
    report.backend_name = backend_->name();
    report.times = setup_;
    const RowPermutation& P = order_.P;
    const std::vector<double> b_in = P.empty() ? b : P.to_new(b);
    std::vector<double> x_in = P.empty() ? x : P.to_new(x);
    x_in = run_loop(b_in, x_in, stop ? *stop : plan_.cg, report);
    x = P.empty() ? std::move(x_in) : P.to_original(x_in);
    report.spmv = summarise_spmv(report.cg);
    report.precond = M_->report();
    report.true_relative_residual = true_residual ? true_relative_residual(*A_, b, x)
                                                  : std::numeric_limits<double>::quiet_NaN();
    return report;
  }

  void precondition(const std::vector<double>& r, std::vector<double>& z) override {
    if (!backend_) throw std::logic_error("Solver::precondition before analyze");
    if (r.size() != std::size_t(A_->rows))
      throw InputError("precondition: the vector has " + std::to_string(r.size()) +
                       " entries but the matrix has " + std::to_string(A_->rows) + " rows");
    const RowPermutation& P = order_.P;
    if constexpr (std::is_same_v<T, double>) {
      if (P.empty() && !M_->pointwise() && plan_.device != Device::gpu) {  // no copies
        z.resize(r.size());
        M_->apply(r.data(), z.data());
        return;
      }
    }
    const std::vector<T> r_in = cast<T>(P.empty() ? r : P.to_new(r));
    std::vector<T> z_in(r_in.size());
    if (M_->pointwise()) {
      std::vector<T> d(r_in.size(), T(1));
      if (M_->diagonal() && plan_.device == Device::gpu)
        gpu_download(d.data(), M_->diagonal(), d.size() * sizeof(T));
      else if (M_->diagonal())
        d.assign(M_->diagonal(), M_->diagonal() + d.size());
      for (std::size_t i = 0; i < r_in.size(); ++i) z_in[i] = d[i] * r_in[i];
    } else if (plan_.device == Device::gpu) {
      // The loop's b and x buffers where it keeps them (the same pointers every call: the
      // program's slot table is not rewritten), else buffers of this call.
      DeviceBuffer<T> r_own, z_own;
      if (b_.empty()) {
        r_own = DeviceBuffer<T>(plan_.device, r_in.size(), "M^-1 r: r");
        z_own = DeviceBuffer<T>(plan_.device, r_in.size(), "M^-1 r: z");
      }
      DeviceBuffer<T>& r_dev = b_.empty() ? r_own : b_;
      DeviceBuffer<T>& z_dev = b_.empty() ? z_own : x_;
      r_dev.upload(r_in);
      M_->apply(r_dev.data(), z_dev.data());
      z_in = z_dev.download();
    } else {
      M_->apply(r_in.data(), z_in.data());
    }
    const std::vector<double> z_double(z_in.begin(), z_in.end());
    z = P.empty() ? z_double : P.to_original(z_double);
  }

 private:
  const CsrMatrix<double>& solve_order() const { return order_.P.empty() ? *A_ : order_.permuted; }

  // The backend's CSR (in device memory on the GPU, host memory on the CPU devices), lent to the
  // preconditioner's set-up (Preconditioner::lend_matrix): the backend is built from the matrix
  // the preconditioner analyses and lives as long as it, and set_values refreshes the backend
  // before the preconditioner.
  void lend_backend_matrix() {
    const std::optional<Rows<T>> rows = backend_->row_view();
    if (!rows || rows->on_device != (plan_.device == Device::gpu)) return;
    if (const auto* csr = std::get_if<CsrView<T>>(&rows->view)) M_->lend_matrix(*csr);
  }

  // What the loop keeps between solves: device vectors and the vector operations (generic), the
  // fused GPU loop with its work vectors, or the rows of the fused CPU loops.
  void prepare_loop() {
    const std::size_t n = std::size_t(A_->rows);
    ops_.reset();
    gpu_loop_.reset();
    rows_.reset();
    if (plan_.loop == Loop::serial || plan_.loop == Loop::team) {
      rows_ = backend_->row_view();
      if (!rows_) throw InputError(backend_->no_rows_reason());
      return;
    }
    b_ = DeviceBuffer<T>(plan_.device, n, "CG b");
    x_ = DeviceBuffer<T>(plan_.device, n, "CG x");
    if (plan_.loop == Loop::generic) {
      ops_ = make_vector_ops<T>(plan_.device, n, plan_.threads);
      return;
    }
    const std::optional<Rows<T>> rows = backend_->row_view();
    if (!rows) throw InputError(backend_->no_rows_reason());
    gpu_loop_ = make_fused_gpu_loop(*rows, A_->rows, *M_, plan_.loop);
  }

  // The loop of the plan on b and x0 (in the solve's row order); returns x.
  std::vector<double> run_loop(const std::vector<double>& b, const std::vector<double>& x0,
                               const CgOptions& cg, SolveReport& report) {
    const index_t n = A_->rows;
    if (rows_) {  // the fused CPU loops work on host vectors in T
      const bool team = plan_.loop == Loop::team;
      if constexpr (std::is_same_v<T, double>) {
        std::vector<double> x = x0;
        report.cg = fused_cpu_conjugate_gradient(*rows_, n, *M_, b.data(), x.data(), cg, team);
        report.times.solve_seconds = report.cg.solve_seconds;
        return x;
      } else {
        const std::vector<T> b_t = cast<T>(b);
        std::vector<T> x = cast<T>(x0);
        report.cg = fused_cpu_conjugate_gradient(*rows_, n, *M_, b_t.data(), x.data(), cg, team);
        report.times.solve_seconds = report.cg.solve_seconds;
        return std::vector<double>(x.begin(), x.end());
      }
    }
    auto start = Clock::now();
    if constexpr (std::is_same_v<T, double>) {  // no copies (fresh 72 MB vectors at 9M rows)
      b_.upload(b);
      x_.upload(x0);
    } else {
      b_.upload(cast<T>(b));
      x_.upload(cast<T>(x0));
    }
    report.times.upload_seconds += since(start);
    report.cg = gpu_loop_
                    ? gpu_loop_->solve(b_.data(), x_.data(), cg)
                    : generic_conjugate_gradient(*backend_, *M_, *ops_, b_.data(), x_.data(), cg);
    start = Clock::now();
    std::vector<T> x = x_.download();
    report.times.download_seconds = since(start);
    report.times.solve_seconds = report.cg.solve_seconds;
    if constexpr (std::is_same_v<T, double>)
      return x;
    else
      return std::vector<double>(x.begin(), x.end());
  }

  const CsrMatrix<double>* A_ = nullptr;
  std::vector<index_t> pattern_row_ptr_, pattern_col_idx_;
  Reordering order_;
  std::unique_ptr<SpmvBackend<T>> backend_;
  std::unique_ptr<Preconditioner<T>> M_;
  std::optional<Rows<T>> rows_;
  std::unique_ptr<VectorOps<T>> ops_;
  std::unique_ptr<FusedGpuLoop<T>> gpu_loop_;
  DeviceBuffer<T> b_, x_;
  SolveTimes setup_;
};

}  // namespace

void check_sizes(const CsrMatrix<double>& A, const std::vector<double>& b, std::vector<double>& x) {
  if (b.size() != std::size_t(A.rows))
    throw InputError("the right-hand side has " + std::to_string(b.size()) +
                     " entries but the matrix has " + std::to_string(A.rows) + " rows");
  if (x.empty()) x.assign(A.rows, 0.0);
  if (x.size() != std::size_t(A.rows))
    throw InputError("the initial guess has " + std::to_string(x.size()) +
                     " entries but the matrix has " + std::to_string(A.rows) + " rows");
}

std::unique_ptr<Solver> make_solver(const Plan& plan) {
  if (plan.precision == Precision::single) return std::make_unique<SolverImpl<float>>(plan);
  return std::make_unique<SolverImpl<double>>(plan);
}

PlannedSolver analyze_planned(const SolveRequest& request, const CsrMatrix<double>& A) {
  PlannedSolver planned;
  planned.solver = make_solver(make_plan(request, A));
  planned.solver->analyze(A);
  return planned;
}

}  // namespace cgs
