// Water quality against EPANET 2.3.5 (issue 49): every node's and link's quality at every
// reporting time of 24 h, within 1e-4 relative or 1e-6 absolute (the file's units, AGE in hours),
// on EPANET's example networks as they are (Net1's chlorine, Net2's fluoride, Net3's trace from
// the lake) and on variants of Net1 and Net3 (data/networks/quality/*.quality, appended to the
// network before its [END]) that reach each part of the engine: AGE, TRACE from a tank,
// first-order bulk and wall reactions with mass transfer, second-order and order-1.5 bulk decay,
// a limiting potential, zero-order wall reactions, the roughness correlation, CONCEN, MASS,
// SETPOINT and FLOWPACED sources with patterns, MIXED, 2COMP, FIFO and LIFO tanks, initial
// qualities and quality steps, and EPANET's NaN where its bulk rate of order 0.5 meets a zero
// concentration. The expected series: data/networks/quality/README.md.
#include <doctest/doctest.h>
#include <zlib.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "network/inp_reader.hpp"
#include "network/linear_solver.hpp"
#include "network/network_test_data.hpp"
#include "network/quality/quality_run.hpp"
#include "network/simulation.hpp"

namespace cgs::net {
namespace {

std::string read_gz(const std::string& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  REQUIRE_MESSAGE(file != nullptr, "cannot open " << path);
  std::string text;
  char buffer[1 << 15];
  for (int n; (n = gzread(file, buffer, sizeof buffer)) > 0;) text.append(buffer, std::size_t(n));
  gzclose(file);
  return text;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot open " << path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The network's text up to its [END], then `extra`.
std::string with_quality(const std::string& inp, const std::string& extra) {
  std::string text = read_text(inp);
  const std::size_t end = text.find("[END]");
  if (end != std::string::npos) text.resize(end);
  return text + "\n" + extra;
}

struct Run {
  Network net;
  QualityResults quality;
};

Run run_quality(const std::string& text) {
  Run r;
  std::istringstream in(text);
  r.net = parse_inp(in, "quality.inp");
  QualityRun quality(r.net, QualityHydraulics::doubles);  // as epanet-run's EN_runQ beside EN_runH
  SimulationOptions options;
  options.duration = 86400;
  quality.attach(options);
  auto solver = make_direct_solver();
  const SimulationResults s = simulate(r.net, *solver, options);
  CHECK(s.ok());
  r.quality = quality.results();
  return r;
}

bool close(double a, double b) {
  if (a == b || (std::isnan(a) && std::isnan(b))) return true;  // also EPANET's inf and NaN
  return std::abs(a - b) <= 1e-6 || std::abs(a - b) <= 1e-4 * std::abs(b);
}

// Every row of EPANET's time_s,kind,id,quality against the run; the number of values compared.
long compare(const Run& r, const std::string& expected_gz) {
  std::istringstream in(read_gz(expected_gz));
  std::string line;
  std::getline(in, line);
  REQUIRE(line == "time_s,kind,id,quality");
  long compared = 0, mismatches = 0;
  std::size_t t = 0;
  while (std::getline(in, line)) {
    std::istringstream row(line);
    std::string time, kind, id, value;
    std::getline(row, time, ',');
    std::getline(row, kind, ',');
    std::getline(row, id, ',');
    std::getline(row, value);
    const long seconds = std::stol(time);
    while (t < r.quality.times.size() && r.quality.times[t] < seconds) ++t;
    REQUIRE_MESSAGE(t < r.quality.times.size(), "no results at " << seconds << " s");
    REQUIRE(r.quality.times[t] == seconds);
    const bool node = kind == "node";
    const int index = node ? r.net.find_node(id) : r.net.find_link(id);
    REQUIRE(index >= 0);
    const double got = node ? r.quality.nodes[t][index] : r.quality.links[t][index];
    const double want = std::stod(value);
    if (!close(got, want) && ++mismatches <= 5)
      MESSAGE(kind << " " << id << " at " << seconds << " s: " << got << ", EPANET " << want);
    ++compared;
  }
  CHECK(mismatches == 0);
  CHECK(t + 1 == r.quality.times.size());  // every reporting time compared
  return compared;
}

const std::string kQuality = test::repo_networks() + "/quality/";

TEST_CASE("quality: EPANET's examples as they are (Net1 chlorine, Net2 fluoride, Net3 trace)") {
  struct Case {
    const char* net;
    long values;
  };
  for (const Case c : {Case{"Net1", 600}, Case{"Net2", 1900}, Case{"Net3", 5400}}) {
    CAPTURE(std::string(c.net));
    const Run r = run_quality(with_quality(test::repo_networks() + "/" + c.net + ".inp", ""));
    CHECK(r.quality.times.size() == 25);
    CHECK(compare(r, kQuality + c.net + ".csv.gz") == c.values);
  }
}

TEST_CASE("quality: variants of Net1 and Net3 (age, trace, reactions, sources, tank models)") {
  // Net1_nan: EPANET's own NaN (order 0.5 at 0 mg/L), which netsolve must give too.
  for (const char* name : {"Net1_age_fifo", "Net1_age_lifo", "Net1_second_order", "Net1_roughness",
                           "Net1_nan", "Net3_chemical", "Net3_age", "Net3_trace_tank"}) {
    CAPTURE(std::string(name));
    const std::string base = std::string(name).substr(0, 4);
    const Run r = run_quality(with_quality(test::repo_networks() + "/" + base + ".inp",
                                           read_text(kQuality + name + ".quality")));
    CHECK(compare(r, kQuality + name + ".csv.gz") == (base == "Net1" ? 600 : 5400));
  }
}

// EPANET's mass balance after 24 h, as runepanet's report writes it ([REPORT] STATUS YES; the
// totals with 6 significant digits, the ratio with 5 decimals): data/networks/quality/README.md.
TEST_CASE("quality: EPANET's mass balance") {
  struct Case {
    const char* name;
    double initial, inflow, outflow, reacted, final, ratio;
  };
  for (const Case c :
       {Case{"Net1", 7.47582e+06, 5.73534e+06, 3.22693e+06, 5.27198e+06, 4.71226e+06, 1.00000},
        Case{"Net3", 0, 3.70447e+07, 3.23424e+07, 0, 4.70231e+06, 1.00000},
        Case{"Net1_second_order", 7.47582e+06, 1.06169e+07, 8.56621e+06, 2.71122e+06,
             6.81531e+06, 1.00000},
        Case{"Net3_chemical", 1.98149e+07, 5.80317e+10, 3.00887e+10, 1.09483e+10, 1.70145e+10,
             1.00000},
        Case{"Net3_age", 0, 0, 1.07438e+07, -3.16979e+07, 2.09541e+07, 1.00000},
        Case{"Net1_age_fifo", 3.08425e+06, 6.07622e+05, 2.34469e+06, -7.23956e+06, 8.58673e+06,
             1.00000},
        Case{"Net1_roughness", 7.47582e+06, 8.60302e+06, 4.75944e+06, 5.61046e+06, 5.70867e+06,
             0.99998},
        Case{"Net1_age_lifo", 7.23431e+06, 2.02541e+05, 1.63628e+06, -7.23986e+06, 1.30431e+07,
             1.00018},
        Case{"Net3_trace_tank", 0, 3.84325e+06, 2.75386e+06, 0, 1.08939e+06, 1.00000}}) {
    const std::string name = c.name;
    CAPTURE(name);
    const std::string base = name.substr(0, 4);
    const std::string extra = name.size() > 4 ? read_text(kQuality + name + ".quality") : "";
    const Run r = run_quality(with_quality(test::repo_networks() + "/" + base + ".inp", extra));
    const QualityMassBalance& b = r.quality.balance;
    auto same = [](double got, double want) {
      return std::abs(got - want) <= 5e-6 * std::abs(want) + 1e-9;
    };
    CHECK(same(b.initial, c.initial));
    CHECK(same(b.inflow, c.inflow));
    CHECK(same(b.outflow, c.outflow));
    CHECK(same(b.reacted, c.reacted));
    CHECK(same(b.final, c.final));
    CHECK(std::abs(b.ratio - c.ratio) <= 5e-6);
  }
}

}  // namespace
}  // namespace cgs::net
