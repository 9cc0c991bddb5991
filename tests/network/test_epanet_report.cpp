// The report file (.rpt) against EPANET 2.3.5's own, line by line, and [REPORT] as EPANET reads
// it. The references (data/networks/epanet-report/, README there) were written by runepanet
// (`../shared/tools/epanet/runepanet NET.inp NET.rpt NET.out`) on variants of the shared networks
// made for these tests; the lines carrying the date and the input file's name are left out.
#include <doctest/doctest.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "formats/types.hpp"
#include "network/epanet_report.hpp"
#include "network/inp_reader.hpp"
#include "network/linear_solver.hpp"
#include "network/quality/quality_run.hpp"
#include "network/simulation.hpp"
#include "network_test_data.hpp"
#include "run_command.hpp"

namespace cgs::net {
namespace {

namespace fs = std::filesystem;

std::string fixtures() { return test::repo_networks() + "/epanet-report/"; }

std::string read_gz(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  REQUIRE_MESSAGE(f != nullptr, "cannot open " << path);
  std::string text;
  char buffer[1 << 15];
  int n = 0;
  while ((n = gzread(f, buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<size_t>(n));
  gzclose(f);
  return text;
}

// The lines that compare: not the page-1 header, "Analysis begun/ended" (dates) nor the input
// file's name.
std::vector<std::string> comparable(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("  Page 1 ", 0) == 0 || line.rfind("  Analysis begun ", 0) == 0 ||
        line.rfind("  Analysis ended ", 0) == 0 || line.rfind("      Input Data File ", 0) == 0)
      continue;
    lines.push_back(line);
  }
  return lines;
}

std::string netsolve_report(const std::string& inp_text, const std::string& name) {
  std::istringstream in(inp_text);
  const Network net = parse_inp(in, name);
  const std::unique_ptr<LinearSolver> solver = make_direct_solver();
  EpanetReport report(net, name);
  SimulationOptions sim;
  // The file's water quality, as netsolve runs it: the report attached last, reading the engine.
  std::unique_ptr<QualityRun> quality;
  if (net.quality.enabled()) {
    quality = std::make_unique<QualityRun>(net);
    quality->attach(sim);
  }
  report.attach(sim, quality ? &quality->engine() : nullptr);
  const SimulationResults run = simulate(net, *solver, sim);
  return report.text(run, nullptr);
}

// EPANET's report (a) and netsolve's (b), line by line; the first differences shown.
void check_same(const std::string& name, const std::vector<std::string>& a,
                const std::vector<std::string>& b) {
  CHECK(a.size() > 20);
  CHECK(a.size() == b.size());
  int shown = 0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()) && shown < 5; ++i) {
    if (a[i] == b[i]) continue;
    ++shown;
    INFO(name << ", line " << i + 1);
    CHECK(b[i] == a[i]);
  }
}

void check_case(const std::string& name) {
  const std::string mine = netsolve_report(read_gz(fixtures() + name + ".inp.gz"), name + ".inp");
  check_same(name, comparable(read_gz(fixtures() + name + ".rpt.gz")), comparable(mine));
}

Network parse(const std::string& report_lines) {
  std::istringstream in(
      "[TITLE]\nt\n[JUNCTIONS]\nJ 1\n[RESERVOIRS]\nR 10\n[PIPES]\nP R J 10 10 100\n"
      "[REPORT]\n" +
      report_lines + "[END]\n");
  return parse_inp(in, "net.inp");
}

TEST_CASE("the .rpt equals runepanet's line by line for [REPORT] settings of each kind") {
  // net1_status_all: STATUS YES, NODES ALL, LINKS ALL, the default fields, the summary.
  // net1_fields: SUMMARY NO, NODES and LINKS lists over several lines, every field, PRECISION,
  //   BELOW and ABOVE, a field off. net1_pages: PAGESIZE 40, MESSAGES NO, limits.
  // net2_status, net3_status: controls, pumps, a PAGE of 55, settings above a limit.
  // hanoi_steady: a steady state in SI units ("Node Results:"). hanoi_pda: PDA's reduced
  // demands and the flow balance's deficit. warnings: three title lines (one cut at 70
  // characters), kPa, rules, timer controls, PRV and FCV states, a pump that cannot deliver head
  // or exceeds its flow, negative pressures, a disconnected junction, REPORT START and STEP.
  // net1_full, warnings_full: STATUS FULL (each trial, the valves' and links' switches, the
  // largest flow change and head loss error). warnings_average, warnings_range: [TIMES]
  // STATISTIC AVERAGE and RANGE (one table of the reporting times' statistic).
  // warnings_halt, warnings_continue: TRIALS 3 with UNBALANCED STOP (the run halts at 0:00) and
  // CONTINUE 2 ("Unbalanced after 6 trials", the warnings, the run going on). pcv_status: EPANET
  // 2.3's PCV valves named in the status lines and the link tables ("PCV", once missing).
  for (const char* name :
       {"net1_status_all", "net1_fields", "net1_pages", "net2_status", "net3_status",
        "hanoi_steady", "hanoi_pda", "warnings", "net1_full", "warnings_full", "warnings_average",
        "warnings_range", "warnings_halt", "warnings_continue", "pcv_status"}) {
    CAPTURE(name);
    check_case(name);
  }
}

