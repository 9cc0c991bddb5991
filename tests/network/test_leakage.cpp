// EPANET 2.3's pipe leakage ([LEAKAGE], the FAVAD model of leakage.c; issue 48): each pipe's leak
// area and its growth with pressure, half to each junction end, as two emitters per junction;
// the leak flows in the trials, their convergence test, and the leakage in each junction's
// demand (EPANET's EN_DEMAND) and on its own (EN_LEAKAGEFLOW). Against EPANET 2.3.5's series
// (data/networks/epanet23/README.md).
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>
#include <string>

#include "base/input_error.hpp"
#include "network/gga_network.hpp"
#include "network/hydraulics.hpp"
#include "network/inp_reader.hpp"
#include "network/linear_solver.hpp"
#include "network/results_io.hpp"
#include "network/simulation.hpp"
#include "network_test_data.hpp"

namespace cgs::net {
namespace {

const std::string kDir = test::repo_networks() + "/epanet23";

Network parse(const std::string& text) {
  std::istringstream in(text);
  return parse_inp(in, "leak.inp");
}

// SI: a reservoir, junctions A and B, pipe P1 (R-A, 1000 m) and P2 (A-B, 500 m), a tank T on B.
const char* kLeaky =
    "[OPTIONS]\nUNITS LPS\n[RESERVOIRS]\nR 60\n[JUNCTIONS]\nA 10 5\nB 8 5\n[TANKS]\nT 40 5 1 10 15 0\n"
    "[PIPES]\nP1 R A 1000 300 120\nP2 A B 500 200 120\nP3 B T 300 200 120\n"
    "[PUMPS]\nU1 R B POWER 5\n";

TEST_CASE("leakage: EPANET's node coefficients from the pipes' leaks") {
  const Network net =
      parse(std::string(kLeaky) + "[LEAKAGE]\nP1 2 0.1\nP2 1 0\nP3 0 0.3\nU1 5 5\n");
  const Link& p1 = net.links[net.find_link("P1")];
  CHECK(p1.leak_area == doctest::Approx(2 * 0.3048).epsilon(1e-12));  // per 100 m -> per 100 ft
  CHECK(p1.leak_expansion == doctest::Approx(0.1 * 0.3048).epsilon(1e-12));
  CHECK(net.links[net.find_link("U1")].leak_area == 0);  // not a pipe: ignored, as EPANET
  GgaNetwork g;
  g.load(net);
  REQUIRE(g.leaks.size() == 2);
  const int a = net.find_node("A"), b = net.find_node("B");
  CHECK(g.leaks[0] == a);
  CHECK(g.leaks[1] == b);
  // convert_pipe_to_node_leakage: 0.6 sqrt(2g) 1e-6 x area / 0.3048^2 (expansion / 0.3048) x the
  // pipe's 100 ft sections, all of P1's at A (R is a reservoir), half of P2's at each end, all of
  // P3's at B; then 1 / c^2 and 1 / c^(2/3).
  const double c = 4.8149766e-6, m = 0.3048;
  const double sections1 = net.links[net.find_link("P1")].length / 100.0;
  const double sections2 = net.links[net.find_link("P2")].length / 100.0 / 2.0;
  const double sections3 = net.links[net.find_link("P3")].length / 100.0;
  const double area_a = c * p1.leak_area / (m * m) * sections1 +
                        c * net.links[net.find_link("P2")].leak_area / (m * m) * sections2;
  const double expansion_a = c * p1.leak_expansion / m * sections1;
  CHECK(g.leak_fixed[0] == doctest::Approx(1.0 / (area_a * area_a)).epsilon(1e-12));
  CHECK(g.leak_variable[0] == doctest::Approx(1.0 / std::pow(expansion_a, 2.0 / 3.0)).epsilon(1e-12));
  const double expansion_b =
      c * net.links[net.find_link("P3")].leak_expansion / m * sections3;
  CHECK(g.leak_variable[1] == doctest::Approx(1.0 / std::pow(expansion_b, 2.0 / 3.0)).epsilon(1e-12));
}

TEST_CASE("leakage: the steady state's leaks follow the FAVAD equation at each junction") {
  const Network net = parse(std::string(kLeaky) + "[LEAKAGE]\nP1 2 0.1\nP2 1 0\nP3 0 0.3\n");
  auto solver = make_direct_solver();
  const HydraulicResults r = solve_hydraulics(net, *solver);
  REQUIRE(r.converged);
  GgaNetwork g;
  g.load(net);
  for (std::size_t j = 0; j < g.leaks.size(); ++j) {
    const int i = g.leaks[j];
    const double h = r.head[i] - net.nodes[i].elevation;
    const double expected = std::sqrt(h / g.leak_fixed[j]) + std::pow(h / g.leak_variable[j], 1.5);
    CAPTURE(i);
    CHECK(r.leakage[i] > 0.0);
    CHECK(std::abs(r.leakage[i] - expected) <= 1e-4);  // leakagehasconverged's QTOL, cfs
    CHECK(r.demand[i] == doctest::Approx(r.delivered_demand[i] + r.leakage[i]).epsilon(1e-12));
  }
}

TEST_CASE("leakage: [LEAKAGE] errors as EPANET's leakagedata") {
  CHECK_THROWS_WITH_AS(parse(std::string(kLeaky) + "[LEAKAGE]\nP1 -1 0\n"),
                       doctest::Contains("leak.inp:17: illegal leakage value (EPANET error 209)"),
                       InputError);
  CHECK_THROWS_WITH_AS(parse(std::string(kLeaky) + "[LEAKAGE]\nP1 1\n"),
                       doctest::Contains("(EPANET error 201)"), InputError);
  CHECK_THROWS_AS(parse(std::string(kLeaky) + "[LEAKAGE]\nNOPE 1 1\n"), InputError);
}

TEST_CASE("leakage: Net1 with leaking pipes matches EPANET 2.3.5 at every reporting time") {
  // Demands there include the leakage (EPANET's EN_DEMAND): 20-110 gpm a junction.
  const Network net = read_inp(kDir + "/Net1_leakage.inp");
  auto solver = make_direct_solver();
  const SimulationResults s = simulate(net, *solver);
  CHECK(s.ok());
  CHECK(s.steps.size() == 26);  // EPANET's count (epanet-run)
  const SeriesComparison c = compare_series_with_reference(
      net, s, find_reference_file(kDir, "Net1_leakage", "nodes"),
      find_reference_file(kDir, "Net1_leakage", "links"), 1e-3, 1e-3, flow_noise_floor(net));
  for (const auto& f : c.failures) MESSAGE("  " << f);
  CHECK(c.times_compared == 25);
  CHECK(c.ok());
  double leakage = 0;
  for (double q : s.reports.back().leakage) leakage += q;
  CHECK(leakage > 0.1);  // cfs: the leaks are there
}

}  // namespace
}  // namespace cgs::net
