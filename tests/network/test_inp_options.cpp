// [OPTIONS] as EPANET 2.3.5's parser reads them (input2.c getunitsoption, input3.c optionvalue):
// every flow unit it knows, matched as it matches them, and ACCURACY held to its range.
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>

#include "formats/types.hpp"
#include "network/hydraulics.hpp"
#include "network/inp_reader.hpp"
#include "network/linear_solver.hpp"
#include "network/results_io.hpp"

namespace cgs::net {
namespace {

Network parse(const std::string& text) {
  std::istringstream in(text);
  return parse_inp(in, "net.inp");
}

// The reader's message for this text, or empty when it reads.
std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::string with_options(const std::string& options) {
  return "[OPTIONS]\n" + options +
         "\n[RESERVOIRS]\nR 100\n[JUNCTIONS]\nA 10 5\nB 20 2\n"
         "[PIPES]\nP1 R A 1000 300 120\nP2 A B 800 200 120\n";
}

TEST_CASE("UNITS: every flow unit EPANET 2.3.5 knows, SI as LPS, matched by prefix") {
  struct Case {
    const char* word;
    FlowUnits units;
    double per_cfs;
  };
  for (const Case c : {Case{"CFS", FlowUnits::cfs, 1.0}, Case{"gpm", FlowUnits::gpm, 448.831},
                       Case{"MGD", FlowUnits::mgd, 0.64632}, Case{"IMGD", FlowUnits::imgd, 0.5382},
                       Case{"AFD", FlowUnits::afd, 1.9837}, Case{"LPS", FlowUnits::lps, 28.317},
                       Case{"LPM", FlowUnits::lpm, 1699.0}, Case{"MLD", FlowUnits::mld, 2.4466},
                       Case{"CMH", FlowUnits::cmh, 101.94}, Case{"CMD", FlowUnits::cmd, 2446.6},
                       Case{"CMS", FlowUnits::cms, 0.028317}, Case{"SI", FlowUnits::lps, 28.317},
                       Case{"LPSX", FlowUnits::lps, 28.317}}) {
    CAPTURE(std::string(c.word));
    const Network net = parse(with_options(std::string("UNITS ") + c.word));
    CHECK(net.units.flow_units == c.units);
    CHECK(net.units.flow == c.per_cfs);
    CHECK(net.units.si() == (c.units >= FlowUnits::lps));
  }
  CHECK(to_string(FlowUnits::cms) == "CMS");
  CHECK_THROWS_WITH_AS(parse(with_options("UNITS XYZ")),
                       doctest::Contains("net.inp:2: invalid option value (EPANET error 213): "
                                         "UNITS XYZ"),
                       InputError);
}

// EPANET 2.3.5's heads for this network (runepanet's report, 2 decimals): with UNITS CMS the
// demands are 5 and 2 m3/s, with SI (LPS) 5 and 2 l/s.
TEST_CASE("UNITS CMS and SI: EPANET's heads") {
  struct Case {
    const char* units;
    double head_a, head_b;
  };
  for (const Case c : {Case{"CMS", -19373.82, -30406.17}, Case{"SI", 99.95, 99.92}}) {
    CAPTURE(std::string(c.units));
    const Network net = parse(with_options(std::string("UNITS ") + c.units));
    auto solver = make_direct_solver();
    const HydraulicResults r = solve_hydraulics(net, *solver);
    REQUIRE(r.converged);
    CHECK(user_head(net, r.head[net.find_node("A")]) == doctest::Approx(c.head_a).epsilon(1e-4));
    CHECK(user_head(net, r.head[net.find_node("B")]) == doctest::Approx(c.head_b).epsilon(1e-4));
    CHECK(user_flow(net, r.flow[0]) == doctest::Approx(7.0).epsilon(1e-9));
  }
}

TEST_CASE("ACCURACY: > 0, held within [1e-5, 0.1] as EPANET holds it") {
  CHECK(parse(with_options("ACCURACY 1e-8")).options.accuracy == 1e-5);
  CHECK(parse(with_options("ACCURACY 0.5")).options.accuracy == 0.1);
  CHECK(parse(with_options("ACCURACY 0.003")).options.accuracy == 0.003);
  for (const char* bad : {"ACCURACY 0", "ACCURACY -1"}) {
    CAPTURE(std::string(bad));
    CHECK_THROWS_WITH_AS(parse(with_options(bad)),
                         doctest::Contains("net.inp:2: invalid option value (EPANET error 213)"),
                         InputError);
  }
  // A tighter ACCURACY than double allows no longer stalls the trials (Elhay's zero-flow test
  // asks for 1e-8): the run balances.
  const Network net = parse(with_options("ACCURACY 1e-8"));
  auto solver = make_direct_solver();
  const HydraulicResults r = solve_hydraulics(net, *solver);
  CHECK(r.converged);
  CHECK(r.trials < 10);
}


// What runepanet (EPANET 2.3.5) answers for each [OPTIONS] line in this network, checked by
// hand with ../shared/tools/epanet: 0 runs, else its error number, which netsolve names.
TEST_CASE("[OPTIONS] keywords: EPANET's prefixes, and its error numbers for the rest") {
  struct Case {
    const char* line;
    int error;  // 0: runs
  };
  for (const Case c :
       {Case{"Untis LPS", 202}, Case{"Patern 1", 201}, Case{"Patern X", 202},
        Case{"ACCU 0.01", 0}, Case{"HTOL 0.001", 0}, Case{"QTOL 0.0001", 0}, Case{"RQTOL 2", 213},
        Case{"RQTOL 1e-6", 0}, Case{"QUALITY CHLORINE mg/L", 0}, Case{"Tolerance 0.01", 0},
        Case{"Segments 100", 0}, Case{"DEMAND MULTIPLIER 0", 213}, Case{"TRIALS 40", 0},
        Case{"VISCOSITY -1", 213}, Case{"HEADLOSS X-Y", 213}, Case{"UNBALANCED MAYBE", 213},
        // A keyword without its value: runepanet runs each, the option unchanged.
        Case{"MINIMUM", 0}, Case{"ACCURACY", 0}, Case{"UNITS", 0}, Case{"DEMAND MULTIPLIER", 0},
        Case{"EMITTER EXPONENT", 0}, Case{"TRIALS", 0}, Case{"HEADLOSS", 0},
        Case{"SPECIFIC GRAVITY", 0}, Case{"UNBALANCED", 0}, Case{"PRESSURE", 0}, Case{"Untis", 0}}) {
    CAPTURE(std::string(c.line));
    const std::string text = with_options(std::string("UNITS LPS\n") + c.line);
    const std::string error = error_of(text);
    CAPTURE(error);
    if (c.error == 0) {
      CHECK(error.empty());
    } else {
      CHECK(error.find("net.inp:3: ") != std::string::npos);
      CHECK(error.find("(EPANET error " + std::to_string(c.error) + ")") != std::string::npos);
    }
  }
  // The values read by prefix take effect.
  const Network net = parse(with_options("ACCU 0.02\nTRIAL 17\nHTOL 0.002\nRQTOL 1e-6"));
  CHECK(net.options.accuracy == 0.02);
  CHECK(net.options.max_trials == 17);
  CHECK(net.options.head_tolerance == 0.002);
  CHECK(net.options.rq_tolerance == 1e-6);
}


// [SOURCES] and [ENERGY] are checked as EPANET 2.3.5 checks them (energy is not computed yet):
// each line below with runepanet's answer (0: runs).
TEST_CASE("[SOURCES] and [ENERGY]: EPANET's errors for unknown IDs and bad values") {
  const std::string base =
      "[OPTIONS]\nUNITS LPS\n[RESERVOIRS]\nR 100\n[JUNCTIONS]\nA 10 5\nB 20 2\n[PIPES]\n"
      "P1 R A 1000 300 120\n[PUMPS]\nPU A B HEAD C1\n[CURVES]\nC1 5 50\n[PATTERNS]\nPT 1 2\n";
  struct Case {
    const char* lines;
    int error;
  };
  for (const Case c :
       {Case{"[SOURCES]\nX CONCEN 1", 203}, Case{"[SOURCES]\nA CONCEN 1", 0},
        Case{"[SOURCES]\nA CONCEN x", 202}, Case{"[SOURCES]\nA x", 213},
        Case{"[SOURCES]\nA 1 NOPAT", 205}, Case{"[SOURCES]\nA 1 PT", 0},
        Case{"[ENERGY]\nGLOBAL PRICE 0.1", 0}, Case{"[ENERGY]\nPUMP P1 PRICE 0.1", 216},
        Case{"[ENERGY]\nPUMP PU EFFIC NOCURVE", 206}, Case{"[ENERGY]\nPUMP PU EFFIC C1", 0},
        Case{"[ENERGY]\nGLOBAL EFFIC 75", 0}, Case{"[ENERGY]\nGLOBAL EFFIC 0", 217},
        Case{"[ENERGY]\nDEMAND CHARGE 5", 0}, Case{"[ENERGY]\nGLOBAL PATTERN NOPAT", 205},
        Case{"[ENERGY]\nLOCAL PRICE 1", 213}, Case{"[ENERGY]\nGLOBAL COST 1", 201}}) {
    CAPTURE(std::string(c.lines));
    const std::string error = error_of(base + c.lines + "\n");
    CAPTURE(error);
    if (c.error == 0)
      CHECK(error.empty());
    else
      CHECK(error.find("(EPANET error " + std::to_string(c.error) + ")") != std::string::npos);
  }
}


// PRESSURE units as EPANET 2.3.5 has them: any of five whatever the flow units, meters and feet
// not scaled by SPECIFIC GRAVITY. runepanet's pressure at A (SPECIFIC GRAVITY 0.8), 2 decimals.
TEST_CASE("PRESSURE units: EPANET's five, with either unit system") {
  struct Case {
    const char* units;
    const char* pressure;
    double expected;
  };
  for (const Case c : {Case{"LPS", "", 89.97}, Case{"GPM", "", 31.20},
                       Case{"LPS", "PRESSURE METERS", 89.97}, Case{"GPM", "PRESSURE METERS", 27.43},
                       Case{"LPS", "PRESSURE FEET", 295.18}, Case{"GPM", "PRESSURE FEET", 90.00},
                       Case{"LPS", "PRESSURE BAR", 7.05}, Case{"GPM", "PRESSURE BAR", 2.15},
                       Case{"LPS", "PRESSURE KPA", 705.51}, Case{"GPM", "PRESSURE KPA", 215.11},
                       Case{"LPS", "PRESSURE PSI", 102.32}, Case{"GPM", "PRESSURE PSI", 31.20}}) {
    CAPTURE(std::string(c.units));
    CAPTURE(std::string(c.pressure));
    std::istringstream in(std::string("[OPTIONS]\nUNITS ") + c.units +
                          "\nSPECIFIC GRAVITY 0.8\n" + c.pressure +
                          "\n[RESERVOIRS]\nR 100\n[JUNCTIONS]\nA 10 5\n[PIPES]\n"
                          "P1 R A 1000 300 120\n");
    const Network net = parse_inp(in, "net.inp");
    auto solver = make_direct_solver();
    const HydraulicResults r = solve_hydraulics(net, *solver);
    REQUIRE(r.converged);
    const int a = net.find_node("A");
    CHECK(std::abs(user_pressure(net, a, r.head[a]) - c.expected) <= 0.005);  // its 2 decimals
  }
  CHECK_THROWS_WITH_AS(parse(with_options("PRESSURE ATM")),
                       doctest::Contains("(EPANET error 213): PRESSURE ATM"), InputError);
}

}  // namespace
}  // namespace cgs::net
