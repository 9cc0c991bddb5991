// The fuzz_eps harness (tests/fuzz/eps_harness.hpp) outside libFuzzer: every reproducer of a past
// finding (tests/fuzz/regressions/fuzz_eps) runs clean, and every seed the target starts from
// (tests/fuzz/corpus/fuzz_inp, the networks cut from the shared ones) reaches the simulation, so
// the fuzzer starts past the reader, and the seeds with water quality reach the quality engine,
// the finished .out (read back) and the report; between them the seeds name every quality kind,
// source type, mixing model, reaction order, STATISTIC and [ENERGY] keyword.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "fuzz/eps_harness.hpp"

namespace cgs::fuzz {
namespace {

namespace fs = std::filesystem;

const fs::path kFuzz = CGSOLVE_SOURCE_DIR "/tests/fuzz";

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST_CASE("fuzz_eps: every seed network the reader takes is connected and steps through time") {
  // Not every seed is read: net3-cut.inp is a reader seed (it names a node it cut). Those the
  // reader takes (the DEMAND MODEL PDA ones too, since pressure-driven analysis landed) must get past
  // the connectivity check into the stepping, where this target looks for findings.
  int simulated = 0;
  for (const auto& entry : fs::directory_iterator(kFuzz / "corpus" / "fuzz_inp")) {
    CAPTURE(entry.path().string());
    EpsOutcome outcome;
    CHECK_NOTHROW(outcome = run_bounded_eps(read_text(entry.path())));
    if (!outcome.parsed) continue;
    CHECK(outcome.simulated);
    CHECK(outcome.steps >= 2);  // every seed has a duration: at least two periods
    simulated += outcome.simulated;
  }
  CHECK(simulated >= 10);
}

TEST_CASE("fuzz_eps: the seeds with quality run it, and write the .out and the report") {
  int with_quality = 0;
  for (const auto& entry : fs::directory_iterator(kFuzz / "corpus" / "fuzz_inp")) {
    const std::string name = entry.path().filename().string();
    if (name.find("quality") == std::string::npos) continue;
    CAPTURE(name);
    EpsOutcome outcome;
    CHECK_NOTHROW(outcome = run_bounded_eps(read_text(entry.path())));
    CHECK(outcome.quality);
    CHECK_FALSE(outcome.bounded);
    CHECK(outcome.out_periods >= 1);  // 1: a STATISTIC's one period
    CHECK(outcome.report_chars > 0);
    with_quality += outcome.quality;
  }
  CHECK(with_quality >= 6);
}

TEST_CASE("fuzz_eps: between them the seeds name every quality, [ENERGY] and STATISTIC kind") {
  std::set<int> types, sources, mixing, statistics;
  std::set<double> bulk_orders, wall_orders;
  bool pump_price = false, pump_pattern = false, pump_curve = false, price_pattern = false,
       demand_charge = false;
  for (const auto& entry : fs::directory_iterator(kFuzz / "corpus" / "fuzz_inp")) {
    std::istringstream in(read_text(entry.path()));
    net::Network net;
    try {
      net = net::parse_inp(in, entry.path().string());
    } catch (const InputError&) {
      continue;  // net3-cut.inp: a reader seed only
    }
    const net::QualityInput& q = net.quality;
    types.insert(static_cast<int>(q.type));
    statistics.insert(static_cast<int>(net.times.statistic));
    if (q.type == net::QualityType::chemical) {
      bulk_orders.insert(q.bulk_order);
      wall_orders.insert(q.wall_order);
    }
    for (const net::QualitySource& source : q.sources) sources.insert(static_cast<int>(source.type));
    for (std::size_t n = 0; n < q.mixing.size(); ++n)
      if (net.nodes[n].type == net::NodeType::tank) mixing.insert(static_cast<int>(q.mixing[n]));
    for (const net::Pump& pump : net.pumps) {
      pump_price |= pump.price > 0;
      pump_pattern |= pump.price_pattern >= 0;
      pump_curve |= pump.efficiency_curve >= 0;
    }
    price_pattern |= net.energy.price_pattern >= 0;
    demand_charge |= net.energy.demand_charge > 0;
  }
  CHECK(types.size() == 4);       // NONE, CHEMICAL, AGE, TRACE
  CHECK(sources.size() == 4);     // CONCEN, MASS, SETPOINT, FLOWPACED
  CHECK(mixing.size() == 4);      // MIXED, 2COMP, FIFO, LIFO
  CHECK(statistics.size() == 5);  // NONE, AVERAGE, MINIMUM, MAXIMUM, RANGE
  CHECK(bulk_orders.size() >= 2);
  CHECK(wall_orders == std::set<double>{0.0, 1.0});
  CHECK((pump_price && pump_pattern && pump_curve && price_pattern && demand_charge));
}

TEST_CASE("fuzz_eps: the bounds end a long run quietly, and bad input is InputError's") {
  // A 1-second step over 2 hours would be 7,200 periods: the step bound ends it.
  const std::string network =
      "[RESERVOIRS]\nR 100\n[TANKS]\nT 50 10 0 20 30 0\n[JUNCTIONS]\nJ 10 5\n"
      "[PIPES]\nP1 R J 1000 12 100\nP2 J T 500 8 100\n"
      "[TIMES]\nDURATION 48:00\nHYDRAULIC TIMESTEP 0:00:01\n";
  const EpsOutcome outcome = run_bounded_eps(network);
  CHECK(outcome.simulated);
  CHECK(outcome.bounded);
  CHECK(outcome.steps == eps_bounds::kMaxSteps);
  const EpsOutcome refused = run_bounded_eps("[PIPES]\nP1 R J 1000 12 100\n");
  CHECK_FALSE(refused.parsed);
  CHECK_FALSE(refused.simulated);
}

TEST_CASE("fuzz_eps: every reproducer of a past finding runs clean") {
  const fs::path dir = kFuzz / "regressions" / "fuzz_eps";
  if (!fs::exists(dir)) return;
  for (const auto& entry : fs::directory_iterator(dir)) {
    CAPTURE(entry.path().string());
    CHECK_NOTHROW(run_bounded_eps(read_text(entry.path())));
  }
}

}  // namespace
}  // namespace cgs::fuzz
