#include "solver/distributed/cpu_rank_ops.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "solver/cg_step.hpp"

namespace cgs::dist {

namespace {

using Clock = std::chrono::steady_clock;

// Adds the time since `start` to `total` when it goes out of scope.
class Stopwatch {
 public:
  explicit Stopwatch(double& total) : total_(total), start_(Clock::now()) {}
  ~Stopwatch() { total_ += std::chrono::duration<double>(Clock::now() - start_).count(); }

 private:
  double& total_;
  Clock::time_point start_;
};

}  // namespace

CpuRankOps::CpuRankOps(MPI_Comm comm, const RankBlock& block, const RowBlocks& blocks,
                       const RankSetup& setup)
    : comm_(comm),
      block_(block),
      n_(std::size_t(block.local.rows)),
      threads_(std::max(1, setup.backend.threads)),
      halo_(comm, block, blocks) {
  if (n_ == 0) return;  // a rank without rows: it only takes part in the reductions
  local_ = make_backend(block.local, setup.backend);
  precond_ = make_preconditioner<double>(setup.precond, setup.backend.device, threads_);
  precond_->analyze(block.local);
}

CpuRankOps::~CpuRankOps() = default;

std::string CpuRankOps::backend_name() const { return local_ ? local_->name() : "(no rows)"; }

const PrecondReport* CpuRankOps::precond_report() const {
  return precond_ ? &precond_->report() : nullptr;
}

double* CpuRankOps::allocate() { return new double[std::max<std::size_t>(n_, 1)](); }
void CpuRankOps::release(double* v) { delete[] v; }
void CpuRankOps::upload(const std::vector<double>& host, double* v) {
  std::copy(host.begin(), host.begin() + std::ptrdiff_t(n_), v);
}
std::vector<double> CpuRankOps::download(const double* v) { return {v, v + n_}; }

void CpuRankOps::copy(const double* src, double* dst) {
  Stopwatch watch(times_.vector_ops);
  std::copy(src, src + n_, dst);
}

void CpuRankOps::multiply_halo_block(double* y) const {
  const CsrMatrix<double>& H = block_.halo;
  const double* h = halo_.values();
  const std::int64_t rows = H.rows;
#pragma omp parallel for schedule(static) num_threads(threads_) if (threads_ > 1)
  for (std::int64_t i = 0; i < rows; ++i) {
    double sum = 0;
    for (index_t k = H.row_ptr[i]; k < H.row_ptr[i + 1]; ++k) sum += H.values[k] * h[H.col_idx[k]];
    y[i] += sum;
  }
}

void CpuRankOps::multiply(const double* x, double* y) {
  ++times_.products;
  halo_.start(x);
  if (local_) {
    Stopwatch watch(times_.local_spmv);
    local_->apply(x, y);
  }
  {
    Stopwatch watch(times_.halo_wait);
    halo_.finish();
  }
  times_.halo_bytes_received += halo_.bytes_received();
  times_.halo_bytes_sent += halo_.bytes_sent();
  if (block_.halo.nnz() > 0) {
    Stopwatch watch(times_.halo_spmv);
    multiply_halo_block(y);
  }
}

void CpuRankOps::precondition(const double* r, double* z) {
  if (n_ == 0) return;
  Stopwatch watch(times_.precond);
  if (!precond_->pointwise()) {
    precond_->apply(r, z);
    return;
  }
  const double* d = precond_->diagonal();  // null: the identity
  const std::int64_t n = std::int64_t(n_);
#pragma omp parallel for schedule(static) num_threads(threads_) if (threads_ > 1)
  for (std::int64_t i = 0; i < n; ++i) z[i] = d ? d[i] * r[i] : r[i];
}

void CpuRankOps::residual(const double* b, const double* Ax, double* r) {
  Stopwatch watch(times_.vector_ops);
  const std::int64_t n = std::int64_t(n_);
#pragma omp parallel for schedule(static) num_threads(threads_) if (threads_ > 1)
  for (std::int64_t i = 0; i < n; ++i) r[i] = b[i] - Ax[i];
}

void CpuRankOps::update_xr(double alpha, const double* p, const double* q, double* x, double* r) {
  Stopwatch watch(times_.vector_ops);
  const std::int64_t n = std::int64_t(n_);
#pragma omp parallel for schedule(static) num_threads(threads_) if (threads_ > 1)
  for (std::int64_t i = 0; i < n; ++i) {
    x[i] = cg::next_x(x[i], alpha, p[i]);
    r[i] = cg::next_r(r[i], alpha, q[i]);
  }
}

void CpuRankOps::update_p(double beta, const double* z, double* p) {
  Stopwatch watch(times_.vector_ops);
  const std::int64_t n = std::int64_t(n_);
#pragma omp parallel for schedule(static) num_threads(threads_) if (threads_ > 1)
  for (std::int64_t i = 0; i < n; ++i) p[i] = cg::next_p(z[i], beta, p[i]);
}

void CpuRankOps::dots(const DotPair* pairs, int count, double* sums) {
  ++times_.reductions;
  {
    // Each thread sums a fixed slice; the slices are added in thread order, so the local part
    // has the same bits on every run with the same thread count.
    Stopwatch watch(times_.vector_ops);
    constexpr int kMaxDots = 4;
    std::vector<double> partial(std::size_t(threads_) * kMaxDots, 0.0);
    const std::int64_t n = std::int64_t(n_);
#pragma omp parallel num_threads(threads_) if (threads_ > 1)
    {
      const int t = omp_get_thread_num(), team = omp_get_num_threads();
      const std::int64_t begin = n * t / team, end = n * (t + 1) / team;
      for (int d = 0; d < count; ++d) {
        double sum = 0;
        for (std::int64_t i = begin; i < end; ++i) sum += pairs[d].a[i] * pairs[d].b[i];
        partial[std::size_t(t) * kMaxDots + d] = sum;
      }
    }
    for (int d = 0; d < count; ++d) {
      sums[d] = 0;
      for (int t = 0; t < threads_; ++t) sums[d] += partial[std::size_t(t) * kMaxDots + d];
    }
  }
  Stopwatch watch(times_.allreduce);
  allreduce_sum(comm_, sums, count);
}

}  // namespace cgs::dist
