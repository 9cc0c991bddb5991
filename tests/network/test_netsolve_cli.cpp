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
  CHECK(contains(r.output, cgs::net::cholmod_available() ? "direct: CHOLMOD" : "direct: Eigen"));
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
  CHECK(j["solver"]["backend"] == (cgs::net::cholmod_available() ? "cholmod" : "eigen"));
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
  CHECK(first_line(nodes) == "time_s,node,head,pressure,demand,cut_off");
  CHECK(first_line(links) == "time_s,link,flow,headloss,status");
  CHECK(contains(first_line(tanks), "time_s,tank,level"));
  std::ifstream in(report);
  const auto j = nlohmann::json::parse(in);
  CHECK(j["series"]["steps"] == 27);
  CHECK(j["series"]["completed"] == true);
  CHECK(j["solver"]["kind"] == "direct");
  CHECK(j["reference"]["match"] == true);
  fs::remove_all(dir);
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
