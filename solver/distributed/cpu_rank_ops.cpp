#include "solver/distributed/cpu_rank_ops.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <variant>

#include "solver/cg_step.hpp"
#include "solver/fused/cpu_passes.hpp"

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

// The reduction of allreduce_timed: the first len - 2 entries summed, the last two maxima.
static void sum_then_max(void* in, void* inout, int* len, MPI_Datatype*) {
  const double* a = static_cast<const double*>(in);
  double* b = static_cast<double*>(inout);
  for (int i = 0; i < *len - 2; ++i) b[i] += a[i];
  for (int i = std::max(0, *len - 2); i < *len; ++i) b[i] = std::max(a[i], b[i]);
}

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
  int fused_here = 1;  // a rank without rows only takes part in the reductions
  if (n_ > 0) {
    local_ = make_backend(block.local, setup.backend);
    precond_ = make_preconditioner<double>(setup.precond, setup.backend.device, threads_);
    precond_->analyze(block.local);
    rows_ = local_->row_view();
    if (rows_) parts_ = rows_->parts;
    if (parts_.size() < 2) parts_ = {0, index_t(n_)};
    if (precond_->pointwise()) diagonal_ = precond_->diagonal();
    // The passes write z = d .* r, or let z be r: a pointwise M without a diagonal that is not
    // --precond none would leave z unwritten.
    fused_here = rows_ && precond_->pointwise() && (identity_ || diagonal_);
  }
  MPI_Allreduce(MPI_IN_PLACE, &fused_here, 1, MPI_INT, MPI_LAND, comm);
  fused_ = fused_here != 0;
  MPI_Op_create(&sum_then_max, /*commute=*/1, &sum_then_max_);
  MPI_Barrier(comm);  // the ranks' clocks start together (within the barrier's skew)
  origin_ = Clock::now();
}

CpuRankOps::~CpuRankOps() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && sum_then_max_ != MPI_OP_NULL) MPI_Op_free(&sum_then_max_);
}

double CpuRankOps::now() const {
  return std::chrono::duration<double>(Clock::now() - origin_).count();
}

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
  wait_for_halo();
  if (block_.halo.nnz() > 0) {
    Stopwatch watch(times_.halo_spmv);
    multiply_halo_block(y);
  }
}

void CpuRankOps::wait_for_halo() {
  product_ready_ = now();
  halo_.finish();
  pending_halo_wait_ = now() - product_ready_;  // one clock for the wait and its split
  times_.halo_wait += pending_halo_wait_;
  times_.halo_bytes_received += halo_.bytes_received();
  times_.halo_bytes_sent += halo_.bytes_sent();
}

double CpuRankOps::add_halo_product(double* y, const double* p) {
  const CsrMatrix<double>& H = block_.halo;
  const double* h = halo_.values();
  double pq = 0;
  sum_by_thread(std::int64_t(halo_rows_.size()), 1, &pq,
                [&](std::int64_t begin, std::int64_t end, double* partial) {
                  double sum_py = 0;
                  for (std::int64_t j = begin; j < end; ++j) {
                    const index_t i = halo_rows_[j];
                    double sum = 0;
                    for (index_t k = H.row_ptr[i]; k < H.row_ptr[i + 1]; ++k)
                      sum += H.values[k] * h[H.col_idx[k]];
                    y[i] += sum;
                    sum_py += p[i] * sum;
                  }
                  partial[0] = sum_py;
                });
  return pq;
}

double CpuRankOps::fused_product(double beta, double alpha_prev, const double* z,
                                 const double* p_old, double* p_new, double* q, double* x) {
  ++times_.products;
  halo_.start_next_p(z, beta, p_old);
  double pq = 0;
  if (n_ > 0) {
    Stopwatch watch(times_.local_spmv);
    fused::Vectors<double> v{};
    v.x = x;
    v.z = const_cast<double*>(z);  // pass A reads z and p_old only
    v.p_old = const_cast<double*>(p_old);
    v.p_new = p_new;
    v.q = q;
    sum_by_part(1, &pq, [&](index_t first, index_t last, double* partial) {
      partial[0] = std::visit(
          [&](const auto& A) { return fused::pass_a(A, first, last, v, beta, alpha_prev); },
          rows_->view);
    });
  }
  wait_for_halo();
  if (block_.halo.nnz() > 0) {
    Stopwatch watch(times_.halo_spmv);
    pq += add_halo_product(q, p_new);  // q's halo part, and its share of p.q
  }
  return pq;
}

