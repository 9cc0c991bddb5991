// Scenario studies (network/study.hpp, netsolve --study): the rows against EPANET 2.3.5's reference
// loop (epanet-scenarios' CSVs in data/networks/study), independence of the thread count, the
// demand draws, a failed scenario flagged while the study goes on, the available-flow search, and
// bad input on the command line.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "formats/types.hpp"
#include "network/inp_reader.hpp"
#include "network/study.hpp"
#include "network_test_data.hpp"
#include "run_command.hpp"

namespace fs = std::filesystem;
using namespace cgs::net;

namespace {

const std::string kNet1 = test::repo_networks() + "/Net1.inp";
const std::string kNet3 = test::repo_networks() + "/Net3.inp";
const std::string kReferences = test::repo_networks() + "/study";

std::unique_ptr<LinearSolver> direct() { return make_direct_solver(); }

StudyOptions study(StudyKind kind, long duration, bool warm, int threads) {
  StudyOptions o;
  o.spec.kind = kind;
  o.duration = duration;
  o.run.start = warm ? StudyStart::warm : StudyStart::cold;
  o.run.threads = threads;
  o.fire_flow = 1000.0 / 448.831;  // 1000 gpm in cfs (Net1 and Net3 are in GPM)
  o.pressure_threshold = 20;
  return o;
}

struct ReferenceRow {
  bool ok;
  double min_pressure, element_pressure;
  std::string min_node;
};

// epanet-scenarios' CSV: scenario,element,ok,iterations,min_pressure,min_node,element_pressure.
std::map<std::string, ReferenceRow> read_reference(const std::string& path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in, "missing " << path);
  std::map<std::string, ReferenceRow> rows;
  std::string line;
  std::getline(in, line);
  REQUIRE(line == "scenario,element,ok,iterations,min_pressure,min_node,element_pressure");
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream fields(line);
    for (std::string x; std::getline(fields, x, ',');) f.push_back(x);
    REQUIRE(f.size() == 7);
    rows[f[1]] = {f[2] == "1", std::stod(f[4]), std::stod(f[6]), f[5]};
  }
  return rows;
}

bool within(double value, double reference, double tol = 1e-3) {
  return std::abs(value - reference) <= tol * std::max(1.0, std::abs(reference));
}

// Every scenario's ok flag equal to EPANET's; min pressure, its node and the element's pressure
// to 1e-3 unless junctions cut off from every fixed-head node (pressures set by 1e-8 couplings
// there, not by the network) may hold the lowest.
void check_against_reference(const Network& net, StudyKind kind, const StudyResults& r,
                             const std::string& reference_csv) {
  const auto reference = read_reference(reference_csv);
  REQUIRE(r.scenarios.size() == reference.size());
  CHECK(r.baseline.ok);
  int compared = 0;
  for (const ScenarioResult& s : r.scenarios) {
    const std::string id = study_element_name(net, kind, s);
    const auto it = reference.find(id);
    REQUIRE_MESSAGE(it != reference.end(), id << " not in " << reference_csv);
    const ReferenceRow& e = it->second;
    CAPTURE(id);
    CHECK(s.ok == e.ok);
    // As scripts/compare_study.py: skipped where the lowest junction was cut off, or junctions
    // were and the two lowest differ.
    const bool lowest_same = s.min_node >= 0 && net.nodes[s.min_node].id == e.min_node;
    if (!e.ok || s.min_cut_off || (s.cut_off > 0 && !lowest_same)) continue;
    ++compared;
    CHECK(within(s.min_pressure, e.min_pressure));
    CHECK(net.nodes[s.min_node].id == e.min_node);
    if (kind == StudyKind::fireflow) CHECK(within(s.element_pressure, e.element_pressure));
  }
  CHECK(compared >= static_cast<int>(reference.size()) * 3 / 4);
}

std::string csv_text(const Network& net, const StudyResults& r, const StudyOptions& o) {
  const fs::path path =
      fs::temp_directory_path() / ("study-test-" + std::to_string(::getpid()) + ".csv");
  write_study_csv(path.string(), net, r, o);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  fs::remove(path);
  return text.str();
}

}  // namespace

