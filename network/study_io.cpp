// Scenario studies (study.hpp): what a study is (--study, --elements, the demand draws) and the
// CSV of its rows.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <cstdlib>
#include <string>

#include "base/atomic_file.hpp"
#include "formats/types.hpp"
#include "network/study.hpp"

#include "network/results_io.hpp"

namespace cgs::net {
namespace {

bool is_plain_pipe(LinkType type) { return type == LinkType::pipe; }

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

double parse_number(const std::string& text, const std::string& what) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty() || !std::isfinite(value))
    throw InputError("--study", 0, what + " '" + text + "' is not a number");
  return value;
}

std::string format_number(double v) {
  if (std::isnan(v)) return "";
  char text[32];
  std::snprintf(text, sizeof text, "%.10g", v);
  return text;
}

}  // namespace

std::string to_string(StudyKind kind) {
  switch (kind) {
    case StudyKind::fireflow: return "fireflow";
    case StudyKind::closure: return "closure";
    case StudyKind::demand: return "demand";
  }
  return "?";
}

StudySpec parse_study(const std::string& text) {
  StudySpec spec;
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ':');) parts.push_back(part);
  if (parts.empty()) parts.push_back("");
  if (parts[0] == "fireflow" || parts[0] == "closure") {
    if (parts.size() > 1)
      throw InputError("--study", 0, "'" + parts[0] + "' takes no arguments (got '" + text + "')");
    spec.kind = parts[0] == "fireflow" ? StudyKind::fireflow : StudyKind::closure;
    return spec;
  }
  if (parts[0] != "demand")
    throw InputError("--study", 0,
                     "unknown study '" + text + "' (fireflow, closure or demand:N[:cv[:seed]])");
  if (parts.size() < 2 || parts.size() > 4)
    throw InputError("--study", 0, "'" + text + "': demand:N[:cv[:seed]] expected");
  spec.kind = StudyKind::demand;
  const double draws = parse_number(parts[1], "the number of draws");
  if (draws < 1 || draws != std::floor(draws) || draws > 1e8)
    throw InputError("--study", 0,
                     "the number of draws must be a whole number >= 1, not '" + parts[1] + "'");
  spec.draws = static_cast<int>(draws);
  if (parts.size() > 2) spec.cv = parse_number(parts[2], "the coefficient of variation");
  if (spec.cv < 0 || spec.cv > 10)
    throw InputError("--study", 0,
                     "the coefficient of variation must be in [0, 10], not '" + parts[2] + "'");
  if (parts.size() > 3) {
    const double seed = parse_number(parts[3], "the seed");
    if (seed < 0 || seed != std::floor(seed) || seed > 9.0e15)
      throw InputError("--study", 0,
                       "the seed must be a whole number >= 0, not '" + parts[3] + "'");
    spec.seed = static_cast<std::uint64_t>(seed);
  }
  return spec;
}

std::vector<int> read_study_elements(const std::string& path, const Network& net, StudyKind kind) {
  if (kind == StudyKind::demand)
    throw InputError(path, 0, "--elements applies to fireflow and closure studies only");
  std::ifstream in(path);
  if (!in) throw InputError(path, 0, "cannot open the --elements file");
  std::vector<int> out;
  long line_number = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_number;
    const std::string id = trim(line.substr(0, line.find(';')));
    if (id.empty()) continue;
    if (kind == StudyKind::fireflow) {
      const int node = net.find_node(id);
      if (node < 0)
        throw InputError(path, line_number, "'" + id + "' is not a node of " + net.source);
      if (!net.is_junction(node))
        throw InputError(path, line_number,
                         "'" + id + "' is a " + to_string(net.nodes[node].type) +
                             ", not a junction: fire flow is studied at junctions");
      out.push_back(node);
    } else {
      const int link = net.find_link(id);
      if (link < 0)
        throw InputError(path, line_number, "'" + id + "' is not a link of " + net.source);
      if (!is_plain_pipe(net.links[link].type))
        throw InputError(path, line_number,
                         "'" + id + "' is a " + to_string(net.links[link].type) +
                             ", not a pipe: closure is studied on pipes");
      out.push_back(link);
    }
  }
  if (out.empty()) throw InputError(path, line_number, "no element IDs in the --elements file");
  return out;
}

