// EPANET's binary output file (network/epanet_out.hpp) and pump energy (network/energy.hpp)
// against runepanet's own files: data/networks/out/*.out.gz, made with EPANET 2.3.5's runepanet
// (../shared/tools/epanet/runepanet NET.inp NET.rpt NET.out) from the .inp files beside them
// (data/networks/out/README.md says what each variant exercises).
//
// The comparison: every integer, code and ID equal; every float within a relative 1e-6 of
// runepanet's. netsolve's hydraulics on these networks are EPANET's doubles to the last bits, and
// its water quality routes on them rounded to float32 as runepanet's does (its scratch hydraulics
// file: QualityHydraulics::file), so each float is either the same float32 or one rounding apart
// (a relative 6e-8, twice at most where a value is computed from two rounded ones); 1e-6 allows
// that and nothing else (a wrong unit factor, formula or period is off by 1e-4 or far more; the
// quality routed on the doubles instead is off by up to 1e-5). The title lines are compared, the
// input file's name is not (each run names its own path).
#include <doctest/doctest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "base/input_error.hpp"
#include "network/energy.hpp"
#include "network/epanet_out.hpp"
#include "network/inp_reader.hpp"
#include "network/linear_solver.hpp"
#include "network/quality/quality_run.hpp"
#include "network/simulation.hpp"
#include "network_test_data.hpp"
#include "run_command.hpp"

namespace fs = std::filesystem;
using namespace cgs;
using namespace cgs::net;

