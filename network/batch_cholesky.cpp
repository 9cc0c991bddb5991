// The batched sparse Cholesky engines of the study (batch_cg.hpp: make_cpu_batch_cholesky,
// make_gpu_batch_cholesky) and the members' direct solver that hands them its systems. Plain
// C++: make_batch_cholesky answers DeviceError in a build without CUDA, so no #ifdef here.
#include "solver/cuda/batch_cholesky.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "network/batch_cg.hpp"
#include "network/cholesky_schedule.hpp"
#include "network/sparse_cholesky.hpp"
#include "spmv/cuda/cuda_backends.hpp"

namespace cgs::net {
namespace {

// What both engines share: the pattern, its analysis in the first system's order, the schedule.
class ScheduledCholesky : public BatchCg {
 protected:
  // On the first batch: analyse and compile; later: each system's pattern checked.
  void prepare(const std::vector<BatchCgSystem*>& systems) {
    const BatchCgSystem& first = *systems.front();
    if (schedule_.n == 0 && pattern_.rows == 0) {
      pattern_ = *first.A;
      const bool given = first.elimination_order && !first.elimination_order->empty();
      ordering_ = given ? "EPANET's multiple minimum degree ordering" : "AMD ordering";
      SparseCholesky analysis;
      analysis.analyse(pattern_, given ? *first.elimination_order : minimum_degree_order(pattern_));
      schedule_ = compile_schedule(analysis, pattern_.nnz());
      built();
    }
    for (const BatchCgSystem* s : systems) check_same_pattern(*s->A, pattern_);
  }
  virtual void built() {}
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
};

// A successful solve's result as a CG result reads: converged, no iterations.
void mark(BatchCgSystem& s, int failed_row) {
  s.failed_row = failed_row;
  s.result = {};
  s.result.status = failed_row < 0 ? CgStatus::converged : CgStatus::breakdown;
}

class CpuBatchCholesky final : public ScheduledCholesky {
 public:
  void solve(const std::vector<BatchCgSystem*>& systems) override {
    if (systems.empty()) return;
    prepare(systems);
    for (BatchCgSystem* s : systems) {
      int failed_row = -1;
      if (executor_->factorize(*s->A, &failed_row)) executor_->solve(*s->b, *s->x);
      mark(*s, failed_row);
    }
  }
  std::string name() const override { return describe("on the host, one system after another"); }

 private:
  void built() override { executor_ = std::make_unique<CholeskyScheduleExecutor>(schedule_); }
  std::unique_ptr<CholeskyScheduleExecutor> executor_;
};

class GpuBatchCholesky final : public ScheduledCholesky {
 public:
  GpuBatchCholesky() {
    std::string why;
    if (!cuda_device_available(&why))
      throw DeviceError("--device gpu (the batched study engine) needs a GPU: " + why);
  }

  void solve(const std::vector<BatchCgSystem*>& systems) override {
    if (systems.empty()) return;
    prepare(systems);
    const int count = static_cast<int>(systems.size());
    const std::size_t n = static_cast<std::size_t>(schedule_.n), nnz = pattern_.values.size();
    values_.resize(nnz * count);
    b_.resize(n * count);
    x_.resize(n * count);
    failed_.resize(count);
    for (int s = 0; s < count; ++s) {
      const BatchCgSystem& system = *systems[s];
      std::memcpy(values_.data() + s * nnz, system.A->values.data(), nnz * sizeof(double));
      std::memcpy(b_.data() + s * n, system.b->data(), n * sizeof(double));
    }
    device_->factorize_solve(values_.data(), b_.data(), x_.data(), count, failed_.data());
    for (int s = 0; s < count; ++s) {
      if (failed_[s] < 0) systems[s]->x->assign(x_.begin() + s * n, x_.begin() + (s + 1) * n);
      mark(*systems[s], failed_[s]);
    }
  }
  std::string name() const override { return describe("on the GPU, one thread a system"); }

 private:
  void built() override { device_ = make_batch_cholesky(schedule_.view()); }
  std::unique_ptr<BatchCholesky> device_;
  std::vector<double> values_, b_, x_;  // host staging, count systems after one another
  std::vector<int> failed_;
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
    if (A.rows == 0) {
      x.clear();
      return stats;
    }
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