TEST_CASE("study rows equal epanet-scenarios' (Net3 steady, Net1 and Net3 24 h, warm and cold)") {
  struct Case {
    std::string network;
    StudyKind kind;
    long duration;
    std::string reference;
  };
  const Case cases[] = {
      {kNet3, StudyKind::fireflow, 0, "Net3_fireflow_steady.csv"},
      {kNet3, StudyKind::closure, 0, "Net3_closure_steady.csv"},
      {kNet1, StudyKind::fireflow, 86400, "Net1_fireflow_24h.csv"},
      {kNet1, StudyKind::closure, 86400, "Net1_closure_24h.csv"},
      {kNet3, StudyKind::fireflow, 86400, "Net3_fireflow_24h.csv"},
  };
  for (const Case& c : cases)
    for (bool warm : {true, false}) {
      CAPTURE(c.reference);
      CAPTURE(warm);
      const Network net = read_inp(c.network);
      const StudyResults r = run_study(net, direct, study(c.kind, c.duration, warm, 2));
      check_against_reference(net, c.kind, r, kReferences + "/" + c.reference);
      CHECK(r.analyses == 1);  // the baseline's, copied to the threads
    }
}

TEST_CASE("studies with PCVs, HEADERROR and FLOWCHANGE equal epanet-scenarios' (issue 48)") {
  // data/networks/epanet23: PCVs moved by controls and rules (fire flow of 20 LPS, steady), PCVs
  // fixed in [STATUS] and moved by a pressure control (closure, 12 h), HEADERROR (Net1 closure,
  // 24 h) and FLOWCHANGE (Net3 fire flow, steady), each with ACCURACY 0.1; pipe leakage (Net1,
  // closure 24 h and fire flow).
  struct Case {
    std::string network;
    StudyKind kind;
    long duration;
    double fire_flow;  // the file's flow units
  };
  const std::string dir = test::repo_networks() + "/epanet23/";
  const Case cases[] = {
      {"pcv_controls", StudyKind::fireflow, 0, 20},
      {"pcv_pressure_control", StudyKind::closure, 43200, 0},
      {"Net1_headerror", StudyKind::closure, 86400, 0},
      {"Net3_flowchange", StudyKind::fireflow, 0, 1000},
      {"Net1_leakage", StudyKind::closure, 86400, 0},
      {"Net1_leakage", StudyKind::fireflow, 0, 1000},
  };
  const char* references[] = {
      "pcv_controls_fireflow_steady.csv",   "pcv_pressure_control_closure_12h.csv",
      "Net1_headerror_closure_24h.csv",     "Net3_flowchange_fireflow_steady.csv",
      "Net1_leakage_closure_24h.csv",       "Net1_leakage_fireflow_steady.csv"};
  for (int i = 0; i < 6; ++i)
    for (bool warm : {true, false}) {
      const Case& c = cases[i];
      CAPTURE(c.network);
      CAPTURE(warm);
      const Network net = read_inp(dir + c.network + ".inp");
      StudyOptions o = study(c.kind, c.duration, warm, 2);
      o.fire_flow = c.fire_flow / net.units.flow;
      const StudyResults r = run_study(net, direct, o);
      check_against_reference(net, c.kind, r, dir + references[i]);
    }
}

TEST_CASE(
    "pressure-driven studies equal epanet-scenarios --pda 0 20 0.5 (Net3 steady, Net1 24 h)") {
  struct Case {
    std::string network;
    StudyKind kind;
    long duration;
    std::string reference;
  };
  const Case cases[] = {
      {kNet3, StudyKind::fireflow, 0, "Net3_fireflow_pda_steady.csv"},
      {kNet1, StudyKind::closure, 86400, "Net1_closure_pda_24h.csv"},
  };
  for (const Case& c : cases)
    for (bool warm : {true, false}) {
      CAPTURE(c.reference);
      CAPTURE(warm);
      Network net = read_inp(c.network);
      net.options.demand.model = DemandModel::pda;  // psi, as epanet-scenarios' arguments
      net.options.demand.minimum_pressure = 0;
      net.options.demand.required_pressure = 20;
      net.options.demand.exponent = 0.5;
      const StudyResults r = run_study(net, direct, study(c.kind, c.duration, warm, 2));
      check_against_reference(net, c.kind, r, kReferences + "/" + c.reference);
      if (c.kind == StudyKind::fireflow) {
        // 1000 gpm at a junction of Net3 cannot all be delivered at 20 psi: a deficit somewhere.
        int short_of_demand = 0;
        for (const ScenarioResult& s : r.scenarios) short_of_demand += s.demand_deficit > 0;
        CHECK(short_of_demand > 0);
      }
    }
}