namespace {

constexpr double kFloatTolerance = 1e-6;

std::string fixture(const std::string& name) { return test::repo_networks() + "/out/" + name; }

fs::path scratch() {
  fs::path dir = fs::temp_directory_path() / ("epanet-out-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

bool close(double reference, double value, double tolerance = kFloatTolerance) {
  if (reference == value) return true;
  return std::abs(reference - value) <= tolerance * std::max(std::abs(reference), std::abs(value));
}

struct Written {
  EpanetOutFile file;
  EnergyReport energy;
  SimulationResults run;
};

// netsolve's run of `inp` with its .out written to `out` (the library path netsolve takes: the
// file's water quality, where it has one, from a QualityRun attached after the writer's hooks).
Written write_out(const std::string& inp, const std::string& out) {
  const Network net = read_inp(inp);
  const long duration = net.times.duration;
  auto solver = make_direct_solver();
  EnergyMeter meter(net, duration);
  std::unique_ptr<QualityRun> quality;
  if (net.quality.enabled()) quality = std::make_unique<QualityRun>(net);
  EpanetOutWriter writer(net, out, inp, duration, quality ? &quality->engine() : nullptr);
  SimulationOptions sim;
  record_energy_and_output(sim, meter, &writer);
  if (quality) quality->attach(sim);
  Written w;
  w.run = simulate(net, *solver, sim);
  REQUIRE(w.run.error.empty());
  w.energy = meter.report();
  writer.finish(w.energy);
  w.file = read_epanet_out(out);
  return w;
}

template <typename T>
void check_values(const char* what, const std::vector<T>& reference, const std::vector<T>& value) {
  const std::string field = what;
  INFO(field);
  REQUIRE(reference.size() == value.size());
  int bad = 0;
  for (std::size_t i = 0; i < reference.size() && bad < 5; ++i) {
    const bool same = close(static_cast<double>(reference[i]), static_cast<double>(value[i]));
    if (!same) {
      ++bad;
      CHECK_MESSAGE(same, "at " << i << ": " << reference[i] << " against " << value[i]);
    }
  }
}

// One period's water quality fields (node quality, link quality, reaction rate) moved out of
// `values` (left 0 there) into the result.
std::vector<float> take_quality(std::vector<float>& values, std::size_t n, std::size_t m) {
  std::vector<float> q;
  for (std::size_t at : {3 * n, 4 * n + 3 * m, 4 * n + 6 * m}) {
    const auto first = values.begin() + static_cast<std::ptrdiff_t>(at);
    const auto last = first + static_cast<std::ptrdiff_t>(at == 3 * n ? n : m);
    q.insert(q.end(), first, last);
    std::fill(first, last, 0.0f);
  }
  return q;
}

// The prolog, energy, periods and epilog field by field (the water quality fields apart, to name
// them where they differ).
void check_same_file(const EpanetOutFile& ref, const EpanetOutFile& out) {
  for (std::size_t i = 0; i < ref.prolog.size(); ++i) {
    INFO("prolog integer " << i);
    CHECK(ref.prolog[i] == out.prolog[i]);
  }
  for (std::size_t t = 0; t < 3; ++t) CHECK(ref.title[t] == out.title[t]);
  CHECK(ref.report_file == out.report_file);
  CHECK(ref.chemical == out.chemical);
  CHECK(ref.quality_units == out.quality_units);
  CHECK(ref.node_ids == out.node_ids);
  CHECK(ref.link_ids == out.link_ids);
  CHECK(ref.link_from == out.link_from);
  CHECK(ref.link_to == out.link_to);
  CHECK(ref.link_type == out.link_type);
  CHECK(ref.tank_nodes == out.tank_nodes);
  check_values("tank areas", ref.tank_areas, out.tank_areas);
  check_values("elevations", ref.elevations, out.elevations);
  check_values("lengths", ref.lengths, out.lengths);
  check_values("diameters", ref.diameters, out.diameters);
  REQUIRE(ref.energy.size() == out.energy.size());
  for (std::size_t p = 0; p < ref.energy.size(); ++p) {
    CHECK(ref.energy[p].link == out.energy[p].link);
    check_values("energy", std::vector<float>(ref.energy[p].values.begin(), ref.energy[p].values.end()),
                 std::vector<float>(out.energy[p].values.begin(), out.energy[p].values.end()));
  }
  CHECK(close(ref.demand_charge, out.demand_charge));
  REQUIRE(ref.periods.size() == out.periods.size());
  const std::size_t n = ref.nodes(), m = ref.links();
  for (std::size_t p = 0; p < ref.periods.size(); ++p) {
    INFO("period " << p);
    std::vector<float> a = ref.periods[p], b = out.periods[p];
    check_values("period water quality", take_quality(a, n, m), take_quality(b, n, m));
    check_values("period results", a, b);
  }
  check_values("reactions", std::vector<float>(ref.reactions.begin(), ref.reactions.end()),
               std::vector<float>(out.reactions.begin(), out.reactions.end()));
  CHECK(ref.period_count == out.period_count);
  CHECK(ref.warning == out.warning);
  CHECK(out.end_magic == kEpanetOutMagic);
}

}  // namespace

TEST_CASE("EPANET's output file: netsolve's equals runepanet's field by field") {
  const fs::path dir = scratch();
  for (const char* name :
       {"Net1_energy", "Net1_si", "Net1_average", "Net1_range", "Net1_pda", "Net3_energy",
        "Anytown", "Net1_unbalanced", "Net1", "Net1_age", "Net1_trace", "Net1_source"}) {
    const std::string network = name;
    CAPTURE(network);
    const std::string inp = network == "Net1_unbalanced"
                                ? test::repo_networks() + "/regressions/Net1_unbalanced.inp"
                            : network == "Net1" ? test::repo_networks() + "/Net1.inp"
                                                : fixture(network + ".inp");
    const Written w = write_out(inp, (dir / (std::string(name) + ".out")).string());
    const EpanetOutFile ref = read_epanet_out(fixture(std::string(name) + ".out.gz"));
    check_same_file(ref, w.file);
    CHECK(EpanetOutFile::text(w.file.input_file) == inp);
  }
  fs::remove_all(dir);
}

TEST_CASE("EPANET's output file: what each variant exercises is in runepanet's file") {
  // So that the comparison above cannot pass on files that leave a feature out.
  const EpanetOutFile si = read_epanet_out(fixture("Net1_si.out.gz"));
  CHECK(si.prolog[9] == 5);   // LPS
  CHECK(si.prolog[10] == 1);  // kPa
  CHECK(si.warning == 6);     // negative pressures
  const EpanetOutFile average = read_epanet_out(fixture("Net1_average.out.gz"));
  CHECK(average.prolog[11] == 1);
  CHECK(average.period_count == 1);
  CHECK(read_epanet_out(fixture("Net1_range.out.gz")).prolog[11] == 4);
  const EpanetOutFile energy = read_epanet_out(fixture("Net3_energy.out.gz"));
  REQUIRE(energy.energy.size() == 2);
  CHECK(energy.demand_charge > 0);
  CHECK(energy.energy[1].values[1] != 72.0f);  // pump 335's efficiency from its curve
  CHECK(read_epanet_out(fixture("Net1_unbalanced.out.gz")).warning == 1);
  const EpanetOutFile net1 = read_epanet_out(fixture("Net1_energy.out.gz"));
  CHECK(EpanetOutFile::text(net1.title[2]) == "wall reactions are included. ");
  CHECK(net1.periods[0][3 * 11 + 4] == 0.7f);  // [QUALITY] 21 23 0.7 (after 21 0.5): node 21
}

TEST_CASE("EPANET's output file: runepanet's water quality moves away from the initial values") {
  // So that the comparison cannot pass with quality left at [QUALITY]'s values or 0: in each
  // variant some node's and some link's quality at the last period, and (CHEMICAL) the reaction
  // rates, are far from what a run without quality writes. Net1: 11 nodes, 13 links.
  const std::size_t n = 11, m = 13;
  auto moved = [&](const EpanetOutFile& f) {
    REQUIRE(f.periods.size() > 1);
    const std::vector<float>& first = f.periods.front();
    const std::vector<float>& last = f.periods.back();
    int nodes = 0, links = 0, rates = 0;
    for (std::size_t i = 0; i < n; ++i)
      nodes += std::abs(last[3 * n + i] - first[3 * n + i]) > 0.1f;
    for (std::size_t k = 0; k < m; ++k) {
      links += std::abs(last[4 * n + 3 * m + k] - first[4 * n + 3 * m + k]) > 0.1f;
      rates += last[4 * n + 6 * m + k] > 0.1f;
    }
    return std::array<int, 3>{nodes, links, rates};
  };
  const EpanetOutFile chlorine = read_epanet_out(fixture("Net1.out.gz"));
  CHECK(chlorine.prolog[7] == 1);
  CHECK(EpanetOutFile::text(chlorine.chemical) == "Chlorine");
  CHECK(EpanetOutFile::text(chlorine.quality_units) == "mg/L");
  CHECK(moved(chlorine)[0] > 3);
  CHECK(moved(chlorine)[1] > 3);
  CHECK(moved(chlorine)[2] > 3);
  for (int r = 0; r < 3; ++r) CHECK(chlorine.reactions[r] > 1000.0f);  // bulk, wall, tank
  CHECK(chlorine.reactions[3] == 0.0f);                                // no sources
  const EpanetOutFile age = read_epanet_out(fixture("Net1_age.out.gz"));
  CHECK(age.prolog[7] == 2);
  CHECK(EpanetOutFile::text(age.chemical) == "AGE");
  CHECK(EpanetOutFile::text(age.quality_units) == "hrs");
  CHECK(moved(age)[0] > 3);
  const EpanetOutFile trace = read_epanet_out(fixture("Net1_trace.out.gz"));
  CHECK(trace.prolog[7] == 3);
  CHECK(trace.prolog[8] == 10);  // node 9, the reservoir, 10th in the file
  CHECK(EpanetOutFile::text(trace.chemical) == "% from");
  CHECK(moved(trace)[0] > 3);
  const EpanetOutFile source = read_epanet_out(fixture("Net1_source.out.gz"));
  CHECK(source.prolog[12] == 9000);  // REPORT START 2:30: rates summed from the step ending 3:00
  CHECK(source.period_count == 22);
  CHECK(source.reactions[3] > 1000.0f);  // the sources' mass
  CHECK(source.reactions[0] != chlorine.reactions[0]);
}

TEST_CASE("energy: the meter's report is EPANET's (its .out) within 1e-6 relative") {
  const fs::path dir = scratch();
  for (const char* name : {"Net1_energy", "Net1_si", "Net3_energy", "Anytown"}) {
    const std::string network = name;
    CAPTURE(network);
    const Written w =
        write_out(fixture(std::string(name) + ".inp"), (dir / "energy.out").string());
    const EpanetOutFile ref = read_epanet_out(fixture(std::string(name) + ".out.gz"));
    REQUIRE(w.energy.pumps.size() == ref.energy.size());
    double cost = 0;
    for (std::size_t p = 0; p < ref.energy.size(); ++p) {
      const PumpEnergy& e = w.energy.pumps[p];
      const auto& v = ref.energy[p].values;
      CHECK(e.link + 1 == ref.energy[p].link);
      CHECK(close(v[0], e.utilization));
      CHECK(close(v[1], e.efficiency));
      CHECK(close(v[2], e.kwh_per_volume));
      CHECK(close(v[3], e.average_kw));
      CHECK(close(v[4], e.peak_kw));
      CHECK(close(v[5], e.cost_per_day));
      cost += v[5];
    }
    CHECK(close(ref.demand_charge, w.energy.demand_charge));
    CHECK(close(cost + ref.demand_charge, w.energy.total_cost));
  }
  fs::remove_all(dir);
}

TEST_CASE("energy: EPANET's report prints the demand charge times the charge again") {
  // runepanet's Net1_energy.rpt: "Demand Charge: 14214.85", "Total Cost: 14308.66" (DEMAND
  // CHARGE 12.5; the .out holds 1137.19, the peak kW x 12.5).
  const fs::path dir = scratch();
  const Written w = write_out(fixture("Net1_energy.inp"), (dir / "e.out").string());
  CHECK(w.energy.charge_per_kw == 12.5);
  CHECK(std::round(w.energy.report_demand_charge() * 100) == 1421485);
  CHECK(std::round(w.energy.report_total_cost() * 100) == 1430866);
  CHECK(std::round(w.energy.demand_charge * 100) == 113719);
  fs::remove_all(dir);
}

namespace {

// A solver that fails (a pivot <= 0 that no valve explains: EPANET's error 110) at one solve.
class FailingSolver final : public LinearSolver {
 public:
  explicit FailingSolver(int at_solve) : at_solve_(at_solve) {}
  LinearSolveStats solve(const CsrMatrix<double>& A, const std::vector<double>& b,
                         std::vector<double>& x) override {
    if (++solves_ >= at_solve_) {
      LinearSolveStats s;
      s.failed_row = 0;
      s.converged = false;
      return s;
    }
    return inner_->solve(A, b, x);
  }
  bool solve_in_file_order(const CsrMatrix<double>&, const std::vector<double>&,
                           std::vector<double>&, LinearSolveStats&) override {
    return false;
  }
  std::string name() const override { return "failing"; }

 private:
  int at_solve_, solves_ = 0;
  std::unique_ptr<LinearSolver> inner_ = make_direct_solver();
};

}  // namespace

TEST_CASE("EPANET's output file: a run that stops on an error leaves no file") {
  const fs::path dir = scratch();
  const fs::path out = dir / "failed.out";
  const Network net = read_inp(fixture("Net1_energy.inp"));
  FailingSolver solver(20);  // a few periods in
  {
    EnergyMeter meter(net, net.times.duration);
    EpanetOutWriter writer(net, out.string(), "Net1_energy.inp", net.times.duration);
    SimulationOptions sim;
    record_energy_and_output(sim, meter, &writer);
    const SimulationResults s = simulate(net, solver, sim);
    CHECK_FALSE(s.error.empty());
    CHECK(s.steps.size() > 1);
  }  // not finished: nothing is left, not even the temporary file
  CHECK_FALSE(fs::exists(out));
  CHECK(fs::is_empty(dir));
  fs::remove_all(dir);
}

TEST_CASE("EPANET's output file: the reader refuses what is not one") {
  const fs::path dir = scratch();
  const std::string bad = (dir / "bad.out").string();
  std::ofstream(bad) << "not an output file at all, long enough to hold a few numbers";
  CHECK_THROWS_AS(read_epanet_out(bad), InputError);
  // A real file cut short.
  const Written w = write_out(fixture("Net1_average.inp"), (dir / "a.out").string());
  const std::uintmax_t size = fs::file_size(dir / "a.out");
  fs::resize_file(dir / "a.out", size - 4);
  CHECK_THROWS_AS(read_epanet_out((dir / "a.out").string()), InputError);
  CHECK_THROWS_AS(read_epanet_out((dir / "missing.out").string()), InputError);
  fs::remove_all(dir);
}

TEST_CASE("netsolve --out: written as runepanet's, checked before the run, none on failure") {
  using cgs::testing::run_command;
  const std::string netsolve = CGSOLVE_BINARY_DIR "/app/netsolve --quiet --network ";
  const fs::path dir = scratch();
  const std::string inp = fixture("Net3_energy.inp");
  const std::string out = (dir / "n.out").string(), json = (dir / "n.json").string();
  auto run = run_command(netsolve + inp + " --out " + out + " --report " + json);
  REQUIRE(run.exit_code == 0);
  check_same_file(read_epanet_out(fixture("Net3_energy.out.gz")), read_epanet_out(out));
  nlohmann::json report;
  std::ifstream(json) >> report;
  REQUIRE(report["energy"]["pumps"].size() == 2);
  CHECK(report["energy"]["pumps"][1]["pump"] == "335");
  CHECK(report["energy"]["volume_unit"] == "Mgal");
  CHECK(close(read_epanet_out(out).demand_charge, report["energy"]["demand_charge"].get<double>()));
  CHECK(report["out"]["periods"] == 25);
  CHECK(report["out"]["warning"] == 0);
  // Never over an input, never into a folder that does not exist: refused before the run.
  const std::string copy = (dir / "copy.inp").string();
  fs::copy_file(inp, copy);
  const auto before = fs::file_size(copy);
  run = run_command(netsolve + copy + " --out " + copy);
  CHECK(run.exit_code == 2);
  CHECK(fs::file_size(copy) == before);
  run = run_command(netsolve + inp + " --out " + (dir / "no" / "n.out").string());
  CHECK(run.exit_code == 2);
  CHECK(run.output.find("--out") != std::string::npos);
  run = run_command(netsolve + inp + " --study fireflow --out " + (dir / "s.out").string());
  CHECK(run.exit_code == 2);
  CHECK_FALSE(fs::exists(dir / "s.out"));
  // An input error: no file (and an older one at the path is left as it was).
  std::ofstream(dir / "broken.inp") << "[JUNCTIONS]\nJ 0\n[PIPES]\nP J X 10 10 100\n";
  run = run_command(netsolve + (dir / "broken.inp").string() + " --out " + out);
  CHECK(run.exit_code == 2);
  check_same_file(read_epanet_out(fixture("Net3_energy.out.gz")), read_epanet_out(out));
  fs::remove(out);
  run = run_command(netsolve + (dir / "broken.inp").string() + " --out " + out);
  CHECK_FALSE(fs::exists(out));
  fs::remove_all(dir);
}

TEST_CASE("netsolve NET.inp NET.rpt NET.out: the run's water quality, none with --no-quality") {
  using cgs::testing::run_command;
  const std::string netsolve = CGSOLVE_BINARY_DIR "/app/netsolve --quiet ";
  const fs::path dir = scratch();
  const std::string inp = fixture("Net1_source.inp");
  const std::string rpt = (dir / "q.rpt").string(), out = (dir / "q.out").string();
  auto run = run_command(netsolve + inp + " " + rpt + " " + out);
  REQUIRE(run.exit_code == 0);
  check_same_file(read_epanet_out(fixture("Net1_source.out.gz")), read_epanet_out(out));
  // The report's step hook keeps the energy meter's: runepanet's Net1_energy.rpt energy table.
  run = run_command(netsolve + fixture("Net1_energy.inp") + " " + rpt);
  REQUIRE(run.exit_code == 0);
  std::stringstream text;
  text << std::ifstream(rpt).rdbuf();
  CHECK(text.str().find("Demand Charge:  14214.85") != std::string::npos);
  CHECK(text.str().find("Total Cost:     14308.66") != std::string::npos);
  // --no-quality: EPANET's file of a run without quality (flag 0, node quality the initial
  // values), the hydraulics unchanged.
  run = run_command(netsolve + "--no-quality --network " + inp + " --out " + out);
  REQUIRE(run.exit_code == 0);
  const EpanetOutFile none = read_epanet_out(out);
  CHECK(none.prolog[7] == 0);
  CHECK(EpanetOutFile::text(none.chemical) == "Chemical");
  CHECK(EpanetOutFile::text(none.quality_units).empty());
  for (float r : none.reactions) CHECK(r == 0.0f);
  const EpanetOutFile ref = read_epanet_out(fixture("Net1_source.out.gz"));
  const std::size_t n = ref.nodes(), m = ref.links();
  for (std::size_t p = 0; p < ref.periods.size(); ++p) {
    std::vector<float> a = ref.periods[p], b = none.periods[p];
    take_quality(a, n, m);
    const std::vector<float> q = take_quality(b, n, m);
    check_values("hydraulics", a, b);
    CHECK(q[0] == 0.5f);  // node 10's [QUALITY] value, every period
    CHECK(q[n] == 0.0f);  // link quality
  }
  fs::remove_all(dir);
}

TEST_CASE(
    "netsolve --quality-hydraulics: runepanet's float32 hydraulics or the toolkit's doubles") {
  using cgs::testing::run_command;
  const std::string netsolve = CGSOLVE_BINARY_DIR "/app/netsolve --quiet --network ";
  const fs::path dir = scratch();
  const std::string inp = fixture("Net1_trace.inp"), out = (dir / "t.out").string();
  const EpanetOutFile ref = read_epanet_out(fixture("Net1_trace.out.gz"));
  auto run = run_command(netsolve + inp + " --quality-hydraulics file --out " + out);
  REQUIRE(run.exit_code == 0);
  check_same_file(ref, read_epanet_out(out));
  // On the doubles (EN_runQ beside EN_runH) the trace is off runepanet's beyond 1e-6 somewhere,
  // within 1e-4, the hydraulics the same.
  run = run_command(netsolve + inp + " --quality-hydraulics doubles --out " + out);
  REQUIRE(run.exit_code == 0);
  const EpanetOutFile doubles = read_epanet_out(out);
  REQUIRE(doubles.periods.size() == ref.periods.size());
  const std::size_t n = ref.nodes(), m = ref.links();
  double worst = 0;
  for (std::size_t p = 0; p < ref.periods.size(); ++p) {
    std::vector<float> a = ref.periods[p], b = doubles.periods[p];
    const std::vector<float> qa = take_quality(a, n, m), qb = take_quality(b, n, m);
    check_values("hydraulics", a, b);
    for (std::size_t i = 0; i < qa.size(); ++i)
      worst = std::max(
          worst, std::abs(double(qa[i]) - double(qb[i])) / std::max(1.0, std::abs(double(qa[i]))));
  }
  CHECK(worst > 1e-6);
  CHECK(worst < 1e-4);
  run = run_command(netsolve + inp + " --quality-hydraulics float --out " + out);
  CHECK(run.exit_code != 0);
  fs::remove_all(dir);
}

TEST_CASE("[ENERGY], [QUALITY] and STATISTIC as EPANET reads them") {
  auto parse = [](const std::string& text) {
    std::istringstream in(text);
    return parse_inp(in, "t.inp");
  };
  const std::string base =
      "[RESERVOIRS]\nR 100\n[JUNCTIONS]\n5 0 1\n7 0 1\n12 0 1\nA 0 1\n[PIPES]\nP1 R 5 10 10 "
      "100\nP2 5 7 10 10 100\nP3 7 12 10 10 100\nP4 12 A 10 10 100\n[PUMPS]\nU R A HEAD C\n"
      "[CURVES]\nC 10 50\nE 10 70\n[PATTERNS]\nX 1 2\n";
  const Network net = parse(base +
                            "[ENERGY]\nGLOBAL EFFIC 60\nGlobal Price 0.2\nGLOBAL PATTERN X\n"
                            "Pump U Effic E\nPUMP U PRICE 0.3\nPUMP U PATT X\nDEMAND CHARGE 4\n"
                            "[QUALITY]\n5 12 0.25\nA 1.5\n[TIMES]\nSTATISTIC MAXIMUM\n");
  CHECK(net.energy.efficiency == 60);
  CHECK(net.energy.price == 0.2);
  CHECK(net.energy.price_pattern == 0);
  CHECK(net.energy.demand_charge == 4);
  const Pump& pump = net.pumps[0];
  CHECK(pump.efficiency_curve == 1);
  CHECK(pump.price == 0.3);
  CHECK(pump.price_pattern == 0);
  // A numeric range takes the IDs as numbers: 5, 7 and 12 (12 < 5 as strings).
  auto c0 = [&](const char* id) {
    return net.quality.initial[static_cast<std::size_t>(net.find_node(id))] * net.quality.to_user;
  };
  for (const char* id : {"5", "7", "12"}) CHECK(c0(id) == 0.25);
  CHECK(c0("A") == 1.5);
  CHECK(c0("R") == 0);
  CHECK(net.times.statistic == TimeOptions::Statistic::maximum);
  auto error = [&](const std::string& text) {
    try {
      parse(base + text);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error("[QUALITY]\nZ 1\n").find("error 203") != std::string::npos);
  CHECK(error("[QUALITY]\nA -1\n").find("error 209") != std::string::npos);
  CHECK(error("[QUALITY]\nA x\n").find("error 202") != std::string::npos);
  CHECK(error("[TIMES]\nSTATISTIC MEAN\n").find("error 213") != std::string::npos);
  CHECK(error("[ENERGY]\nPUMP P1 PRICE 1\n").find("error 216") != std::string::npos);
  CHECK(error("[ENERGY]\nGLOBAL EFFIC 0\n").find("error 217") != std::string::npos);
}
