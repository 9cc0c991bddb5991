// --device auto: which device runs a solve, decided before anything is built on the GPU. The
// GPU only where its forecast time to solution, its fixed costs included, beats the CPU's:
//   choose_device    gathers the figures (measure_device_figures) and decides (decide_device);
//                    the CUDA driver is started only once the GPU is chosen (cuda_device_present
//                    first: starting it costs ~0.1 s, more than many whole CPU solves);
//   the figures      the GPU's fixed cost (driver and context where this process has not made
//                    them, module loads and first launches, A's upload); for each candidate the
//                    request leaves open (its --precond, or all for auto), its forecast on each
//                    device: AMG's from its set-up rates and kAmgWork, chol's from its counted
//                    factor on a network's graph, Jacobi's from a short Jacobi-CG probe on the
//                    CPU (its iteration measured there, its iterations forecast);
//   decide_device    the smaller forecast, with every figure in its reason.
// The probe is skipped where the size decides without it: where the GPU's fixed cost alone is
// above the CPU's forecast, or where the probe would cost more than a quarter of the forecasts it
// could change. The reason goes first in the plan's reasons (Plan::reasons).
#pragma once

#include <limits>
#include <string>
#include <vector>

#include "formats/csr.hpp"
#include "solver/plan.hpp"

namespace cgs {

// What the choice is made from (seconds; infinity where not known).
struct DeviceFigures {
  std::string no_gpu;            // why there is no GPU to choose (empty: there is one)
  double gpu_fixed = 0;          // before the GPU's first iteration, beyond the CPU's own set-up
  bool context_counted = false;  // gpu_fixed includes making the device's context
  double cpu_iteration = 0, gpu_iteration = 0;  // a Jacobi-CG iteration on each
  bool cpu_measured = false;                    // cpu_iteration from the probe, not the rate
  double iterations = std::numeric_limits<double>::infinity();  // Jacobi's forecast
  bool solved_by_probe = false;  // the CPU probe converged: nothing is left to choose for
  double chol_cpu = std::numeric_limits<double>::infinity();  // a network's graph: chol's
  double chol_gpu = std::numeric_limits<double>::infinity();  // forecast, set-up and solve
  double amg_cpu = std::numeric_limits<double>::infinity();   // AMG's: set-up and kAmgWork
  double amg_gpu = std::numeric_limits<double>::infinity();   // Jacobi iterations' time
  std::string not_probed;  // why the CPU was not probed (empty where it was, or for Jacobi)
};

struct DeviceChoice {
  Device device = Device::omp;
  std::string why;  // "device: gpu (...)", for the plan's reasons
};

// The decision from the figures alone (no device touched): the CPU without a GPU, or where its
// best forecast (Jacobi's, AMG's, chol's, as known) is not above the GPU's with its fixed cost.
DeviceChoice decide_device(const DeviceFigures& f);

// AMG's solve after its set-up, in Jacobi-CG iterations' time on the same device: 8-11
// iterations on Poisson grids, each 8.7x (CPU, 16 threads) to 11.6x (H200) a Jacobi iteration
// (gen:poisson2d:1000). Optimistic where AMG needs hundreds (elasticity): the same on both
// devices, so the device's choice holds where the preconditioner's may not.
inline constexpr double kAmgWork = 100;

// The figures for A on this machine: probes the CPU (a few Jacobi-CG iterations on `rhs`, or on a
// fixed random vector where none is given) only where Jacobi is a candidate and the size alone
// does not decide.
DeviceFigures measure_device_figures(const SolveRequest& request, const CsrMatrix<double>& A,
                                     const std::vector<double>* rhs);

// The request's device when it is not auto; else decide_device(measure_device_figures(...)).
DeviceChoice choose_device(const SolveRequest& request, const CsrMatrix<double>& A,
                           const std::vector<double>* rhs);

}  // namespace cgs
