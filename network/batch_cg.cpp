// The batched study engine (batch_cg.hpp): the rendezvous of the scenario threads, and the CPU
// batch CG (the fallback). The GPU batch CG is in gpu_batch_cg.cpp.
#include "network/batch_cg.hpp"

#include <algorithm>
#include <stdexcept>

#include "solver/solve.hpp"

namespace cgs::net {

void check_same_pattern(const CsrMatrix<double>& A, const CsrMatrix<double>& pattern) {
  if (A.rows != pattern.rows || A.row_ptr != pattern.row_ptr || A.col_idx != pattern.col_idx)
    throw std::invalid_argument(
        "batch CG: a system of the batch has another sparsity pattern than the first");
}

namespace {

class CpuBatchCg final : public BatchCg {
 public:
  explicit CpuBatchCg(const SolveRequest& request) : request_(network_cg_request(request)) {
    if (request_.backend.device == Device::gpu) request_.backend.device = Device::omp;
  }

  void solve(const std::vector<BatchCgSystem*>& systems) override {
    for (BatchCgSystem* s : systems) {
      if (!solver_) {
        pattern_ = *s->A;
        solver_ = plan_and_analyze(request_, *s->A).solver;
      } else {
        check_same_pattern(*s->A, pattern_);
        solver_->set_values(*s->A);
      }
      s->result = solver_->solve(*s->b, *s->x, false).cg;
    }
  }

  std::string name() const override {
    return "cpu batch cg (cgsolve's CG, one system after another)";
  }

 private:
  SolveRequest request_;
  CsrMatrix<double> pattern_;
  std::unique_ptr<Solver> solver_;
};

}  // namespace

std::unique_ptr<BatchCg> make_cpu_batch_cg(const SolveRequest& request) {
  return std::make_unique<CpuBatchCg>(request);
}

BatchRendezvous::BatchRendezvous(std::unique_ptr<BatchCg> engine, int members)
    : engine_(std::move(engine)), members_(members) {
  engine_->expect(members);
}

CgResult BatchRendezvous::solve(const CsrMatrix<double>& A, const std::vector<double>& b,
                                std::vector<double>& x) {
  BatchCgSystem system{&A, &b, &x, {}};
  solve(system);
  return system.result;
}

void BatchRendezvous::solve(BatchCgSystem& system) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (error_) std::rethrow_exception(error_);
  const int slot = static_cast<int>(waiting_.size());
  waiting_.push_back(&system);
  const long generation = generation_;
  ++staging_;
  lock.unlock();
  std::exception_ptr failure;
  try {
    engine_->stage(slot, system);  // on this thread, beside the other members' copies
  } catch (...) {
    failure = std::current_exception();
  }
  lock.lock();
  --staging_;
  if (failure && !error_) error_ = failure;
  // The batch runs when every member still running has arrived and staged its system.
  if (complete())
    run_batch(lock);
  else
    solved_.wait(lock, [&] { return generation_ != generation; });
  if (error_) std::rethrow_exception(error_);
  lock.unlock();
  engine_->collect(slot, system);
}

void BatchRendezvous::leave() {
  std::unique_lock<std::mutex> lock(mutex_);
  --members_;
  if (complete()) run_batch(lock);
}

// Called with the lock held by the member whose arrival completed the batch: every other member
// is waiting, so nobody adds a system while the engine runs unlocked.
void BatchRendezvous::run_batch(std::unique_lock<std::mutex>& lock) {
  std::vector<BatchCgSystem*> batch;
  batch.swap(waiting_);
  lock.unlock();
  std::exception_ptr failure;
  try {
    engine_->solve(batch);
  } catch (...) {
    failure = std::current_exception();
  }
  lock.lock();
  if (failure && !error_) error_ = failure;
  ++counts_.launches;
  counts_.systems += static_cast<long>(batch.size());
  long slowest = 0;
  for (const BatchCgSystem* s : batch) {
    counts_.iterations += s->result.iterations;
    slowest = std::max(slowest, s->result.iterations);
  }
  counts_.critical_iterations += slowest;
  ++generation_;
  solved_.notify_all();
}

std::exception_ptr BatchRendezvous::error() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return error_;
}

BatchRendezvous::Counts BatchRendezvous::counts() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return counts_;
}

}  // namespace cgs::net
