// netsolve run as a process on the networks in data/networks: the solver choice, exit codes, the
// report.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "network/linear_solver.hpp"
#include "network_test_data.hpp"
#include "run_command.hpp"

namespace fs = std::filesystem;

namespace {

const std::string kNetsolve = CGSOLVE_BINARY_DIR "/app/netsolve";

using cgs::testing::Run;
using cgs::testing::run_command;

Run netsolve(const std::string& arguments) {
  const std::string command = kNetsolve + " " + arguments;
  return run_command(command);
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

fs::path scratch_dir() {
  fs::path dir = fs::temp_directory_path() / ("netsolve-cli-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

const std::string kNet1 = cgs::net::test::repo_networks() + "/Net1.inp";
const std::string kReference = cgs::net::test::repo_networks() + "/reference";

}  // namespace

TEST_CASE("netsolve solves with the direct solver by default and says which backend ran") {
  const Run r = netsolve("--network " + kNet1 + " --reference " + kReference);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.output, "direct: sparse Cholesky LL^T, EPANET's left-looking"));
  CHECK(contains(r.output, ": match"));
}

TEST_CASE("netsolve --solver cg still solves with CG") {
  const Run r = netsolve("--network " + kNet1 + " --solver cg --device serial " + "--reference " +
                         kReference);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.output, "cg/csr/serial"));
  CHECK(contains(r.output, ": match"));
}

TEST_CASE("netsolve refuses an unknown solver") {
  const Run r = netsolve("--network " + kNet1 + " --solver lu");
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "--solver"));
}

TEST_CASE("netsolve's JSON report names the solver") {
  const fs::path report = scratch_dir() / "run.json";
  const Run r = netsolve("--network " + kNet1 + " --quiet --report " + report.string());
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.empty());
  std::ifstream in(report);
  const auto j = nlohmann::json::parse(in);
  CHECK(j["solver"]["kind"] == "direct");
  CHECK(j["solver"]["backend"] == "native");
  CHECK(contains(j["solver"]["name"].get<std::string>(), "direct:"));
  fs::remove_all(report.parent_path());
}

TEST_CASE(
    "netsolve runs Net1's 24 h: one line per step, series outputs, the whole series compared") {
  const fs::path dir = scratch_dir();
  const std::string nodes = (dir / "n.csv").string(), links = (dir / "l.csv").string(),
                    tanks = (dir / "t.csv").string(), report = (dir / "r.json").string();
  const Run r = netsolve("--network " + kNet1 + " --reference " + kReference + "-eps --nodes " +
                         nodes + " --links " + links + " --tanks " + tanks + " --report " + report);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.output, "12:32:34"));  // a step cut short by pump 9's tank-level control
  CHECK(contains(r.output, "completed: 27 hydraulic steps to 24:00:00"));
  CHECK(contains(r.output, "vs EPANET: 25 reporting times"));
  CHECK(contains(r.output, ": match"));
  auto first_line = [](const std::string& path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
  };
  CHECK(first_line(nodes) ==
        "time_s,node,head,pressure,demand,cut_off,required_demand,delivered_demand,deficit,"
        "deficit_pct");
  CHECK(first_line(links) == "time_s,link,flow,headloss,status");
  CHECK(contains(first_line(tanks), "time_s,tank,level"));
  std::ifstream in(report);
  const auto j = nlohmann::json::parse(in);
  CHECK(j["series"]["steps"] == 27);
  CHECK(j["series"]["completed"] == true);
  CHECK(j["solver"]["kind"] == "direct");
  CHECK(j["reference"]["match"] == true);
  CHECK(j["demand_model"]["model"] == "DDA");
  fs::remove_all(dir);
}