TEST_CASE(
    "--start auto takes EPANET's path where the warm start ended elsewhere (C-Town, Fossolo)") {
  // Regressions of the sweep against EPANET (BENCHMARKS.md §19e): warm-started, 17 of C-Town's 388
  // steady fire flows and 2 of Fossolo_FOS's 58 PDA closures ended up to 1e-3 from EPANET's rows.
  struct Case {
    std::string network;
    StudyKind kind;
    bool pda;
    std::string reference;
  };
  const Case cases[] = {
      {test::repo_networks() + "/regressions/ctown_pump_curve.inp", StudyKind::fireflow, false,
       "ctown_pump_curve_fireflow_steady.csv"},
      {kReferences + "/Fossolo_FOS.inp", StudyKind::closure, true,
       "Fossolo_FOS_closure_pda_steady.csv"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.reference);
    Network net = read_inp(c.network);
    if (c.pda) {
      net.options.demand.model = DemandModel::pda;
      net.options.demand.required_pressure = 20;
    }
    StudyOptions o = study(c.kind, 0, true, 2);
    o.run.start = StudyStart::probe;
    const StudyResults r = run_study(net, direct, o);
    CHECK(!r.plan.warm());
    check_against_reference(net, c.kind, r, kReferences + "/" + c.reference);
  }
}

TEST_CASE("study rows are the same for 1 and 3 threads") {
  const Network net = read_inp(kNet3);
  StudyOptions closure = study(StudyKind::closure, 0, true, 1);
  StudyOptions demand = study(StudyKind::demand, 0, true, 1);
  demand.spec.draws = 7;
  demand.spec.cv = 0.4;
  demand.spec.seed = 11;
  StudyOptions fire = study(StudyKind::fireflow, 3600 * 6, true, 1);
  fire.residual_pressure = 20;
  fire.elements = {net.find_node("10"), net.find_node("123"), net.find_node("601")};
  for (StudyOptions* o : {&closure, &demand, &fire}) {
    CAPTURE(to_string(o->spec.kind));
    const std::string one = csv_text(net, run_study(net, direct, *o), *o);
    o->run.threads = 3;
    const StudyResults r3 = run_study(net, direct, *o);
    CHECK(r3.plan.threads == 3);
    CHECK(csv_text(net, r3, *o) == one);
  }
}

TEST_CASE("demand multipliers: lognormal, mean 1, the cv asked, reproducible by seed") {
  const auto a = demand_multipliers(42, 3, 1001, 0.3);
  CHECK(a == demand_multipliers(42, 3, 1001, 0.3));
  CHECK(a != demand_multipliers(42, 4, 1001, 0.3));
  CHECK(a != demand_multipliers(43, 3, 1001, 0.3));
  // Many draws: sample mean and coefficient of variation against the asked ones.
  double sum = 0, squares = 0, smallest = 1;
  long n = 0;
  for (int draw = 0; draw < 200; ++draw)
    for (double m : demand_multipliers(7, draw, 1000, 0.3)) {
      sum += m, squares += m * m, ++n;
      smallest = std::min(smallest, m);
    }
  const double mean = sum / n, sd = std::sqrt(squares / n - mean * mean);
  CHECK(mean == doctest::Approx(1.0).epsilon(0.005));
  CHECK(sd / mean == doctest::Approx(0.3).epsilon(0.02));
  CHECK(smallest > 0);
  for (double m : demand_multipliers(1, 0, 5, 0.0)) CHECK(m == 1.0);  // cv 0: the demands as given
}

TEST_CASE("demand study: reproducible by seed, and a draw of cv 0 is the baseline") {
  const Network net = read_inp(kNet3);
  StudyOptions o = study(StudyKind::demand, 0, true, 2);
  o.spec.draws = 4;
  o.spec.cv = 0.5;
  o.spec.seed = 3;
  const StudyResults first = run_study(net, direct, o);
  CHECK(csv_text(net, run_study(net, direct, o), o) == csv_text(net, first, o));
  o.spec.seed = 4;
  const StudyResults other = run_study(net, direct, o);
  CHECK(other.scenarios[0].min_pressure != first.scenarios[0].min_pressure);
  // cv 0, cold start: exactly the baseline's run.
  o.spec.cv = 0;
  o.run.start = StudyStart::cold;
  const StudyResults same = run_study(net, direct, o);
  CHECK(same.scenarios[0].min_pressure == same.baseline.min_pressure);
  CHECK(same.scenarios[0].trials == same.baseline.trials);
  CHECK(same.scenarios[3].min_node == same.baseline.min_node);
}

