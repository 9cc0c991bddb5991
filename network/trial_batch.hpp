// The trials engine's network (trial_kernels.hpp's NetworkView and the arrays behind it), built
// once per study from the network and its gradient algorithm's structure, and the engine's host
// executor: the same period, one scenario after another on the cores (the device's reference,
// netsolve --batch-engine trials without --device gpu).
#pragma once

#include <memory>
#include <vector>

#include "network/cholesky_schedule.hpp"
#include "network/hydraulics.hpp"
#include "network/network.hpp"
#include "network/trial_kernels.hpp"
#include "network/batch_trials.hpp"

namespace cgs::net {

struct TrialNetwork {
  std::vector<int> ints;      // every int array of the view, one after another
  std::vector<double> reals;  // every double array
  CholeskySchedule schedule;  // its arrays are copied into ints too
  std::vector<int> a_row_ptr, a_col;  // A's pattern, with view.pcg only (copied into ints too)
  trials::NetworkView view;   // host pointers into ints and reals
  trials::Layout layout() const { return trials::layout_of(view); }
};

// structure: a GradientAlgorithm of `net` (the network and options as the gradient algorithm
// reads them, the matrix slots, resistances and EPANET's elimination order). accuracy: the
// trials' ACCURACY; pressure_threshold in the file's units (the rows' below-threshold count);
// pcg: the trials' linear solve (trial_pcg.hpp; default: the factor's answer, the direct path).
std::unique_ptr<TrialNetwork> build_trial_network(const Network& net,
                                                  const GradientAlgorithm& structure,
                                                  double accuracy, double pressure_threshold,
                                                  const trials::PcgOptions& pcg = {});

// Why `net` cannot run on the trials engine with these options, or empty (none today: the engine
// runs every network the host engines run; the study's scope may still decline it).
std::string trial_engine_limits(const Network& net);

// The host executor: BatchTrials::run on the cores (OpenMP), one scenario per thread at a time.
std::unique_ptr<BatchTrials> make_host_batch_trials(const TrialNetwork& network);
// The device executor of the same network (DeviceError without a GPU).
std::unique_ptr<BatchTrials> make_device_batch_trials(const TrialNetwork& network);

}  // namespace cgs::net
