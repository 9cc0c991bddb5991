// The batched sparse Cholesky engines of the study (batch_cg.hpp: make_cpu_batch_cholesky,
// make_gpu_batch_cholesky) and the members' direct solver that hands them its systems. Plain
// C++: make_batch_cholesky answers DeviceError in a build without CUDA, so no #ifdef here.
#include "network/batch_cholesky.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <stdexcept>

#include "network/batch_cg.hpp"
#include "network/cholesky_schedule.hpp"
#include "solver/precond/sparse_cholesky.hpp"
#include "spmv/cuda/cuda_backends.hpp"

namespace cgs::net {
namespace {

// What both engines share: the pattern, its analysis in the first system's order, the schedule;
// and the staging arrays, slot after slot, into which the members copy their own systems (stage)
// and out of which they copy their solutions (collect), in parallel on their threads, so that the
// member that runs the batch only executes the schedule.
class ScheduledCholesky : public BatchCg {
 public:
  void expect(int members) override { members_ = members; }

  void stage(int slot, const BatchCgSystem& system) override {
    std::call_once(sized_, [&] {
      nnz_ = system.A->values.size();
      n_ = system.b->size();
      values_.resize(nnz_ * members_);
      b_.resize(n_ * members_);
      x_.resize(n_ * members_);
      failed_.resize(members_);
    });
    if (system.A->values.size() != nnz_ || system.b->size() != n_ || slot >= members_)
      throw std::invalid_argument(
          "batch Cholesky: a system of the batch has another sparsity pattern than the first");
    std::memcpy(values_.data() + slot * nnz_, system.A->values.data(), nnz_ * sizeof(double));
    std::memcpy(b_.data() + slot * n_, system.b->data(), n_ * sizeof(double));
  }

  void solve(const std::vector<BatchCgSystem*>& systems) override {
    if (systems.empty()) return;
    prepare(systems);
    const int count = static_cast<int>(systems.size());
    if (n_ != static_cast<std::size_t>(schedule_.n) || count > members_)
      throw std::logic_error("batch Cholesky: solve() without stage() for every system");
    execute(count);
    for (int s = 0; s < count; ++s) {
      systems[s]->failed_row = failed_[s];
      systems[s]->result = {};
      systems[s]->result.status = failed_[s] < 0 ? CgStatus::converged : CgStatus::breakdown;
    }
  }

  void collect(int slot, BatchCgSystem& system) override {
    if (system.failed_row < 0)  // a failed system's x is left as it was
      system.x->assign(x_.begin() + slot * n_, x_.begin() + (slot + 1) * n_);
  }

 protected:
  // The staged systems 0..count-1 factorised and solved: x_ and failed_ (-1 or A's row).
  virtual void execute(int count) = 0;
  virtual void built() {}

  // On the first batch: analyse and compile; later: each system's pattern checked.
  void prepare(const std::vector<BatchCgSystem*>& systems) {
    const BatchCgSystem& first = *systems.front();
    if (pattern_.rows == 0) {
      pattern_ = *first.A;
      const bool given = first.elimination_order && !first.elimination_order->empty();
      ordering_ = given ? "EPANET's multiple minimum degree ordering" : "AMD ordering";
      precond::SparseCholesky analysis;
      analysis.analyse(pattern_, given ? *first.elimination_order : precond::minimum_degree_order(pattern_));
      schedule_ = compile_schedule(analysis, pattern_.nnz());
      built();
    }
    for (const BatchCgSystem* s : systems) check_same_pattern(*s->A, pattern_);
  }
  std::string describe(const char* where) const {
    char text[300];
    std::snprintf(text, sizeof text,
                  "direct: batched sparse Cholesky LL^T %s, EPANET's left-looking factorisation "
                  "as a schedule (%s, %ld entries below L's diagonal, %ld updates)",
                  where, ordering_.c_str(), static_cast<long>(schedule_.row.size()),
                  schedule_.updates());
    return text;
  }

  CsrMatrix<double> pattern_;
  CholeskySchedule schedule_;
  std::string ordering_;
  int members_ = 0;
  std::once_flag sized_;
  std::size_t nnz_ = 0, n_ = 0;
  std::vector<double> values_, b_, x_;
  std::vector<int> failed_;
};

// The schedule on the host, one staged system after another.
class CpuBatchCholesky final : public ScheduledCholesky {
 public:
  std::string name() const override { return describe("on the host, one system after another"); }