std::vector<double> demand_multipliers(std::uint64_t seed, int index, int junctions, double cv) {
  std::seed_seq seeds{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                      static_cast<std::uint32_t>(index)};
  std::mt19937_64 generator(seeds);
  // Uniform in (0, 1] from the top 53 bits: the same numbers with any standard library (the
  // std::*_distribution classes are not specified bit for bit).
  auto uniform = [&] { return (static_cast<double>(generator() >> 11) + 1.0) * 0x1.0p-53; };
  const double sigma = std::sqrt(std::log1p(cv * cv)), mu = -0.5 * sigma * sigma;
  constexpr double kTwoPi = 6.283185307179586;
  std::vector<double> out(static_cast<std::size_t>(std::max(0, junctions)));
  for (std::size_t i = 0; i < out.size(); i += 2) {
    const double radius = std::sqrt(-2.0 * std::log(uniform())), angle = kTwoPi * uniform();
    out[i] = std::exp(mu + sigma * radius * std::cos(angle));
    if (i + 1 < out.size()) out[i + 1] = std::exp(mu + sigma * radius * std::sin(angle));
  }
  return out;
}

int StudyResults::failed() const {
  return static_cast<int>(
      std::count_if(scenarios.begin(), scenarios.end(), [](const auto& r) { return !r.ok; }));
}
std::string study_element_name(const Network& net, StudyKind kind, const ScenarioResult& r) {
  if (r.scenario == 0) return "baseline";
  if (kind == StudyKind::demand) return "draw" + std::to_string(r.scenario);
  return kind == StudyKind::fireflow ? net.nodes[r.element].id : net.links[r.element].id;
}

void write_study_csv(const std::string& path, const Network& net, const StudyResults& results,
                     const StudyOptions& options) {
  std::string text =
      "scenario,element,ok,iterations,min_pressure,min_node,element_pressure,below_threshold,"
      "cut_off,min_cut_off,deficit_pct,available_flow,reason\n";
  auto row = [&](const ScenarioResult& r) {
    text += std::to_string(r.scenario) + "," +
            csv_field(study_element_name(net, options.spec.kind, r)) + "," + (r.ok ? "1" : "0") +
            "," + std::to_string(r.trials) + "," + format_number(r.min_pressure) + "," +
            (r.min_node >= 0 ? csv_field(net.nodes[r.min_node].id) : "") + "," +
            format_number(r.element_pressure) + "," + std::to_string(r.below_threshold) + "," +
            std::to_string(r.cut_off) + "," + (r.min_cut_off ? "1" : "0") + "," +
            format_number(r.demand_deficit) + "," + format_number(r.available_flow) + "," +
            csv_field(r.reason) + "\n";
  };
  row(results.baseline);
  for (const ScenarioResult& r : results.scenarios) row(r);
  write_file_atomically(path, text);
}

namespace {

// One row a line: the numbers tab-separated (doubles as %a, exact), the reason last after its
// length, so that it may hold any character.
void put_row(std::string& text, const ScenarioResult& r) {
  char line[512];
  std::snprintf(line, sizeof line, "%d\t%d\t%d\t%d\t%d\t%a\t%d\t%a\t%d\t%d\t%d\t%a\t%a\t%d\t%zu\t",
                r.scenario, r.element, r.ok ? 1 : 0, r.trials, r.periods, r.min_pressure,
                r.min_node, r.element_pressure, r.below_threshold, r.cut_off, r.min_cut_off ? 1 : 0,
                r.demand_deficit, r.available_flow, r.available_flow_runs, r.reason.size());
  text += line + r.reason + "\n";
}

ScenarioResult get_row(std::istream& in) {
  ScenarioResult r;
  int ok = 0, min_cut_off = 0;
  std::size_t reason = 0;
  std::string d[4];
  in >> r.scenario >> r.element >> ok >> r.trials >> r.periods >> d[0] >> r.min_node >> d[1] >>
      r.below_threshold >> r.cut_off >> min_cut_off >> d[2] >> d[3] >> r.available_flow_runs >>
      reason;
  if (!in || in.get() != '\t') throw std::runtime_error("a study shard's row does not parse");
  r.ok = ok != 0, r.min_cut_off = min_cut_off != 0;
  double* values[] = {&r.min_pressure, &r.element_pressure, &r.demand_deficit, &r.available_flow};
  for (int k = 0; k < 4; ++k) *values[k] = std::strtod(d[k].c_str(), nullptr);
  r.reason.resize(reason);
  in.read(r.reason.data(), static_cast<std::streamsize>(reason));
  if (!in || in.get() != '\n') throw std::runtime_error("a study shard's row does not parse");
  return r;
}

}  // namespace

