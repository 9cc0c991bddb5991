// The fuzz_cli_options harness, shared by the libFuzzer target (fuzz_cli_options.cpp) and the
// test that replays its reproducers and seeds (tests/app/test_cli_options_fuzz_findings.cpp).
//
// The input is up to six lines: the values of --precond, --format, --kernel, --gpu-loop, --device
// and netsolve's --duration (a missing line: that option not given). The first five go through
// the code cgsolve's command line runs: CLI11 with add_solver_options (its validators), then
// SolverCli::resolve, then a whole solve of a 16-row Poisson system (plan, inspector for auto,
// preconditioner, loop); --duration through parse_duration, as netsolve's main calls it.
//
// Expected answers to bad values: CLI::ParseError (a validator), InputError, DeviceError (a GPU
// asked of a build or machine without one). Findings (thrown as fuzz::Finding): a solve that says
// it converged with a wrong x, a negative duration; anything else escaping, a crash or a
// sanitizer report.
#pragma once

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstddef>
#include <sstream>
#include <string>
#include <vector>

#include "cli_options.hpp"
#include "finding.hpp"
#include "formats/generators.hpp"
#include "formats/types.hpp"
#include "network/epanet_time.hpp"
#include "solver/solve.hpp"
#include "spmv/backend.hpp"

namespace cgs::fuzz {

enum class OptionsOutcome { refused_by_cli, refused, no_device, converged, not_converged };

struct CliOptionsOutcome {
  OptionsOutcome solve = OptionsOutcome::refused_by_cli;
  bool duration_given = false, duration_read = false;
  long duration = -1;  // seconds, when read
};

namespace cli_options_detail {

inline const char* const kOptions[] = {"--precond", "--format", "--kernel", "--gpu-loop",
                                       "--device"};
constexpr std::size_t kSolverOptions = sizeof kOptions / sizeof kOptions[0];

inline std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; lines.size() <= kSolverOptions && std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

inline OptionsOutcome solve_with(const std::vector<std::string>& values) {
  // argv as the shell gives it: a value ends at a NUL byte, as on a real command line.
  std::vector<std::string> words{"cgsolve"};
  for (std::size_t i = 0; i < values.size() && i < kSolverOptions; ++i) {
    words.push_back(kOptions[i]);
    words.push_back(values[i]);
  }
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  CLI::App app;
  SolverCli cli;
  add_solver_options(app, cli);
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError&) {
    return OptionsOutcome::refused_by_cli;
  }
  try {
    cli.resolve();
    cli.request.backend.threads = 1;  // the fuzzer runs one job per core
    cli.request.cg.max_iters = 200;   // a 16-row system needs 16 in exact arithmetic
    static const CsrMatrix<double> A = generate_matrix("gen:poisson2d:4");
    static const std::vector<double> b =
        multiply(A, std::vector<double>(static_cast<std::size_t>(A.rows), 1.0));
    std::vector<double> x;
    const SolveReport report = solve_system(A, b, x, cli.request);
    if (!report.cg.ok()) return OptionsOutcome::not_converged;  // reported, not wrong
    for (double v : x)  // b = A * 1: x must be all ones when the solve says it converged
      if (!(std::fabs(v - 1.0) < 1e-3))
        throw Finding("fuzz_cli_options: converged with x = " + std::to_string(v) +
                      " where 1 is the answer (" + report.plan.summary() + ")");
    return OptionsOutcome::converged;
  } catch (const InputError&) {
    return OptionsOutcome::refused;
  } catch (const DeviceError&) {
    return OptionsOutcome::no_device;
  }
}

}  // namespace cli_options_detail

inline CliOptionsOutcome run_cli_options(const std::string& text) {
  using namespace cli_options_detail;
  CliOptionsOutcome outcome;
  const std::vector<std::string> lines = split_lines(text);
  outcome.solve = solve_with(lines);
  if (lines.size() > kSolverOptions) {
    outcome.duration_given = true;
    try {
      outcome.duration = net::parse_duration(lines[kSolverOptions]);
      outcome.duration_read = true;
    } catch (const InputError&) {
    }
    if (outcome.duration_read && outcome.duration < 0)
      throw Finding("fuzz_cli_options: --duration '" + lines[kSolverOptions] + "' read as " +
                    std::to_string(outcome.duration) + " s");
  }
  return outcome;
}

}  // namespace cgs::fuzz
