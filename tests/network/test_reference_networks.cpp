// Every real network of ../shared/data/networks against EPANET 2.3.5's own time-0 results:
// heads within 1e-3 and flows within 1e-3 (relative or absolute), at every node and link joined
// to a reservoir or tank through open links. The linear systems are solved by netsolve's direct
// solver (network/direct_solver.cpp), each of its backends; test_cg_networks.cpp does the same
// with our CG.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include "formats/types.hpp"
#include "network/hydraulics.hpp"
#include "network/inp_reader.hpp"
#include "network/results_io.hpp"
#include "network_test_data.hpp"

namespace cgs::net {
namespace {

std::vector<std::string> reference_networks() {
  std::set<std::string> names;
  for (const auto& entry :
       std::filesystem::directory_iterator(test::shared_data() + "/networks/reference")) {
    const std::string file = entry.path().filename().string();
    const auto at = file.rfind("_nodes.csv");
    if (at != std::string::npos && at + 10 == file.size()) names.insert(file.substr(0, at));
  }
  return {names.begin(), names.end()};
}

// Networks whose time-0 answer from EPANET is itself only determined to EPANET's ACCURACY: their
// trial systems are so ill-conditioned (condition numbers to 1e12, zones cut off by closed links)
// that two exact direct solvers disagree on EPANET's own system (by 0.004 ft on all of
// Wolf-Cordera_wolf-3 step 5, 3.3 ft on BWSN_Network_2 step 5, 3e5 ft in a cut-off zone of
// Richmond_standard step 4), the flows leaking through closed links differ, and the trials follow a
// different path to a point within ACCURACY of the solution. For these the comparison holds heads
// to 0.05 and flows to ACCURACY x the largest flow, the size of EPANET's own convergence error.
bool converges_only_to_accuracy(const std::string& name) {
  return name == "BWSN_Network_1" || name == "BWSN_Network_2" || name == "Richmond_standard" ||
         name == "Wolf-Cordera_wolf-3";
}

double largest_flow(const Network& net, const HydraulicResults& r) {
  double q = 0;
  for (double f : r.flow) q = std::max(q, std::abs(user_flow(net, f)));
  return q;
}

TEST_CASE("real networks match EPANET's time-0 results (direct solver)") {
  if (!test::have_shared_data()) return;
  const std::string dir = test::shared_data() + "/networks/";
  const auto names = reference_networks();
  CHECK(names.size() == 26);
  std::vector<DirectBackend> backends{DirectBackend::native, DirectBackend::eigen};
  if (cholmod_available()) backends.push_back(DirectBackend::cholmod);
  for (DirectBackend backend : backends)
    for (const std::string& name : names) {
      CAPTURE(name);
      CAPTURE(static_cast<int>(backend));  // native, cholmod, eigen: 1, 2, 3
      const Network net = read_inp(dir + name + ".inp");
      auto solver = make_direct_solver(backend);
      const HydraulicResults r = solve_hydraulics(net, *solver);
      const bool loose = converges_only_to_accuracy(name);
      const double head_tol = loose ? 0.05 : 1e-3;
      const double flow_tol = loose ? net.options.accuracy * largest_flow(net, r) : 1e-3;
      const auto c = compare_with_reference(net, r, dir + "reference/" + name + "_nodes.csv",
                                            dir + "reference/" + name + "_links.csv", head_tol,
                                            flow_tol, flow_noise_floor(net));
      MESSAGE(name << std::string(loose ? " [to ACCURACY]" : "") << ": " << r.trials << " trials, "
                   << c.nodes_compared << " nodes (" << c.cut_off_skipped << " cut off), "
                   << c.links_compared << " links; max head error " << c.max_head_error << " ("
                   << c.worst_node << "), max flow error " << c.max_flow_error << " ("
                   << c.worst_link << ")");
      for (const auto& f : c.failures) MESSAGE("  " << f);
      CHECK(r.converged);
      CHECK(c.ok());
    }
}

TEST_CASE("the networks EPANET rejects are rejected too") {
  if (!test::have_shared_data()) return;
  const std::string dir = test::shared_data() + "/networks/";
  CHECK_THROWS_WITH_AS(read_inp(dir + "Exnet.inp"),
                       doctest::Contains("invalid option value 20 in [TIMES] section"), InputError);
  CHECK_THROWS_WITH_AS(read_inp(dir + "Wolf-Cordera_initial.inp"),
                       doctest::Contains("syntax error 233.0 in [PUMPS] section"), InputError);
}

}  // namespace
}  // namespace cgs::net
