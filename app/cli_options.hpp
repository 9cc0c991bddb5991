// Command-line options shared by cgsolve and netsolve: everything that chooses how a system is
// solved (format, device, kernel, ordering, precision, preconditioner, loop, tolerances).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "base/tuning.hpp"
#include "solver/plan.hpp"

namespace cgs {

// Text fields that CLI11 fills in; resolve() turns them into a SolveRequest (or InputError).
struct SolverCli {
  std::string format = "csr";
  std::string device = "cpu";
  std::string precond = "none";
  std::string precision = "double";
  std::string cpu_loop = "fused";
  std::string gpu_loop = "auto";
  bool rcm = false, no_rcm = false, no_spmv_timing = false;
  SolveRequest request;

  void resolve();  // parses the text fields into `request`
};

void add_solver_options(CLI::App& app, SolverCli& cli);

// The tuning fields a user may need (base/tuning.hpp, docs/tuning.md), as options; a field whose
// option is not given keeps what the environment set. apply() sets the process's tuning, before
// anything is allocated or solved.
struct TuningCli {
  std::string device_pool, huge_pages, device_tally, gpu_transport;
  void apply() const;
};

// --device-pool, --huge-pages, --device-tally; `distributed` (cgsolve): --gpu-transport too.
void add_tuning_options(CLI::App& app, TuningCli& cli, bool distributed);

// --cpu-loop and --gpu-loop values; InputError naming the option for any other.
CpuLoopAsk parse_cpu_loop(const std::string& name);
GpuLoopAsk parse_gpu_loop(const std::string& name);

// Exit codes, documented in the README.
enum ExitCode : int {
  kExitOk = 0,
  kExitNotConverged = 1,
  kExitBadInput = 2,
  kExitValidationFailed = 3,
  kExitDeviceUnavailable = 4,
};

}  // namespace cgs