TEST_CASE("netsolve's PDA flags: the node series has the delivered demand and the deficit") {
  const fs::path dir = scratch_dir();
  const std::string nodes = (dir / "n.csv").string(), report = (dir / "r.json").string();
  const Run r = netsolve("--network " + kNet1 + " --duration 0 --demand-model PDA " +
                         "--minimum-pressure 100 --required-pressure 140 --nodes " + nodes +
                         " --report " + report);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.output, "pressure-driven demand (minimum 100, required 140 psi, exponent 0.5)"));
  // Every row: demand = delivered (no emitters in Net1), deficit = required - delivered, and its
  // percentage; some junctions are short at these pressures.
  std::ifstream in(nodes);
  std::string line;
  std::getline(in, line);
  int rows = 0, short_of_demand = 0;
  while (std::getline(in, line)) {
    std::vector<double> v;
    std::stringstream fields(line);
    std::string field, id;
    for (int column = 0; std::getline(fields, field, ','); ++column)
      if (column == 1)
        id = field;
      else
        v.push_back(std::stod(field));
    REQUIRE(v.size() == 9);  // time, head, pressure, demand, cut_off, required, delivered, ...
    const double demand = v[3], required = v[5], delivered = v[6], deficit = v[7], pct = v[8];
    if (id == "9" || id == "2") {  // the reservoir and the tank: net inflow, no consumer demand
      CHECK(required == 0);
      CHECK(deficit == 0);
      continue;
    }
    CHECK(demand == doctest::Approx(delivered));
    if (required == 0) {  // junction 10: none asked for, none delivered, no deficit
      CHECK(delivered == 0);
      CHECK(deficit == 0);
      CHECK(pct == 0);
      continue;
    }
    // Written with 10 significant digits each.
    CHECK(deficit == doctest::Approx(std::max(required - delivered, 0.0)).epsilon(1e-7));
    CHECK(pct == doctest::Approx(100 * deficit / required).epsilon(1e-7));
    short_of_demand += deficit > 1e-3;
    ++rows;
  }
  CHECK(rows == 8);  // the junctions with a demand
  CHECK(short_of_demand > 0);
  std::ifstream json(report);
  const auto j = nlohmann::json::parse(json);
  CHECK(j["demand_model"]["model"] == "PDA");
  CHECK(j["demand_model"]["required_pressure"] == 140);
  CHECK(j["steps"][0]["deficient_nodes"] == short_of_demand);
  fs::remove_all(dir);
}

TEST_CASE("netsolve's PDA flags are checked as EPANET checks them: exit 2, the flags named") {
  for (const auto& bad_message : {
           std::pair<std::string, std::string>{"--demand-model xda", "--demand-model"},
           {"--minimum-pressure 20 --required-pressure 10", "EPANET error 208"},
           {"--demand-model pda --minimum-pressure -1", "EPANET error 208"},
           {"--demand-model pda --pressure-exponent 0",
            "the pressure exponent (0) must be positive"},
           {"--required-pressure 0.05", "must be at least 0.1 above the minimum pressure (0)"},
           {"--minimum-pressure 3x", "--minimum-pressure"},
       }) {
    const std::string& bad = bad_message.first;
    CAPTURE(bad);
    const Run r = netsolve("--network " + kNet1 + " --duration 0 " + bad);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.output, bad_message.second));
  }
  // A minimum alone moves EPANET's default required pressure with it, as in a file.
  CHECK(netsolve("--network " + kNet1 + " --duration 0 --demand-model pda --minimum-pressure 20")
            .exit_code == 0);
}

TEST_CASE("netsolve: bad times, controls and rules exit 2 naming the file and line") {
  CHECK(netsolve("--network " + kNet1 + " --duration 3x").exit_code == 2);
  const fs::path dir = scratch_dir();
  std::ifstream in(kNet1);
  std::stringstream text;
  text << in.rdbuf();
  const std::string original = text.str();
  const std::string control = " LINK 9 OPEN IF NODE 2 BELOW 110";
  REQUIRE(contains(original, control));
  // Plain variables, not structured bindings: clang 14 cannot capture those in CAPTURE's lambda.
  for (const auto& bad_message : {std::pair<std::string, std::string>{
                                      " LINK 9 OPEN IF NODE XX BELOW 110", "unknown node 'XX'"},
                                  {" LINK NOPE OPEN AT TIME 2", "unknown link 'NOPE'"},
                                  {" LINK 9 OPEN AT TIME 1:7x", "invalid time '1:7x'"}}) {
    const std::string& bad = bad_message.first;
    const std::string& message = bad_message.second;
    CAPTURE(bad);
    std::string edited = original;
    edited.replace(edited.find(control), control.size(), bad);
    const std::string path = (dir / "bad.inp").string();
    std::ofstream(path) << edited;
    const Run r = netsolve("--network " + path);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.output, "bad.inp:68: "));
    CHECK(contains(r.output, message));
  }
  // A rule naming an unknown tank, a junction naming an unknown pattern.
  const std::string junction = " 11              \t710         \t150         \t                \t;";
  REQUIRE(contains(original, junction));
  for (const auto& edit :
       {std::tuple<std::string, std::string, std::string>{
            "[RULES]\n", "[RULES]\nRULE 1\nIF TANK XX LEVEL ABOVE 5\nTHEN LINK 10 STATUS IS OPEN\n",
            "unknown node 'XX' in rule 1"},
        {junction, " 11 710 150 NOPAT ;", "bad.inp:9: unknown pattern 'NOPAT'"}}) {
    const auto& [from, to_, where] = edit;
    const std::string& to = to_;  // CAPTURE below: a plain reference, not a binding (clang 14)
    CAPTURE(to);
    std::string edited = original;
    edited.replace(edited.find(from), from.size(), to);
    const std::string path = (dir / "bad.inp").string();
    std::ofstream(path) << edited;
    const Run r = netsolve("--network " + path);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.output, where));
  }
  fs::remove_all(dir);
}