TEST_CASE("the .rpt's water quality equals runepanet's line by line") {
  // net1_quality: Net1's chlorine (bulk, wall and tank reactions), SUMMARY YES, NODES ALL, LINKS
  // ALL, Quality and Reaction YES: the summary's quality lines, the node tables' "Chlorine mg/L"
  // column, the links' quality and reaction rate (mg/L/day), the mass balance. net1_age,
  // net1_trace: AGE ("AGE hrs", the balance in hrs) and TRACE 9 ("% from 9").
  // net2_quality: Net2's fluoride source over 55 h, a few nodes and links. net1_source: SETPOINT
  // and MASS sources and REPORT START 2:30 (not on a hydraulic step: each table holds the first
  // period at or after its reporting time, under that time's clock, as runepanet's).
  for (const char* name :
       {"net1_quality", "net1_age", "net1_trace", "net2_quality", "net1_source"}) {
    CAPTURE(name);
    check_case(name);
    // What the comparison relies on is in runepanet's report: a quality column that changes and
    // the mass balance (a report without quality would fail on both).
    const std::string ref = read_gz(fixtures() + name + ".rpt.gz");
    CHECK(ref.find("Water Quality Mass Balance") != std::string::npos);
    CHECK(ref.find("Quality Analysis .................. None") == std::string::npos);
  }
  CHECK(read_gz(fixtures() + "net1_quality.rpt.gz").find("  Chlorine\n") != std::string::npos);
  CHECK(read_gz(fixtures() + "net1_trace.rpt.gz").find("    % from\n") != std::string::npos);
  CHECK(read_gz(fixtures() + "net1_age.rpt.gz").find("       AGE\n") != std::string::npos);
  CHECK(read_gz(fixtures() + "net1_source.rpt.gz").find("Node Results at 2:30:00 hrs:") !=
        std::string::npos);
}

TEST_CASE("[REPORT] as EPANET reads it: defaults, keywords by prefix, the last word decides") {
  const Network d = parse("");
  CHECK(d.report.status == ReportOptions::Status::no);
  CHECK(d.report.summary);
  CHECK(d.report.nodes == ReportOptions::Selection::none);
  CHECK(d.report.field(ReportField::pressure).enabled);
  CHECK_FALSE(d.report.field(ReportField::elevation).enabled);
  CHECK(d.report.field(ReportField::friction).precision == 3);
  CHECK(d.title_lines == std::vector<std::string>{"t"});

  const Network n = parse(
      "PAGESIZE 55.7\nSTATUS FULL\nSUMMARY NO\nMESSAGES NO\nENERGY YES\nNODES J\nLINKS ALL\n"
      "Elevation YES\nHeadloss NO\nHEAD PRECISION 3.5\nPressure BELOW 20\nFlow ABOVE -1\n"
      "State YES\nFILE other.rpt\nSTATUS maybe\n");
  CHECK(n.report.page_size == 55);
  CHECK(n.report.status == ReportOptions::Status::full);  // "maybe" changes nothing
  CHECK_FALSE(n.report.summary);
  CHECK_FALSE(n.report.messages);
  CHECK(n.report.energy);
  CHECK(n.report.nodes == ReportOptions::Selection::some);
  CHECK(n.report.node_listed[n.find_node("J")]);
  CHECK(n.report.links == ReportOptions::Selection::all);
  CHECK(n.report.field(ReportField::elevation).enabled);
  CHECK_FALSE(n.report.field(ReportField::headloss).enabled);
  CHECK(n.report.field(ReportField::head).precision == 4);
  CHECK(n.report.field(ReportField::pressure).below == 20);
  CHECK(n.report.field(ReportField::flow).above == -1);
  CHECK(n.report.field(ReportField::status).enabled);
  CHECK(n.report.file == "other.rpt");
}

