// The steady-state trials of many scenarios of one network on the device (netsolve --study ...
// --device gpu, the "trials" engine): one thread a scenario runs
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
  // The start every later call's scenarios differ from (trial_kernels.hpp's StartChanges):
  // layout.start() doubles, as GradientAlgorithm::export_trial_start writes them, and the links'
  // statuses.
  virtual void set_base(const double* start, const signed char* statuses) = 0;
  // count scenarios, each the base with its changes (host arrays), specs [count]. Writes
  // outcomes [count] and the final statuses [count * links], one scenario after another. One
  // call: upload, the trials of every scenario, download.
  virtual void run(const net::trials::StartChanges& changes, const net::trials::ScenarioSpec* specs,
                   int count, net::trials::Outcome* outcomes, signed char* final_statuses) = 0;
  // The scenarios one call can hold (on the device: half the memory free at creation).
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
