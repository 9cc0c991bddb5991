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

// --solver cg's default (--precond auto on a network): CG preconditioned by EPANET's factor,
// started from its answer: the direct path's series byte for byte, the plan in the report.
TEST_CASE("netsolve --solver cg by default writes the direct path's series, byte for byte") {
  const fs::path dir = scratch_dir();
  auto series = [&](const std::string& solver) {
    const std::string nodes = (dir / (solver + "_n.csv")).string();
    const std::string links = (dir / (solver + "_l.csv")).string();
    const std::string report = (dir / (solver + ".json")).string();
    const Run r = netsolve("--network " + kNet1 + " --solver " + solver + " --quiet --nodes " +
                           nodes + " --links " + links + " --report " + report);
    CHECK(r.exit_code == 0);
    auto text = [](const std::string& path) {
      std::ifstream in(path);
      std::stringstream s;
      s << in.rdbuf();
      return s.str();
    };
    std::ifstream in(report);
    return std::tuple{text(nodes) + text(links), nlohmann::json::parse(in)};
  };
  const auto [direct, direct_report] = series("direct");
  const auto [cg, cg_report] = series("cg");
  CHECK(!direct.empty());
  CHECK(cg == direct);
  CHECK(cg_report["solver"]["kind"] == "cg");
  CHECK(cg_report["solver"]["plan"]["precond"] == "chol:order=given,pivot=fail");
  CHECK(cg_report["solver"]["plan"]["threads"] == 1);
  CHECK(contains(cg_report["solver"]["name"].get<std::string>(), "started from M^-1 b"));
  CHECK(!direct_report["solver"].contains("plan"));
  fs::remove_all(dir);
}

TEST_CASE("netsolve --version answers, without a network") {
  const Run r = netsolve("--version");
  CHECK(r.exit_code == 0);
  CHECK(contains(r.output, "netsolve "));
  CHECK(!contains(r.output, "required"));
}

// Output paths are checked before the run: no two outputs on one file, no output into a folder
// that is missing; an ID with a comma is quoted in the CSV files (RFC 4180).
TEST_CASE("netsolve checks its outputs before the run and quotes IDs that need it") {
  const fs::path dir = scratch_dir();
  const std::string same = (dir / "same.csv").string();
  const Run twice = netsolve("--network " + kNet1 + " --nodes " + same + " --links " + same);
  CHECK(twice.exit_code == 2);
  CHECK(contains(twice.output, "--links and --nodes name one file"));
  CHECK(!fs::exists(same));
  const std::string missing = (dir / "no-such-folder" / "r.json").string();
  const Run nowhere = netsolve("--network " + kNet1 + " --report " + missing);
  CHECK(nowhere.exit_code == 2);
  CHECK(contains(nowhere.output, "--report"));
  CHECK(contains(nowhere.output, "does not exist"));
  CHECK(!contains(nowhere.output, "hydraulic steps"));  // refused before the run
  const fs::path inp = dir / "comma.inp";
  {
    std::ofstream out(inp);
    out << "[OPTIONS]\nUNITS LPS\n[RESERVOIRS]\nR 100\n[JUNCTIONS]\nJ,1 10 5\nJ2 5 1\n"
           "[PIPES]\nP,1 R J,1 1000 300 120\nP2 J,1 J2 100 200 120\n";
  }
  const std::string nodes = (dir / "n.csv").string(), links = (dir / "l.csv").string();
  const Run quoted = netsolve("--network " + inp.string() + " --duration 0 --quiet --nodes " +
                              nodes + " --links " + links);
  CHECK(quoted.exit_code == 0);
  std::ifstream n(nodes), l(links);
  std::stringstream nt, lt;
  nt << n.rdbuf();
  lt << l.rdbuf();
  CHECK(contains(nt.str(), "\n0,\"J,1\","));
  CHECK(contains(lt.str(), "\n0,\"P,1\","));
  fs::remove_all(dir);
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
        "deficit_pct,leakage");
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
    REQUIRE(v.size() == 10);  // time, head, pressure, demand, cut_off, required, delivered, ...
    const double demand = v[3], required = v[5], delivered = v[6], deficit = v[7], pct = v[8];
    CHECK(v[9] == 0);  // no leakage in Net1
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

