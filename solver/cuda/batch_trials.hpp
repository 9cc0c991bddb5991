// The steady-state trials of many scenarios of one network on the device (netsolve --study ...
// --device gpu, the "trials" engine; issue 23): one thread a scenario runs
// network/trial_kernels.hpp's period -- coefficients, assembly, EPANET's factorisation through
// the compiled Cholesky schedule, flow update, status rules -- over interleaved arrays. The host
// only prepares each scenario's start and reads its row, so no host work sits between trials.
#pragma once

#include <cstddef>
#include <memory>

#include "network/trial_kernels.hpp"

namespace cgs {

class BatchTrials {
 public:
  virtual ~BatchTrials() = default;
  // count scenarios, one after another: starts [count * layout.start()] (GradientAlgorithm's
  // export_trial_start), statuses [count * links], specs [count]. Writes outcomes [count] and the
  // final statuses [count * links]. One call: upload, the trials of every scenario, download.
  virtual void run(const double* starts, const signed char* statuses,
                   const net::trials::ScenarioSpec* specs, int count,
                   net::trials::Outcome* outcomes, signed char* final_statuses) = 0;
  // Page-locks host arrays later calls pass (as BatchCholesky::pin); nothing where refused.
  virtual void pin(void* host, std::size_t bytes) = 0;
  // The scenarios one call can hold in device memory (a quarter of what is free at creation).
  virtual int capacity() const = 0;
  virtual double kernel_ms() const = 0;  // the last call's kernels
  virtual double call_ms() const = 0;    // the last call, copies included
};

// view: host pointers into the two pools (ints, reals), which are copied to the device whole.
// DeviceError without CUDA or a GPU.
std::unique_ptr<BatchTrials> make_batch_trials(const net::trials::NetworkView& view,
                                               const int* ints, std::size_t int_count,
                                               const double* reals, std::size_t real_count);

}  // namespace cgs
