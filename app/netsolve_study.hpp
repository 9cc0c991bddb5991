// netsolve --study: the command-line side of a scenario study (network/study.hpp does the work):
// its flags, the progress line, the summary, the CSV and the JSON report.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <string>

#include "network/linear_solver.hpp"
#include "network/network.hpp"
#include "network/study_plan.hpp"

namespace cgs::net {

struct StudyArgs {
  std::string study;               // fireflow | closure | demand:N[:cv[:seed]]; empty: no study
  std::string csv;                 // --study-csv
  std::string elements;            // --elements FILE
  double flow = -1;                // --flow, the file's flow units; < 0: 1000 gpm in them
  double pressure_threshold = -1;  // the file's pressure units; < 0: 20 psi in them
  double residual_pressure = -1;   // < 0: no available-flow search
  bool cold_start = false;         // --cold-start: --start cold
  std::string start;               // --start auto|warm|cold; empty: cold, by default
  // --study-batch N: the batched engine with N scenarios in flight (0: not asked; --device gpu
  // takes it with kDefaultBatchSize)
  int batch = 0;
  // --batch-engine: what the batched engine solves with: cholesky (the batched sparse Cholesky),
  // cg (the batched CG: the cluster CG on the GPU), trials (every trial on the engine: the GPU
  // with --device gpu, else the host's executor), auto (trials with --device gpu and the native
  // direct solver where the study allows, else cg with --solver cg, else cholesky).
  std::string batch_engine = "auto";
};

void add_study_options(CLI::App& app, StudyArgs& args);

// Files the study reads and writes, registered before anything runs (outputs never over inputs).
void protect_study_files(const StudyArgs& args);

// Runs the study; returns the exit code (0: every scenario ok, 5: completed with failed or
// unbalanced scenarios, flagged in the CSV). duration: --duration's text (empty: steady state).
// run: how netsolve's other options (--threads, --device, --solver) ask the study to run; the
// study's own (--start, --study-batch, --batch-engine) are added from args.
int run_study_command(const StudyArgs& args, const Network& net, const std::string& duration,
                      StudyRunRequest run, const std::string& report_path, bool quiet,
                      const std::function<std::unique_ptr<LinearSolver>()>& make_solver);

}  // namespace cgs::net