// Each refused line and runepanet's message for it (bad.inp in data/networks/epanet-report/
// README.md): "Error 203: undefined node X in [REPORT] section:" and so on.
TEST_CASE("bad [REPORT] lines get EPANET's errors with the file and line") {
  struct Bad {
    const char* line;
    const char* message;
  };
  for (const Bad& bad : std::vector<Bad>{
           {"NODES J X\n", "net.inp:10: undefined node X in [REPORT] section (EPANET error 203)"},
           {"LINKS Q\n", "net.inp:10: undefined link Q in [REPORT] section (EPANET error 204)"},
           {"PAGE 300\n", "invalid option value 300 in [REPORT] section (EPANET error 213)"},
           {"PAGE x\n", "illegal numeric value x in [REPORT] section (EPANET error 202)"},
           {"HEAD BELOW\n", "syntax error in [REPORT] section (EPANET error 201)"},
           {"HEAD FOO 3\n", "invalid option value FOO in [REPORT] section (EPANET error 213)"},
           {"HEAD BELOW x\n", "illegal numeric value x in [REPORT] section (EPANET error 202)"},
           {"FOO yes\n", "syntax error in [REPORT] section (EPANET error 201)"},
           {"STATUS\n", "syntax error in [REPORT] section (EPANET error 201)"},
           {"ELEV yes\n", "syntax error in [REPORT] section (EPANET error 201)"}}) {
    CAPTURE(bad.line);
    CHECK_THROWS_WITH_AS(parse(bad.line), doctest::Contains(bad.message), InputError);
  }
  std::istringstream times("[JUNCTIONS]\nJ 1\n[RESERVOIRS]\nR 10\n[PIPES]\nP R J 10 10 100\n"
                           "[TIMES]\nSTATISTIC MEDIAN\n");
  CHECK_THROWS_WITH_AS(
      parse_inp(times, "net.inp"),
      doctest::Contains("net.inp:8: invalid option value (EPANET error 213): STATISTIC MEDIAN"),
      InputError);
  // runepanet: "Error 213: invalid option value -1 in [OPTIONS] section", "Error 202: illegal
  // numeric value x in [OPTIONS] section".
  struct Diffusivity {
    const char* value;
    const char* message;
  };
  for (const Diffusivity& d : std::vector<Diffusivity>{
           {"-1", "net.inp:8: invalid option value DIFFUSIVITY -1 (EPANET error 213) in [OPTIONS]"},
           {"x", "net.inp:8: illegal numeric value x (EPANET error 202) in [OPTIONS]"}}) {
    std::istringstream options(std::string("[JUNCTIONS]\nJ 1\n[RESERVOIRS]\nR 10\n[PIPES]\n"
                                           "P R J 10 10 100\n[OPTIONS]\nDIFFUSIVITY ") +
                               d.value + "\n");
    CHECK_THROWS_WITH_AS(parse_inp(options, "net.inp"), doctest::Contains(d.message), InputError);
  }
  // EPANET reads the file in one pass: a node defined below the [REPORT] line is undefined there.
  std::istringstream in("[REPORT]\nNODES J\n[JUNCTIONS]\nJ 1\n[RESERVOIRS]\nR 10\n"
                        "[PIPES]\nP R J 10 10 100\n");
  CHECK_THROWS_WITH_AS(parse_inp(in, "net.inp"),
                       doctest::Contains("net.inp:2: undefined node J in [REPORT] section"),
                       InputError);
}

TEST_CASE("netsolve NET.inp NET.rpt: runepanet's form, checked before the run, never over an input") {
  using cgs::testing::run_command;
  const fs::path dir = fs::temp_directory_path() / ("rpt-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string netsolve = CGSOLVE_BINARY_DIR "/app/netsolve";
  const std::string inp = (dir / "net1.inp").string(), rpt = (dir / "net1.rpt").string();
  {
    std::ofstream(inp) << read_gz(fixtures() + "net1_status_all.inp.gz");
  }
  auto run = [&](const std::string& args) { return run_command(netsolve + " " + args + ""); };
  auto r = run(inp + " " + rpt + " --quiet");
  CHECK(r.exit_code == 0);
  check_same("net1_status_all", comparable(read_gz(fixtures() + "net1_status_all.rpt.gz")),
             comparable(read_gz(rpt)));
  r = run("--network " + inp + " --rpt " + rpt + " --quiet");
  CHECK(r.exit_code == 0);
  // The third argument is --out's binary output file.
  r = run(inp + " " + rpt + " " + (dir / "net1.out").string() + " --quiet");
  CHECK(r.exit_code == 0);
  CHECK(fs::file_size(dir / "net1.out") > 0);
  r = run(inp + " " + rpt + " " + (dir / "net1.out").string() + " --out " +
          (dir / "other.out").string());
  CHECK(r.exit_code == 2);
  r = run(inp + " " + inp);  // the report over the input
  CHECK(r.exit_code == 2);
  r = run(inp);
  CHECK(r.exit_code == 2);
  r = run("--network " + inp + " --rpt " + (dir / "no-such-dir" / "x.rpt").string());
  CHECK(r.exit_code == 2);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace cgs::net
