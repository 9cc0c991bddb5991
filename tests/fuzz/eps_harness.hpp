// The fuzz_eps harness, shared by the libFuzzer target (fuzz_eps.cpp) and the test that replays
// its reproducers and seeds (tests/network/test_eps_fuzz_findings.cpp): a short extended-period
// simulation of a network given as .inp text, what netsolve NET.inp NET.rpt NET.out runs after
// reading the file (parse_inp, then simulate: connectivity, patterns, controls, rules, tanks, the
// time steps, and the water quality where the file asks for it) with the direct solver, hooked as
// netsolve hooks it: the energy meter and EPANET's binary output file (network/epanet_out.hpp,
// written to a temporary file of this process and read back), the quality run, and EPANET's
// report (network/epanet_report.hpp, shaped by [REPORT], in memory) with its energy table.
//
// Bounded so that a legitimately long run is not taken for a finding: at most 2 hours simulated,
// 100 trials a period (+10 with UNBALANCED CONTINUE), 400 steps and 2 s of wall time; reaching a
// bound ends the run quietly (the .out is then left unfinished: its writer removes it). Findings
// (thrown as fuzz::Finding): periods repeating at one time (the run would never end: EPANET's
// nexthyd always moves the clock on), a finished .out that does not read back as the run wrote
// it (its counts, its periods, its warning flag), anything but InputError escaping. A hang
// inside one period is libFuzzer's -timeout.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>

#include "finding.hpp"
#include "formats/types.hpp"
#include "network/energy.hpp"
#include "network/epanet_out.hpp"
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
  bool quality = false;    // the run had water quality (a QualityRun)
  int out_periods = -1;    // periods in the .out read back; -1: none finished
  std::size_t report_chars = 0;  // the .rpt's length; 0: none written
};

namespace eps_bounds {
constexpr std::size_t kMaxNodes = 64;  // the cost is in the steps, not in the size
constexpr long kMaxSimulatedSeconds = 2 * 3600;
constexpr int kMaxTrials = 100, kMaxExtraTrials = 10;
constexpr std::size_t kMaxSteps = 400, kMaxStalledSteps = 20;
constexpr double kMaxWallSeconds = 2.0;
}  // namespace eps_bounds

// The .out, finished, read back: what the writer says it wrote, every period value a number.
inline int check_out_file(const std::string& path, const net::Network& net,
                          const net::EpanetOutWriter& out) {
  net::EpanetOutFile file;
  try {
    file = net::read_epanet_out(path);
  } catch (const InputError& e) {
    throw Finding(std::string("fuzz_eps: the .out does not read back: ") + e.what());
  }
  const auto same = [](long a, std::size_t b) { return a >= 0 && static_cast<std::size_t>(a) == b; };
  if (!same(file.nodes(), net.nodes.size()) || !same(file.links(), net.links.size()) ||
      file.warning != out.warning() || file.period_count != out.periods())
    throw Finding("fuzz_eps: the .out's counts are not the run's (" +
                  std::to_string(file.period_count) + " periods, the writer " +
                  std::to_string(out.periods()) + ")");
  // Not a finding: a NaN or an infinity in a period. EPANET writes them too where it accepts
  // extreme values (regressions/fuzz_eps/nan-friction-factor-diameter-beyond-float.inp: a
  // diameter of 2e107 in is inf as float, its friction factor inf x 0; netsolve's .out is
  // byte for byte runepanet's).
  return file.period_count;
}

// One file a process (libFuzzer's fork mode runs several).
inline std::string out_path() {
  return (std::filesystem::temp_directory_path() /
          ("cgsolve-fuzz-eps-" + std::to_string(::getpid()) + ".out"))
      .string();
}

inline EpsOutcome run_bounded_eps(const std::string& text) {
  using namespace eps_bounds;
  struct BudgetSpent {};  // thrown from on_step to end a run that reached a bound
  EpsOutcome outcome;
  std::istringstream in(text);
  const std::string out_file = out_path();
  try {
    net::Network net = net::parse_inp(in, "fuzz.inp");
    outcome.parsed = true;
    if (net.nodes.size() > kMaxNodes) return outcome;
    net.options.max_trials = std::min(net.options.max_trials, kMaxTrials);
    net.options.extra_trials = std::min(net.options.extra_trials, kMaxExtraTrials);

    static const std::unique_ptr<net::LinearSolver> solver = net::make_direct_solver();
    net::SimulationOptions options;
    options.duration = std::min(net.times.duration, kMaxSimulatedSeconds);
    options.keep_reports = true;
    // As netsolve hooks them (app/netsolve.cpp simulate_network): the energy meter and the .out,
    // the quality run after them (it chains their on_period), the report last.
    std::unique_ptr<net::QualityRun> quality;
    if (net.quality.enabled()) quality = std::make_unique<net::QualityRun>(net);
    outcome.quality = quality != nullptr;
    net::EnergyMeter energy(net, options.duration);
    net::EpanetOutWriter out(net, out_file, "fuzz.inp", options.duration,
                             quality ? &quality->engine() : nullptr);
    net::record_energy_and_output(options, energy, &out);
    if (quality) quality->attach(options);
    net::EpanetReport report(net, "fuzz.inp");
    report.attach(options, quality ? &quality->engine() : nullptr);
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
    const net::SimulationResults run = net::simulate(net, *solver, options);
    const net::EnergyReport used = energy.report();
    const net::EnergyTable table = net::energy_table(net, used);
    outcome.report_chars = report.text(run, &table).size();
    if (run.error.empty()) {  // netsolve finishes the .out only after a whole run
      out.finish(used);
      outcome.out_periods = check_out_file(out_file, net, out);
      std::filesystem::remove(out_file);
    }
  } catch (const InputError&) {
  } catch (const BudgetSpent&) {
    outcome.bounded = true;
  }
  return outcome;
}

}  // namespace cgs::fuzz