 private:
  void built() override { executor_ = std::make_unique<CholeskyScheduleExecutor>(schedule_); }
  void execute(int count) override {
    for (int s = 0; s < count; ++s) {
      failed_[s] = -1;
      if (executor_->factorize(values_.data() + s * nnz_, &failed_[s]))
        executor_->solve(b_.data() + s * n_, x_.data() + s * n_);
    }
  }
  std::unique_ptr<CholeskyScheduleExecutor> executor_;
};

// The schedule on the device: the staged batch in one call (three kernels).
class GpuBatchCholesky final : public ScheduledCholesky {
 public:
  GpuBatchCholesky() {
    std::string why;
    if (!cuda_device_available(&why))
      throw DeviceError("--device gpu (the batched study engine) needs a GPU: " + why);
  }
  std::string name() const override {
    std::string text = describe("on the GPU, one thread a system");
    if (calls_ == 0) return text;
    char totals[200];  // what the device's part cost, for BENCHMARKS (the forecast of §19d)
    std::snprintf(
        totals, sizeof totals,
        "; this engine's %ld calls: kernels %.1f ms, whole calls (copies in and out) %.1f ms",
        calls_, kernel_ms_, call_ms_);
    return text + totals;
  }

 private:
  void built() override { device_ = make_batch_cholesky(schedule_.view()); }
  void execute(int count) override {
    if (!pinned_) {  // the staging arrays are sized once, before the first batch, and kept
      device_->pin(values_.data(), values_.size() * sizeof(double));
      device_->pin(b_.data(), b_.size() * sizeof(double));
      device_->pin(x_.data(), x_.size() * sizeof(double));
      pinned_ = true;
    }
    device_->factorize_solve(values_.data(), b_.data(), x_.data(), count, failed_.data());
    ++calls_;
    kernel_ms_ += device_->kernel_ms();
    call_ms_ += device_->call_ms();
  }
  std::unique_ptr<BatchCholesky> device_;  // destroyed before the staging it pinned
  bool pinned_ = false;
  long calls_ = 0;
  double kernel_ms_ = 0, call_ms_ = 0;
};

using Clock = std::chrono::steady_clock;

class BatchDirectMember final : public LinearSolver {
 public:
  explicit BatchDirectMember(std::shared_ptr<BatchRendezvous> batch) : batch_(std::move(batch)) {}

  void suggest_elimination_order(const std::vector<int>& order) override {
    order_ = order;
    fallback_->suggest_elimination_order(order);
  }

  LinearSolveStats solve(const CsrMatrix<double>& A, const std::vector<double>& b,
                         std::vector<double>& x) override {
    const auto started = Clock::now();
    LinearSolveStats stats;
    if (empty_system(A, x)) return stats;
    BatchCgSystem system{&A, &b, &x, {}};
    system.elimination_order = &order_;
    batch_->solve(system);
    stats.failed_row = system.failed_row;
    stats.converged = system.failed_row < 0;
    stats.seconds = std::chrono::duration<double>(Clock::now() - started).count();
    return stats;
  }

  bool solve_in_file_order(const CsrMatrix<double>& A, const std::vector<double>& b,
                           std::vector<double>& x, LinearSolveStats& stats) override {
    return fallback_->solve_in_file_order(A, b, x, stats);
  }

  std::string name() const override { return batch_->engine_name(); }
  std::string kind() const override { return "direct"; }
  std::string backend() const override { return "native"; }
  int analyses() const override { return -1; }  // the engine analyses, once, uncounted

 private:
  std::shared_ptr<BatchRendezvous> batch_;
  std::vector<int> order_;
  std::unique_ptr<LinearSolver> fallback_ = make_direct_solver(DirectBackend::native);
};

}  // namespace

std::unique_ptr<BatchCg> make_cpu_batch_cholesky() { return std::make_unique<CpuBatchCholesky>(); }

std::unique_ptr<BatchCg> make_gpu_batch_cholesky() { return std::make_unique<GpuBatchCholesky>(); }

std::unique_ptr<LinearSolver> make_batch_direct_member_solver(
    std::shared_ptr<BatchRendezvous> batch) {
  return std::make_unique<BatchDirectMember>(std::move(batch));
}

}  // namespace cgs::net