namespace {

// The direct solver, failing like EPANET's error 110 (a pivot <= 0 at `junction`) whenever the
// link between junctions i and j is closed (its coupling is 1e-8): a closure scenario that cannot
// be solved, so the engine's handling of a failed scenario can be checked.
class FailsWhenClosed final : public LinearSolver {
 public:
  FailsWhenClosed(int i, int j) : i_(i), j_(j), inner_(make_direct_solver()) {}
  LinearSolveStats solve(const cgs::CsrMatrix<double>& A, const std::vector<double>& b,
                         std::vector<double>& x) override {
    for (cgs::index_t k = A.row_ptr[i_]; k < A.row_ptr[i_ + 1]; ++k)
      if (A.col_idx[k] == j_ && std::abs(A.values[k]) < 1e-6) {
        LinearSolveStats failed;
        failed.converged = false;
        failed.failed_row = i_;
        return failed;
      }
    return inner_->solve(A, b, x);
  }
  std::string name() const override { return "fails when closed"; }

 private:
  int i_, j_;
  std::unique_ptr<LinearSolver> inner_;
};

}  // namespace

TEST_CASE("a scenario that cannot be solved is flagged and the study goes on") {
  const Network net = read_inp(kNet3);
  // Pipe 105 of Net3 joins junctions 101 and 105.
  const int pipe = net.find_link("105");
  REQUIRE(pipe >= 0);
  const Link& link = net.links[pipe];
  REQUIRE((net.is_junction(link.from) && net.is_junction(link.to)));
  StudyOptions o = study(StudyKind::closure, 0, true, 2);
  const StudyResults r = run_study(
      net, [&] { return std::make_unique<FailsWhenClosed>(link.from, link.to); }, o);
  int failed = 0;
  for (const ScenarioResult& s : r.scenarios) {
    if (s.element == pipe) {
      CHECK_FALSE(s.ok);
      CHECK(s.reason.find("EPANET error 110") != std::string::npos);
    } else {
      failed += !s.ok;
    }
  }
  CHECK(failed == 0);
  CHECK(r.failed() == 1);
  CHECK(r.baseline.ok);
  CHECK(r.scenarios.size() == 117);  // every pipe of Net3, the failed one's row included
}

TEST_CASE(
    "available flow at a residual pressure: the hydrant's pressure at that flow is the residual") {
  const Network net = read_inp(kNet3);
  StudyOptions o = study(StudyKind::fireflow, 0, true, 1);
  o.residual_pressure = 40;  // psi
  o.elements = {net.find_node("101"), net.find_node("10")};
  const StudyResults r = run_study(net, direct, o);
  const ScenarioResult& hydrant = r.scenarios[0];
  REQUIRE(hydrant.available_flow > 0);
  // Independently: the study rerun with that fire flow, and 1% more.
  StudyOptions check = study(StudyKind::fireflow, 0, false, 1);
  check.elements = {o.elements[0]};
  check.fire_flow = hydrant.available_flow / net.units.flow;
  const double at = run_study(net, direct, check).scenarios[0].element_pressure;
  CHECK(std::abs(at - 40) <= 0.01);
  check.fire_flow *= 1.01;
  CHECK(run_study(net, direct, check).scenarios[0].element_pressure < 40);
  // Junction 10 is below 40 psi already without fire flow: nothing available.
  CHECK(r.baseline.ok);
  CHECK(r.scenarios[1].available_flow == 0);
}

