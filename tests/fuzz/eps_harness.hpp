// The fuzz_eps harness, shared by the libFuzzer target (fuzz_eps.cpp) and the test that replays
// its reproducers and seeds (tests/network/test_eps_fuzz_findings.cpp): a short extended-period
// simulation of a network given as .inp text, what netsolve runs after reading the file
// (parse_inp, then simulate: connectivity, patterns, controls, rules, tanks, the time steps, and
// the water quality where the file asks for it) with the direct solver, and EPANET's report file
// (network/epanet_report.hpp) as [REPORT] shapes it.
//
// Bounded so that a legitimately long run is not taken for a finding: at most 2 hours simulated,
// 100 trials a period (+10 with UNBALANCED CONTINUE), 400 steps and 2 s of wall time; reaching a
// bound ends the run quietly. Findings (thrown as fuzz::Finding): periods repeating at one time
// (the run would never end: EPANET's nexthyd always moves the clock on), anything but InputError
// escaping. A hang inside one period is libFuzzer's -timeout.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <memory>
#include <sstream>
#include <string>

#include "finding.hpp"
#include "formats/types.hpp"
#include "network/epanet_report.hpp"
#include "network/inp_reader.hpp"
#include "network/linear_solver.hpp"
#include "network/quality/quality_run.hpp"
#include "network/simulation.hpp"

namespace cgs::fuzz {

struct EpsOutcome {
  bool parsed = false;     // the reader took the text
  bool simulated = false;  // connected, and the simulation ran
  std::size_t steps = 0;   // hydraulic steps run (up to the bound)
  bool bounded = false;    // a bound ended the run
};

namespace eps_bounds {
constexpr std::size_t kMaxNodes = 64;  // the cost is in the steps, not in the size
constexpr long kMaxSimulatedSeconds = 2 * 3600;
constexpr int kMaxTrials = 100, kMaxExtraTrials = 10;
constexpr std::size_t kMaxSteps = 400, kMaxStalledSteps = 20;
constexpr double kMaxWallSeconds = 2.0;
}  // namespace eps_bounds

inline EpsOutcome run_bounded_eps(const std::string& text) {
  using namespace eps_bounds;
  struct BudgetSpent {};  // thrown from on_step to end a run that reached a bound
  EpsOutcome outcome;
  std::istringstream in(text);
  try {
    net::Network net = net::parse_inp(in, "fuzz.inp");
    outcome.parsed = true;
    if (net.nodes.size() > kMaxNodes) return outcome;
    net.options.max_trials = std::min(net.options.max_trials, kMaxTrials);
    net.options.extra_trials = std::min(net.options.extra_trials, kMaxExtraTrials);

    static const std::unique_ptr<net::LinearSolver> solver = net::make_direct_solver();
    net::SimulationOptions options;
    options.duration = std::min(net.times.duration, kMaxSimulatedSeconds);
    net::EpanetReport report(net, "fuzz.inp");
    report.attach(options);
    const auto report_step = options.on_step;
    const auto start = std::chrono::steady_clock::now();
    std::size_t stalled = 0;
    long last_time = -1;
    options.on_step = [&](const net::StepReport& step) {
      report_step(step);
      outcome.simulated = true;
      stalled = step.time == last_time ? stalled + 1 : 0;
      last_time = step.time;
      if (stalled > kMaxStalledSteps)
        throw Finding("fuzz_eps: " + std::to_string(stalled + 1) + " periods at time " +
                      std::to_string(step.time) + " s: the clock does not move on");
      const double wall =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (++outcome.steps >= kMaxSteps || wall > kMaxWallSeconds) throw BudgetSpent{};
    };
    std::unique_ptr<net::QualityRun> quality;
    if (net.quality.enabled()) {
      quality = std::make_unique<net::QualityRun>(net);
      quality->attach(options);
    }
    const net::SimulationResults run = net::simulate(net, *solver, options);
    report.text(run, nullptr);
  } catch (const InputError&) {
  } catch (const BudgetSpent&) {
    outcome.bounded = true;
  }
  return outcome;
}

}  // namespace cgs::fuzz