void CpuRankOps::fused_residual(double alpha, const double* q, double* r, double* z,
                                double* local_sums) {
  local_sums[0] = local_sums[1] = 0;
  if (n_ == 0) return;
  Stopwatch watch(times_.vector_ops);  // z = d .* r included: no separate precondition pass
  fused::Vectors<double> v{};
  v.d = identity_ ? nullptr : diagonal_;
  v.r = r;
  v.z = z;
  v.q = const_cast<double*>(q);  // pass B reads q only
  sum_by_part(2, local_sums, [&](index_t first, index_t last, double* partial) {
    const fused::Sums sums = fused::pass_b(first, last, alpha, v);
    partial[0] = sums.rr;
    partial[1] = sums.rz;
  });
}

void CpuRankOps::fused_update_x(double alpha, const double* p, double* x) {
  if (n_ == 0) return;
  Stopwatch watch(times_.vector_ops);
  double unused = 0;
  sum_by_part(1, &unused, [&](index_t first, index_t last, double*) {
    fused::update_x(first, last, alpha, p, x);
  });
}

void CpuRankOps::reduce(double* sums, int count) {
  ++times_.reductions;
  allreduce_timed(sums, count);
}

void CpuRankOps::allreduce_timed(double* values, int count) {
  double buffer[kMaxDots + 2];
  std::copy(values, values + count, buffer);
  const double arrival = now();
  buffer[count] = product_ready_;
  buffer[count + 1] = arrival;
  MPI_Allreduce(MPI_IN_PLACE, buffer, count + 2, MPI_DOUBLE, sum_then_max_, comm_);
  const double waited = now() - arrival;
  times_.allreduce += waited;
  std::copy(buffer, buffer + count, values);
  times_.allreduce_imbalance += std::clamp(buffer[count + 1] - arrival, 0.0, waited);
  // The halo wait of the latest product (earlier ones since the last reduction, as in a residual
  // replacement, stay unsplit: counted as transfer).
  times_.halo_imbalance += std::clamp(buffer[count] - product_ready_, 0.0, pending_halo_wait_);
  pending_halo_wait_ = 0;
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
void CpuRankOps::sum_by_thread(std::int64_t length, int count, double* sums, Body body) {
  std::vector<double> partial(std::size_t(threads_) * kMaxDots, 0.0);
  const std::int64_t n = length;
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

template <typename Body>
void CpuRankOps::sum_by_part(int count, double* sums, Body body) {
  const int parts = int(parts_.size()) - 1;
  std::vector<double> partial(std::size_t(parts) * kMaxDots, 0.0);
#pragma omp parallel num_threads(std::min(parts, threads_)) if (parts > 1 && threads_ > 1)
  {
    const int team = omp_get_num_threads();
    for (int part = omp_get_thread_num(); part < parts; part += team)
      body(parts_[part], parts_[part + 1], &partial[std::size_t(part) * kMaxDots]);
  }
  for (int d = 0; d < count; ++d) {
    sums[d] = 0;
    for (int part = 0; part < parts; ++part) sums[d] += partial[std::size_t(part) * kMaxDots + d];
  }
}

void CpuRankOps::dots(const DotPair* pairs, int count, double* sums) {
  ++times_.reductions;
  {
    Stopwatch watch(times_.vector_ops);
    sum_by_thread(std::int64_t(n_), count, sums,
                  [&](std::int64_t begin, std::int64_t end, double* partial) {
                    double sum[kMaxDots] = {};
                    // One pass over the vectors for all the dots of this reduction point.
                    for (std::int64_t i = begin; i < end; ++i)
                      for (int d = 0; d < count; ++d) sum[d] += pairs[d].a[i] * pairs[d].b[i];
                    for (int d = 0; d < count; ++d) partial[d] = sum[d];
                  });
  }
  allreduce_timed(sums, count);
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
    sum_by_thread(std::int64_t(n_), 2, sums,
                  [&](std::int64_t begin, std::int64_t end, double* partial) {
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
  allreduce_timed(sums, 2);
}

}  // namespace cgs::dist
