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
      identity_(setup.precond.is("none")),
      halo_(comm, block, blocks) {
  for (index_t i = 0; i < block.halo.rows; ++i)
    if (block.halo.row_length(i) > 0) halo_rows_.push_back(i);
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
  const std::int64_t rows = std::int64_t(halo_rows_.size());
#pragma omp parallel for schedule(static) num_threads(threads_) if (threads_ > 1 && rows > 4096)
  for (std::int64_t j = 0; j < rows; ++j) {
    const index_t i = halo_rows_[j];
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

template <typename Body>
void CpuRankOps::sum_by_thread(int count, double* sums, Body body) {
  std::vector<double> partial(std::size_t(threads_) * kMaxDots, 0.0);
  const std::int64_t n = std::int64_t(n_);
#pragma omp parallel num_threads(threads_) if (threads_ > 1)
  {
    const int t = omp_get_thread_num(), team = omp_get_num_threads();
    body(n * t / team, n * (t + 1) / team, &partial[std::size_t(t) * kMaxDots]);
  }
  for (int d = 0; d < count; ++d) {
    sums[d] = 0;
    for (int t = 0; t < threads_; ++t) sums[d] += partial[std::size_t(t) * kMaxDots + d];
  }
}

void CpuRankOps::dots(const DotPair* pairs, int count, double* sums) {
  ++times_.reductions;
  {
    Stopwatch watch(times_.vector_ops);
    sum_by_thread(count, sums, [&](std::int64_t begin, std::int64_t end, double* partial) {
      double sum[kMaxDots] = {};
      // One pass over the vectors for all the dots of this reduction point.
      for (std::int64_t i = begin; i < end; ++i)
        for (int d = 0; d < count; ++d) sum[d] += pairs[d].a[i] * pairs[d].b[i];
      for (int d = 0; d < count; ++d) partial[d] = sum[d];
    });
  }
  Stopwatch watch(times_.allreduce);
  allreduce_sum(comm_, sums, count);
}

void CpuRankOps::update_xr_precondition_dots(double alpha, const double* p, const double* q,
                                             double* x, double* r, double* z, double* sums) {
  if (n_ > 0 && !precond_->pointwise()) {  // a program: its own passes
    RankOps::update_xr_precondition_dots(alpha, p, q, x, r, z, sums);
    return;
  }
  ++times_.reductions;
  {
    Stopwatch watch(times_.vector_ops);
    const double* d = n_ > 0 ? precond_->diagonal() : nullptr;  // null: z is r, or M = I
    sum_by_thread(2, sums, [&](std::int64_t begin, std::int64_t end, double* partial) {
      double rr = 0, rz = 0;
      for (std::int64_t i = begin; i < end; ++i) {
        x[i] = cg::next_x(x[i], alpha, p[i]);
        const double ri = r[i] = cg::next_r(r[i], alpha, q[i]);
        const double zi = d ? d[i] * ri : ri;
        if (z != r) z[i] = zi;
        rr += ri * ri;
        rz += ri * zi;
      }
      partial[0] = rr;
      partial[1] = rz;
    });
  }
  Stopwatch watch(times_.allreduce);
  allreduce_sum(comm_, sums, 2);
}

}  // namespace cgs::dist
