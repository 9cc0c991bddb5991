#include "solver/solve.hpp"

#include <algorithm>
#include <chrono>

#include "solver/device_choice.hpp"
#include "solver/inspector.hpp"
#include "solver/precond_probe.hpp"

namespace cgs {

PlannedSolver plan_and_analyze(const SolveRequest& request, const CsrMatrix<double>& A,
                               const std::vector<double>* rhs) {
  if (request.precond_auto()) return choose_preconditioner(request, A, rhs);
  if (request.needs_inspector()) return inspect(request, A);
  return analyze_planned(request, A);
}

SolveReport solve_system(const CsrMatrix<double>& A, const std::vector<double>& b,
                         std::vector<double>& x, const SolveRequest& request) {
  if (A.rows != A.cols)
    throw InputError("CG needs a square matrix, got " + std::to_string(A.rows) + " x " +
                     std::to_string(A.cols));
  check_sizes(A, b, x);  // before planning or inspecting anything
  // --device auto: the device first (its probe's time counts as the inspector's), then the plan.
  const auto start = std::chrono::steady_clock::now();
  SolveRequest on_device = request;
  const DeviceChoice device = choose_device(request, A, &b);
  on_device.backend.device = device.device;
  on_device.device_auto = false;
  const double choice_seconds =
      request.device_auto
          ? std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()
          : 0.0;
  PlannedSolver planned = plan_and_analyze(on_device, A, &b);
  if (!device.why.empty()) planned.solver->note_reason(device.why);
  // auto's probe ran from zero on this b: where the caller gave no initial guess, the solve goes
  // on from the probe's x instead of repeating its iterations.
  const bool zero_guess = std::all_of(x.begin(), x.end(), [](double v) { return v == 0; });
  const bool warm = !planned.warm_start.empty() && zero_guess;
  if (warm) x = planned.warm_start;
  SolveReport report = planned.solver->solve(b, x);
  if (warm) report.probe_iterations = planned.warm_start_iterations;
  if (warm) report.times.probe_kept_seconds = planned.warm_start_seconds;
  report.times.inspect_seconds = planned.inspect_seconds + choice_seconds;
  report.times.thread_start_seconds = planned.thread_start_seconds;
  return report;
}

}  // namespace cgs
