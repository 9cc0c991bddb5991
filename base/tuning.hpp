// The process's tuning: every switch that changes how a solve runs without changing what the
// command line asked for (memory pools, huge pages, kernel variants kept for measurements), in
// one struct, so that none hides in the code that obeys it. docs/tuning.md has each field's why.
//
// tuning() reads the environment once, at its first call (never at static initialisation: a
// test or program that sets a variable before its first solve is heard); set_tuning() replaces
// it from code (the command-line options, tests, benchmarks). The report prints every field, and
// Plan::reasons and the summary each field that differs from its default. Each field's variable and
// option: tuning.cpp's table.
//
// The fields are plain values (no strings): tuning() may first run inside operator new
// (app/large_pages.cpp), where reading it must not allocate.
#pragma once

#include <string>
#include <vector>

namespace cgs {

enum class GpuTransport { automatic, nccl, mpi };
enum class AmgGalerkin { project, cusparse };

struct Tuning {
  // For users (each has a command-line option too).
  bool device_pool = true;  // device memory from the stream-ordered pool, not cudaMalloc/Free
  int device_tally = 0;     // at exit, device allocations/copies/syncs to stderr (2: big ones too)
  bool huge_pages = true;   // host blocks of 4 MiB or more asked to be backed by huge pages
  GpuTransport gpu_transport = GpuTransport::automatic;  // distributed GPU ranks' halo/sums path

  // For measurements and tests (the environment or code only).
  bool cluster_phases = false;  // cluster loop: per-phase cycles of an iteration to stderr
  bool cluster_lean = true;     // cluster batch: x, d, r in global memory where that fits more
  int cluster_reductions = 2;   // cluster loop, one system in double: 1 = one-reduction CG
  double cluster_replacement_slack = 10;  // one-reduction CG: restart when true ||r|| > slack x tol
  int cluster_threads = 0;     // cluster loop's pointwise blocks: 512 or 1024 (0: chosen)
  int cluster_blocks = 0;      // cluster loop's blocks per cluster (0: chosen)
  bool cluster_sweeps = true;  // cluster loop's program: a solve's levels as one sweep
  int gpu_sweep_span = 4;      // GPU programs: a solve's levels as one sweep, threads per row of
                               // its widest level (0: level by level)
  AmgGalerkin amg_galerkin = AmgGalerkin::project;  // AMG's device R A P
  int ic0_team = 4;                                 // threads from which ic0 factorises on a team
  long long ic0_device_rows = -1;  // rows from which ic0 sets up on the device (-1: ic0's own)
  double test_perturb_x = 0;       // cgsolve adds this x (1 + |x_i|) to x: tests of --validate
  bool netsolve_debug = false;     // netsolve's iterative refinement: a line a step to stderr
};

// The process's tuning (the environment's, read at the first call, unless set since).
const Tuning& tuning();
void set_tuning(const Tuning& t);
// The environment's values over the defaults (what tuning() starts from).
Tuning tuning_from_environment();

// One field, for the report and the docs: its name, environment variable, command-line option
// ("" none), value and default as text, and whether it is a flag, a whole number, a real number
// or a choice (how the JSON report types it).
struct TuningField {
  enum class Kind { flag, integer, real, choice };
  std::string name, variable, option, value, default_value;
  Kind kind = Kind::flag;
  bool differs() const { return value != default_value; }
};
std::vector<TuningField> tuning_fields(const Tuning& t);

// "tuning: NAME = VALUE (default D; VARIABLE or OPTION)", one a field that differs from its
// default; empty when none does.
std::vector<std::string> tuning_differences(const Tuning& t);

// The process's tuning with `change` made to a copy (what ScopedTuning is usually given).
template <typename Change>
Tuning tuning_with(Change change) {
  Tuning t = tuning();
  change(t);
  return t;
}

// Sets the process's tuning for a scope and restores the one before (tests, benchmarks).
class ScopedTuning {
 public:
  explicit ScopedTuning(const Tuning& t) : saved_(tuning()) { set_tuning(t); }
  ~ScopedTuning() { set_tuning(saved_); }
  ScopedTuning(const ScopedTuning&) = delete;
  ScopedTuning& operator=(const ScopedTuning&) = delete;

 private:
  Tuning saved_;
};

std::string to_string(GpuTransport t);
std::string to_string(AmgGalerkin g);

}  // namespace cgs
