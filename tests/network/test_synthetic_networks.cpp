// A network made by scripts/generate_network.py (200 junctions, seed 11: mains grown from two
// pumped sources, loops, a tank whose level switches a pump, a PRV, two demand patterns) against
// EPANET 2.3.5's series for it at every reporting time of 24 h (data/networks/synthetic/README.md
// says how they were made). The generator's larger networks are the scale tests of
// bench/scripts/netsolve-scale.sh; this one keeps what it writes inside what netsolve equals.
#include <doctest/doctest.h>

#include <string>

#include "network/inp_reader.hpp"
#include "network/linear_solver.hpp"
#include "network/network_test_data.hpp"
#include "network/results_io.hpp"
#include "network/simulation.hpp"

namespace cgs::net {

TEST_CASE("a synthetic network from scripts/generate_network.py equals EPANET over 24 h") {
  const std::string dir = test::repo_networks() + "/synthetic";
  const Network net = read_inp(dir + "/synthetic_200.inp");
  // What the generator promises: junctions, sources with pumps, a tank, a PRV, a control.
  CHECK(net.junction_count == 200);
  int pumps = 0, prvs = 0, tanks = 0;
  for (const Link& l : net.links) pumps += l.type == LinkType::pump, prvs += l.type == LinkType::prv;
  for (const Node& n : net.nodes) tanks += n.type == NodeType::tank;
  CHECK(pumps == 2);
  CHECK(prvs == 1);
  CHECK(tanks == 1);
  CHECK(net.controls.size() == 2);

  auto solver = make_direct_solver();
  const SimulationResults s = simulate(net, *solver);
  REQUIRE(s.ok());
  CHECK(s.steps.size() == 28);  // 25 reporting times and 3 control or tank steps, as EPANET's
  const SeriesComparison c = compare_series_with_reference(
      net, s, find_reference_file(dir, "synthetic_200", "nodes"),
      find_reference_file(dir, "synthetic_200", "links"), 1e-3, 1e-3, flow_noise_floor(net));
  CHECK(c.times_compared == 25);
  CHECK(c.status_mismatches == 0);
  CHECK(c.max_head_error < 1e-6);
  CHECK(c.ok());
}

}  // namespace cgs::net