TEST_CASE("bad study input: clear errors naming the option, file and line") {
  const Network net = read_inp(kNet3);
  CHECK_THROWS_WITH_AS(parse_study("fire"), doctest::Contains("unknown study 'fire'"),
                       cgs::InputError);
  CHECK_THROWS_WITH_AS(parse_study("demand:0"), doctest::Contains("whole number >= 1"),
                       cgs::InputError);
  CHECK_THROWS_WITH_AS(parse_study("demand:10:abc"), doctest::Contains("not a number"),
                       cgs::InputError);
  CHECK_THROWS_WITH_AS(parse_study("closure:3"), doctest::Contains("takes no arguments"),
                       cgs::InputError);
  CHECK(parse_study("demand:10:0.2:9").seed == 9);

  const fs::path dir = fs::temp_directory_path() / ("study-elements-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string list = (dir / "ids.txt").string();
  std::ofstream(list) << "10 ; a junction\n\n15\nNOPE\n";
  CHECK_THROWS_WITH_AS(read_study_elements(list, net, StudyKind::fireflow),
                       doctest::Contains((list + ":4").c_str()), cgs::InputError);
  CHECK_THROWS_WITH_AS(read_study_elements(list, net, StudyKind::fireflow),
                       doctest::Contains("'NOPE' is not a node"), cgs::InputError);
  std::ofstream(list) << "Lake\n";  // a reservoir, not a link
  CHECK_THROWS_WITH_AS(read_study_elements(list, net, StudyKind::closure),
                       doctest::Contains("'Lake' is not a link"), cgs::InputError);
  CHECK_THROWS_WITH_AS(read_study_elements(list, net, StudyKind::fireflow),
                       doctest::Contains("'Lake' is a reservoir, not a junction"), cgs::InputError);
  std::ofstream(list) << "105\n335\n";  // 335 is a pump
  CHECK_THROWS_WITH_AS(read_study_elements(list, net, StudyKind::closure),
                       doctest::Contains((list + ":2: '335' is a pump").c_str()), cgs::InputError);
  std::ofstream(list) << "10\n20\n";
  CHECK(read_study_elements(list, net, StudyKind::fireflow) ==
        std::vector<int>{net.find_node("10"), net.find_node("20")});

  // On the command line: exit 2 and the message; no CSV written.
  const std::string netsolve = CGSOLVE_BINARY_DIR "/app/netsolve --network " + kNet3;
  const std::string csv = (dir / "out.csv").string();
  std::ofstream(list) << "10\nNOPE\n";
  cgs::testing::Run run = cgs::testing::run_command(netsolve + " --study fireflow --elements " +
                                                    list + " --study-csv " + csv);
  CHECK(run.exit_code == 2);
  CHECK(run.output.find(list + ":2") != std::string::npos);
  CHECK_FALSE(fs::exists(csv));
  run = cgs::testing::run_command(netsolve + " --study flood --study-csv " + csv);
  CHECK(run.exit_code == 2);
  CHECK(run.output.find("--study") != std::string::npos);
  run = cgs::testing::run_command(netsolve + " --study closure --residual-pressure 20");
  CHECK(run.exit_code == 2);
  CHECK(run.output.find("fireflow studies only") != std::string::npos);
  run = cgs::testing::run_command(netsolve + " --study fireflow --flow -5");
  CHECK(run.exit_code == 2);

  // And a good run: the header, the baseline row and one row per listed junction.
  std::ofstream(list) << "10\n15\n";
  run = cgs::testing::run_command(netsolve + " --study fireflow --elements " + list +
                                  " --study-csv " + csv + " --quiet");
  CHECK(run.exit_code == 0);
  std::ifstream in(csv);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  REQUIRE(lines.size() == 4);
  CHECK(lines[0].rfind("scenario,element,ok,iterations,min_pressure,min_node,element_pressure,",
                       0) == 0);
  CHECK(lines[1].rfind("0,baseline,1,", 0) == 0);
  CHECK(lines[2].rfind("1,10,1,", 0) == 0);
  CHECK(lines[3].rfind("2,15,1,", 0) == 0);
  fs::remove_all(dir);
}

// The scenarios where netsolve's rows left epanet-scenarios' on the 16-core host (BENCHMARKS.md
// §19c), one scenario each: EPANET's numbers below are epanet-scenarios' rows (the loop, ACCURACY
// 0.001 as in the files), the same loop on a copy of the file with ACCURACY 0.0001, and
// epanet-run on a copy with the pipe closed in [STATUS] (a fresh run, outside the loop).
TEST_CASE("regressions against epanet-scenarios: Exnet_EXN and Richmond_standard (shared data)") {
  if (!test::have_shared_data()) return;
  const std::string nets = test::shared_data() + "/networks/";
  auto one = [](const Network& net, StudyKind kind, int element, bool warm) {
    StudyOptions o = study(kind, 0, warm, 1);
    o.fire_flow = 63.09 / net.units.flow;  // as epanet-scenarios: 1000 gpm is 63.09 LPS
    o.elements = {element};
    const StudyResults r = run_study(net, direct, o);
    REQUIRE(r.scenarios.size() == 1);
    REQUIRE(r.scenarios[0].ok);
    return r.scenarios[0];
  };
  SUBCASE("Exnet_EXN, fire flow at 1457: the warm start no longer stops early") {
    // Warm, EPANET's test passed after 5 trials with the hydrant's head still moving 0.8 ft: its
    // pressure -7.5588 psi. EPANET: -7.568065512 (ACCURACY 1e-3), -7.568219312 (1e-4).
    const Network net = read_inp(nets + "Exnet_EXN.inp");
    const int node = net.find_node("1457");
    const ScenarioResult warm = one(net, StudyKind::fireflow, node, true);
    CHECK(within(warm.element_pressure, -7.568065512));
    CHECK(within(warm.element_pressure, -7.568219312));
    CHECK(warm.trials == 6);
    const ScenarioResult cold = one(net, StudyKind::fireflow, node, false);  // EPANET's path
    CHECK(cold.element_pressure == doctest::Approx(-7.568065512).epsilon(1e-9));
    CHECK(cold.min_pressure == doctest::Approx(-11.73677831).epsilon(1e-9));
    CHECK(cold.trials == 6);
  }
  SUBCASE(
      "Richmond_standard, fire flow at 1944: the warm start is nearer EPANET's tighter answer") {
    // EPANET: 0.7686419977 m (ACCURACY 1e-3), 0.7691791682 (1e-4): its own answer moves 5e-4.
    const Network net = read_inp(nets + "Richmond_standard.inp");
    const int node = net.find_node("1944");
    const ScenarioResult warm = one(net, StudyKind::fireflow, node, true);
    CHECK(within(warm.element_pressure, 0.7691791682));
    const ScenarioResult cold = one(net, StudyKind::fireflow, node, false);
    CHECK(cold.element_pressure == doctest::Approx(0.7686419977).epsilon(1e-9));
  }
  SUBCASE("Richmond_standard, closures 1751 and 1773: EPANET's own answer is not unique") {
    // Closing them leaves junctions 700-728 fed through a path that cannot carry their demand:
    // pressures of -2,600 and -20,000 m, which move with the path of the trials. EPANET gives
    // several answers for the same scenario, more than 1e-3 apart: the loop's row (its state
    // carried from the scenarios before it), a fresh run, ACCURACY 1e-4, and ACCURACY 1e-5,
    // where the trials never converge (a cycle at sum |dQ| / sum |Q| ~ 5e-5, 1000 trials).
    struct Case {
      const char* pipe;
      const char* node;
      double loop, fresh, tight, tighter;
    };
    const Case cases[] = {{"1751", "700", -20429.8717, -20378.4362, -20175.50204, -19452.56955},
                          {"1773", "728", -2616.208451, -2615.822277, -2614.121311, -2596.514658}};
    const Network net = read_inp(nets + "Richmond_standard.inp");
    for (const Case& c : cases) {
      CAPTURE(c.pipe);
      CHECK(!within(c.loop, c.tighter));  // the reference itself, documented
      const int link = net.find_link(c.pipe);
      // Cold, netsolve follows a fresh EPANET run trial for trial: the same answer.
      const ScenarioResult cold = one(net, StudyKind::closure, link, false);
      CHECK(net.nodes[cold.min_node].id == c.node);
      CHECK(cold.min_pressure == doctest::Approx(c.fresh).epsilon(1e-9));
      // Warm, another path: an answer among EPANET's own.
      const ScenarioResult warm = one(net, StudyKind::closure, link, true);
      CHECK(net.nodes[warm.min_node].id == c.node);
      CHECK(warm.min_pressure >= std::min({c.loop, c.fresh, c.tight, c.tighter}));
      CHECK(warm.min_pressure <= std::max({c.loop, c.fresh, c.tight, c.tighter}));
    }
  }
}
