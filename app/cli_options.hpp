// Command-line options shared by cgsolve and netsolve: everything that chooses how a system is
// solved (format, device, kernel, sorting, precision, preconditioner, tolerances).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "solver/solve.hpp"

namespace cgs {

// Text fields that CLI11 fills in; resolve() turns them into SolveOptions (or InputError).
struct SolverCli {
  std::string format = "csr";
  std::string device = "cpu";
  std::string precond = "none";
  std::string precision = "double";
  std::string cpu_loop = "fused";
  std::string gpu_loop = "auto";
  SolveOptions options;

  void resolve();  // parses the text fields into `options`
};

void add_solver_options(CLI::App& app, SolverCli& cli);

// Exit codes, documented in the README.
enum ExitCode : int {
  kExitOk = 0,
  kExitNotConverged = 1,
  kExitBadInput = 2,
  kExitValidationFailed = 3,
  kExitDeviceUnavailable = 4,
};

}  // namespace cgs
