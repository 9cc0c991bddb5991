// netsolve --solver cg with --precond none: every trial solved by cgsolve's CG on the
// symmetrically scaled system with iterative refinement (network/cg_solver.cpp: inner CG to a
// scaled relative residual of 1e-12, refined until the componentwise backward error reaches 1e-15
// or stops improving), and the heads and flows match EPANET's to the 1e-3. The default,
// CG preconditioned by EPANET's factor, is test_cg_epanet_factor.cpp's. See network/README.md.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "formats/matrix_market.hpp"
#include "network/hydraulics.hpp"
#include "network/inp_reader.hpp"
#include "network/results_io.hpp"
#include "network_test_data.hpp"

namespace cgs::net {
namespace {

// The serial device: these systems have at most a few thousand rows, where OpenMP threads only
// add synchronisation (and on a loaded machine, 30x the time); the iterates are the same.
SolveRequest cg_options(const Network& net) {
  SolveRequest o;
  o.backend.format = Format::csr;
  o.backend.device = Device::serial;
  o.cg.tol = 1e-12;
  o.cg.max_iters = std::max<long>(200000, 100L * net.junction_count);
  return o;
}

struct CgRun {
  HydraulicResults r;
  ReferenceComparison c;
  long iterations = 0;
  double seconds = 0;
};

CgRun run_with_cg(const std::string& inp, const std::string& reference_dir, double head_tol = 1e-3,
                  double flow_tol = 1e-3) {
  const Network net = read_inp(inp);
  auto solver = make_cg_solver(cg_options(net));
  CgRun run;
  run.r = solve_hydraulics(net, *solver);
  const std::string name = std::filesystem::path(inp).stem().string();
  if (flow_tol < 0) {  // EPANET's own convergence error: ACCURACY x the largest flow
    flow_tol = 0;
    for (double f : run.r.flow) flow_tol = std::max(flow_tol, std::abs(user_flow(net, f)));
    flow_tol *= net.options.accuracy;
  }
  run.c = compare_with_reference(net, run.r, reference_dir + "/" + name + "_nodes.csv",
                                 reference_dir + "/" + name + "_links.csv", head_tol, flow_tol,
                                 flow_noise_floor(net));
  for (const TrialReport& t : run.r.trial_reports) run.iterations += t.cg_iterations;
  run.seconds = run.r.total_seconds;
  MESSAGE(name << ": " << run.r.trials << " trials, " << run.iterations << " CG iterations, "
               << run.seconds << " s; max head error " << run.c.max_head_error << " ("
               << run.c.worst_node << "), max flow error " << run.c.max_flow_error << " ("
               << run.c.worst_link << ")");
  for (const auto& f : run.c.failures) MESSAGE("  " << f);
  return run;
}

// every_solve: each trial's CG solve reached a backward error of 1e-12. Not asked of the networks
// that only agree to ACCURACY: zones joined only through closed links (1e-8 couplings) make some
// of their trial systems singular to rounding, and CG stops at its iteration limit there.
void check_run(const CgRun& run, bool every_solve = true) {
  CHECK(run.r.converged);
  CHECK(run.c.ok());
  if (!every_solve) return;
  for (const TrialReport& t : run.r.trial_reports) {
    CAPTURE(t.trial);
    CHECK(t.linear_converged);
  }
}

TEST_CASE("Net1 and Net3 with CG match EPANET (repository copies)") {
  const std::string dir = test::repo_networks();
  for (const std::string name : {"Net1", "Net3"}) {
    CAPTURE(name);
    const CgRun run = run_with_cg(dir + "/" + name + ".inp", dir + "/reference");
    check_run(run);
    // The stopping test: every trial's solve ends at rounding level, a componentwise backward
    // error of a few eps, in a few refinement steps.
    for (const TrialReport& t : run.r.trial_reports) {
      CAPTURE(t.trial);
      CHECK(t.backward_error <= 1e-15);
      CHECK(t.refinement_steps >= 1);
      CHECK(t.refinement_steps <= 5);
    }
  }
}

TEST_CASE("refinement drives the backward error to rounding level (Net3 trial 1)") {
  // Refinement lowers the backward error far below what one CG solve to 1e-12 leaves.
  const std::string dir = test::repo_networks();
  const Network net = read_inp(dir + "/Net3.inp");
  GradientAlgorithm gga(net);
  gga.initialise();
  gga.start_period(0);
  const JunctionSystem& s = gga.assemble();
  SolveRequest o = cg_options(net);
  std::vector<double> plain(gga.heads().begin(), gga.heads().begin() + net.junction_count);
  std::vector<double> refined = plain;
  const auto one = make_cg_solver(o, RefinementOptions{1e-15, 1})->solve(s.A, s.b, plain);
  const auto ref = make_cg_solver(o)->solve(s.A, s.b, refined);
  MESSAGE("Net3 trial 1: plain CG backward error "
          << one.backward_error << " (" << one.iterations << " its), refined " << ref.backward_error
          << " (" << ref.iterations << " its, " << ref.refinement_steps << " solves)");
  CHECK(ref.converged);
  CHECK(ref.backward_error <= 1e-15);
  CHECK(ref.backward_error <= one.backward_error);
}

TEST_CASE("Net3's first trial system equals EPANET's (repository copy)") {
  const std::string dir = test::repo_networks();
  const Network net = read_inp(dir + "/Net3.inp");
  GradientAlgorithm gga(net);
  gga.initialise();
  gga.start_period(0);
  const JunctionSystem& s = gga.assemble();
  const auto A = read_matrix_market(dir + "/epanet-systems/Net3_step1.mtx.gz");
  const auto b = read_vector_market(dir + "/epanet-systems/Net3_step1_b.mtx.gz");
  REQUIRE(A.rows == s.A.rows);
  REQUIRE(A.row_ptr == s.A.row_ptr);
  REQUIRE(A.col_idx == s.A.col_idx);
  for (index_t k = 0; k < A.nnz(); ++k)
    CHECK(std::abs(s.A.values[k] - A.values[k]) <= 1e-12 * std::abs(A.values[k]) + 1e-300);
  for (index_t i = 0; i < A.rows; ++i)
    CHECK(std::abs(s.b[i] - b[i]) <= 1e-12 * std::max(std::abs(b[i]), 1.0));
}

// Every network EPANET accepts, held to the tolerance (heads 1e-3, flows 1e-3 relative
// or absolute, noise floor 1e-5 cfs), with CG as the linear solver. Not here:
// - Richmond_standard and Wolf-Cordera_wolf-3: EPANET's own answer there is only determined to
//   its ACCURACY (a direct solver does no better, test_reference_networks.cpp); checked below to
//   ACCURACY.
// - BWSN_Network_2: 15.8 million CG iterations, about 30 minutes on 2 cores; run only with
//   CGSOLVE_SLOW_TESTS=1 (it matched to 1e-3 when run by hand, network/README.md).
TEST_CASE("the real networks with CG match EPANET to 1e-3") {
  if (!test::have_shared_data()) return;
  const std::string dir = test::shared_data() + "/networks";
  for (const std::string name :
       {"Anytown",      "Balerma", "C-Town", "Exnet_EXN", "Fossolo_FOS", "Hanoi",
        "Modena_MOD",   "Net1",    "Net2",   "Net3",      "Pescara_PES", "Richmond_skeleton",
        "RuralNetwork", "ZJ",      "ky1",    "ky2",       "ky3",         "ky4",
        "ky5",          "ky6",     "ky7",    "ky14"}) {
    CAPTURE(name);
    check_run(run_with_cg(dir + "/" + name + ".inp", dir + "/reference"));
  }
}

// BWSN_Network_1: VALVE-180 closed at time 0 leaves a pocket joined only through 1e-8 couplings
// (trial 2 moves its heads by 1e9) and ACCURACY is 0.005: CG's answer in that pocket differs from
// the factorisation's by rounding, the trials take another path and stop at another point within
// ACCURACY (the direct solver matches to 1e-3, test_reference_networks.cpp).
TEST_CASE("BWSN_Network_1 and Wolf-Cordera_wolf-3 with CG match EPANET to its ACCURACY") {
  if (!test::have_shared_data()) return;
  const std::string dir = test::shared_data() + "/networks";
  for (const std::string name : {"BWSN_Network_1", "Wolf-Cordera_wolf-3"}) {
    CAPTURE(name);
    check_run(run_with_cg(dir + "/" + name + ".inp", dir + "/reference", 0.05, -1), false);
  }
}

// Known failure since the EPS work (pump speed patterns only for pumps that have one, EPANET's
// arithmetic for initial flows): Jacobi-CG takes 27 trials and ~80 s here and ends on another
// point than EPANET's (flows of 0.001 against 0.024 on a few links; heads within 0.0013). The
// direct solver, netsolve's default, matches (test_reference_networks.cpp). Run only with
// CGSOLVE_SLOW_TESTS=1, marked may_fail until it is fixed.
TEST_CASE("Richmond_standard with CG matches EPANET to its ACCURACY (CGSOLVE_SLOW_TESTS=1)" *
          doctest::may_fail()) {
  if (!test::have_shared_data()) return;
  const char* slow = std::getenv("CGSOLVE_SLOW_TESTS");
  if (slow == nullptr || std::string(slow) != "1") return;
  const std::string dir = test::shared_data() + "/networks";
  for (const std::string name : {"Richmond_standard"}) {
    CAPTURE(name);
    check_run(run_with_cg(dir + "/" + name + ".inp", dir + "/reference", 0.05, -1), false);
  }
}

TEST_CASE("BWSN_Network_2 with CG matches EPANET to 1e-3 (CGSOLVE_SLOW_TESTS=1)") {
  if (!test::have_shared_data()) return;
  const char* slow = std::getenv("CGSOLVE_SLOW_TESTS");
  if (!slow || std::string(slow) != "1") {
    MESSAGE(
        "skipped: BWSN_Network_2 with CG takes about 30 minutes on 2 cores; set "
        "CGSOLVE_SLOW_TESTS=1 to run it");
    return;
  }
  const std::string dir = test::shared_data() + "/networks";
  check_run(run_with_cg(dir + "/BWSN_Network_2.inp", dir + "/reference"));
}

}  // namespace
}  // namespace cgs::net
