// netsolve --solver cg's default (the network rule, app/netsolve.cpp with_network_rule): CG
// preconditioned by chol in EPANET's elimination order, started from M^-1 b and stopped at the
// direct solve's backward error (network/cg_solver.cpp, network/README.md). Its answers are the
// direct path's bit for bit, and so EPANET's at every reporting time, also on the networks where
// EPANET's answer is its own rounding (zones cut off by closed links), where neither another
// factor (CHOLMOD, Eigen) nor CG from any other start reproduces it.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "network/inp_reader.hpp"
#include "network/linear_solver.hpp"
#include "network/network_test_data.hpp"
#include "network/results_io.hpp"
#include "network/simulation.hpp"

namespace cgs::net {
namespace {

SolveRequest network_rule() {
  SolveRequest r;
  r.precond = parse_precond("chol:order=given,pivot=fail");
  r.backend.device = Device::serial;
  r.backend.threads = 1;
  r.cg.tol = 1e-12;
  r.cg.max_iters = 200000;
  return r;
}

SimulationResults run(const Network& net, LinearSolver& solver) {
  SimulationOptions o;
  o.duration = 86400;
  return simulate(net, solver, o);
}

// Every reporting time's heads, flows and tank volumes equal, to the last bit.
void check_identical(const SimulationResults& a, const SimulationResults& b) {
  REQUIRE(a.reports.size() == b.reports.size());
  for (std::size_t t = 0; t < a.reports.size(); ++t) {
    CAPTURE(a.reports[t].time);
    CHECK(a.reports[t].time == b.reports[t].time);
    CHECK(a.reports[t].head == b.reports[t].head);
    CHECK(a.reports[t].flow == b.reports[t].flow);
    CHECK(a.reports[t].volume == b.reports[t].volume);
  }
  CHECK(a.steps.size() == b.steps.size());
}

TEST_CASE("CG with EPANET's factor: the direct path's series bit for bit (repository networks)") {
  const std::string dir = test::repo_networks();
  for (const std::string name : {"Net1", "Net3"}) {
    CAPTURE(name);
    const Network net = read_inp(dir + "/" + name + ".inp");
    auto direct = make_direct_solver();
    auto cg = make_cg_solver(network_rule());
    const SimulationResults d = run(net, *direct);
    const SimulationResults c = run(net, *cg);
    CHECK(c.ok());
    check_identical(d, c);
    // The factor's answer passes the direct solve's test: no CG iteration was needed, and
    // every trial's backward error is at rounding level.
    long iterations = 0;
    for (const StepReport& r : c.steps)
      for (const TrialReport& t : r.solve.trial_reports) {
        iterations += t.cg_iterations;
        CHECK(t.backward_error <= 1e-12);
        CHECK(t.linear_converged);
      }
    CHECK(iterations == 0);
  }
}

// The shared networks whose answer EPANET's rounding decides (network/README.md): CHOLMOD's and
// Eigen's factors, and CG from the previous heads, all leave EPANET's series there (C-Town by
// 62 ft); the network rule matches it at every reporting time.
TEST_CASE("CG with EPANET's factor matches EPANET where only EPANET's rounding decides") {
  if (!test::have_shared_data()) return;
  const std::string dir = test::shared_data() + "/networks";
  for (const std::string name :
       {"C-Town", "ky5", "ky14", "Wolf-Cordera_wolf-3", "BWSN_Network_1", "Richmond_standard"}) {
    CAPTURE(name);
    const Network net = read_inp(dir + "/" + name + ".inp");
    auto cg = make_cg_solver(network_rule());
    const SimulationResults s = run(net, *cg);
    const SeriesComparison c = compare_series_with_reference(
        net, s, find_reference_file(dir + "/reference-eps", name, "nodes"),
        find_reference_file(dir + "/reference-eps", name, "links"), 1e-3, 1e-3,
        flow_noise_floor(net));
    for (const auto& f : c.failures) MESSAGE("  " << f);
    CHECK(c.ok());
    auto direct = make_direct_solver();
    check_identical(run(net, *direct), s);
  }
}

}  // namespace
}  // namespace cgs::net