std::string scenario_row_text(const ScenarioResult& r) {
  std::string text;
  put_row(text, r);
  return text;
}

std::vector<ScenarioResult> read_scenario_rows(const std::string& text, std::size_t* bytes_read) {
  std::vector<ScenarioResult> rows;
  std::istringstream in(text);
  std::size_t good = 0;
  while (in.peek() != std::char_traits<char>::eof()) {
    try {
      rows.push_back(get_row(in));
    } catch (const std::runtime_error&) {
      break;  // a row cut short: what follows it is not trusted either
    }
    good = static_cast<std::size_t>(in.tellg());
  }
  if (bytes_read) *bytes_read = good;
  return rows;
}

std::string shard_text(const StudyResults& r) {
  std::string text = std::to_string(r.scenarios.size()) + " " + std::to_string(r.trial_calls) +
                     " " + std::to_string(r.host_scenarios) + " " +
                     std::to_string(r.trial_corrections) + " " +
                     std::to_string(r.trial_cg_iterations) + " " +
                     std::to_string(r.batch.launches) + " " + std::to_string(r.batch.systems) +
                     " " + std::to_string(r.batch.iterations) + " " +
                     std::to_string(r.batch.critical_iterations) + " " +
                     std::to_string(r.cold_resolves) + "\n";
  for (const ScenarioResult& s : r.scenarios) put_row(text, s);
  return text;
}

void merge_shards(StudyResults& r, const std::vector<std::string>& texts) {
  std::vector<ScenarioResult> rows;
  StudyResults sum;
  for (const std::string& text : texts) {
    std::istringstream in(text);
    std::size_t count = 0;
    StudyResults c;
    in >> count >> c.trial_calls >> c.host_scenarios >> c.trial_corrections >>
        c.trial_cg_iterations >> c.batch.launches >> c.batch.systems >> c.batch.iterations >>
        c.batch.critical_iterations >> c.cold_resolves;
    if (!in || in.get() != '\n') throw std::runtime_error("a study shard's counts do not parse");
    for (std::size_t i = 0; i < count; ++i) rows.push_back(get_row(in));
    sum.trial_calls += c.trial_calls, sum.host_scenarios += c.host_scenarios;
    sum.trial_corrections += c.trial_corrections, sum.trial_cg_iterations += c.trial_cg_iterations;
    sum.batch.launches += c.batch.launches, sum.batch.systems += c.batch.systems;
    sum.batch.iterations += c.batch.iterations;
    sum.batch.critical_iterations += c.batch.critical_iterations;
    sum.cold_resolves += c.cold_resolves;
  }
  std::sort(rows.begin(), rows.end(),
            [](const ScenarioResult& a, const ScenarioResult& b) { return a.scenario < b.scenario; });
  r.scenarios = std::move(rows);
  r.trial_calls = sum.trial_calls, r.host_scenarios = sum.host_scenarios;
  r.trial_corrections = sum.trial_corrections, r.trial_cg_iterations = sum.trial_cg_iterations;
  r.batch = sum.batch;
  r.cold_resolves = sum.cold_resolves;
  r.shards = static_cast<int>(texts.size());
}

}  // namespace cgs::net