TEST_CASE("netsolve --study: the study's plan in the summary and the report, as the engine ran") {
  const fs::path dir = scratch_dir();
  const std::string net3 = cgs::net::test::repo_networks() + "/Net3.inp";
  // The report of a fire-flow study on Net3 with these options (the summary printed too).
  auto study = [&](const std::string& options, std::string* output = nullptr) {
    const fs::path report = dir / "study.json";
    const Run r = netsolve("--network " + net3 + " --study fireflow --report " + report.string() +
                           " " + options);
    REQUIRE(r.exit_code == 0);
    if (output) *output = r.output;
    std::ifstream in(report);
    return nlohmann::json::parse(in);
  };
  auto has_reason = [](const nlohmann::json& plan, const std::string& start) {
    for (const auto& why : plan["reasons"])
      if (why.get<std::string>().rfind(start, 0) == 0) return true;
    return false;
  };

  std::string output;
  const auto host = study("--threads 2 --start auto", &output);
  const auto& plan = host["plan"];
  CHECK(plan["engine"] == "host");
  CHECK(plan["device"] == "cpu");
  CHECK(plan["threads"] == 2);
  CHECK(host["threads"] == 2);
  CHECK(!host.contains("batch"));  // no batched launch ran
  CHECK(!host.contains("trials_engine"));
  CHECK(has_reason(plan, "engine: host (neither --device gpu nor --study-batch"));
  CHECK(has_reason(plan, "threads: 2 (--threads 2)"));
  // --start auto: decided by the probes after the baseline, the same in the study's own fields.
  CHECK(plan["start"] == "warm");
  CHECK(has_reason(plan, "start: warm, from the baseline's solution (8 probe scenarios"));
  CHECK(host["study"]["warm_start"] == true);
  CHECK(contains(output, "plan: host, 2 thread(s), warm start\n"));
  CHECK(contains(output, "\n  engine: host"));
  // By default EPANET's own path: the cold start, with the reason.
  const auto by_default = study("--threads 2");
  CHECK(by_default["plan"]["start"] == "cold");
  CHECK(has_reason(by_default["plan"], "start: cold, EPANET's own path (the default"));
  CHECK(by_default["cold_resolves"] == 0);

  const auto batched = study("--study-batch 16 --quiet");
  CHECK(batched["plan"]["engine"] == "batched Cholesky");
  CHECK(batched["plan"]["device"] == "cpu");
  CHECK(batched["plan"]["batch"] == 16);
  CHECK(batched["plan"]["groups"] == 2);
  CHECK(batched["plan"]["threads"] == 16);
  CHECK(has_reason(batched["plan"], "engine: batched Cholesky on the host (--study-batch with "
                                    "the direct solver)"));
  CHECK(has_reason(batched["plan"], "batch: 16 scenarios in flight in 2 groups (--study-batch 16)"));
  REQUIRE(batched.contains("batch"));  // the batched engine ran: its launches
  CHECK(batched["batch"]["batches"].get<long>() > 0);
  CHECK(batched["batch"]["scenarios_in_flight"] == 16);

  const auto cg = study("--study-batch 8 --solver cg --start cold --quiet");
  CHECK(cg["plan"]["engine"] == "batched CG");
  CHECK(cg["plan"]["start"] == "cold");
  CHECK(has_reason(cg["plan"], "start: cold, EPANET's own path (asked)"));
  CHECK(has_reason(cg["plan"], "engine: batched CG on the host (--study-batch with --solver cg)"));
  REQUIRE(cg.contains("batch"));
  CHECK(cg["batch"]["cg_iterations"].get<long>() > 0);
  CHECK(cg["plan"]["groups"] == 1);

  const auto trials = study("--batch-engine trials --quiet");
  CHECK(trials["plan"]["engine"] == "trials");
  CHECK(trials["plan"]["batch"] == 92);  // every junction in one call: as many as the engine holds
  CHECK(trials["plan"]["trial_budget"].get<int>() > 0);
  CHECK(has_reason(trials["plan"], "trial budget: "));
  REQUIRE(trials.contains("trials_engine"));  // the trials engine ran
  CHECK(trials["trials_engine"]["calls"] == 1);

  // Not steady: the trials engine declines, the batched Cholesky runs, and the plan says why.
  const auto day = study("--batch-engine trials --duration 2:00 --quiet");
  CHECK(day["plan"]["engine"] == "batched Cholesky");
  CHECK(contains(day["plan"]["trials_declined"].get<std::string>(), "steady-state studies only"));
  CHECK(!day.contains("trials_engine"));
  REQUIRE(day.contains("batch"));
  fs::remove_all(dir);
}

TEST_CASE("netsolve --quality: EPANET's quality series, the mass balance in the summary and report") {
  const fs::path dir = scratch_dir();
  const std::string csv = (dir / "q.csv").string(), json = (dir / "q.json").string();
  const Run r = netsolve("--network " + kNet1 + " --quality " + csv + " --report " + json);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.output, "water quality CHEMICAL Chlorine (mg/L): 25 reporting times"));
  CHECK(contains(r.output, "mass balance (EPANET's): initial 7.47582e+06"));
  std::ifstream in(csv);
  std::string line;
  std::getline(in, line);
  CHECK(line == "time_s,kind,id,quality");
  std::getline(in, line);
  CHECK(line == "0,node,10,0.5");  // Net1's [QUALITY]
  long rows = 1;
  while (std::getline(in, line)) ++rows;
  CHECK(rows == 25 * (11 + 13));  // every reporting time, every node and link
  const nlohmann::json report = nlohmann::json::parse(std::ifstream(json));
  CHECK(report["quality"]["mass_balance"]["initial"].get<double>() ==
        doctest::Approx(7.47582e+06).epsilon(1e-5));
  CHECK(report["quality"]["quality_step_s"] == 300);
  // Without a quality in the file, or with --no-quality, --quality is refused (exit 2).
  const Run none = netsolve("--network " + kNet1 + " --quality " + csv + " --no-quality");
  CHECK(none.exit_code == 2);
  CHECK(contains(none.output, "--quality and --no-quality together"));
  const Run study = netsolve("--network " + kNet1 + " --study closure --quality " + csv);
  CHECK(study.exit_code == 2);
  CHECK(contains(study.output, "--quality is not available with --study"));
  const Run hydraulics = netsolve("--network " + kNet1 + " --no-quality");
  CHECK(hydraulics.exit_code == 0);
  CHECK(!contains(hydraulics.output, "water quality"));
  fs::remove_all(dir);
}
