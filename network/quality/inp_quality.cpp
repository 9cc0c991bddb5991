// The .inp reader (inp_reader_impl.hpp): water quality. [OPTIONS] QUALITY, DIFFUSIVITY and
// TOLERANCE, [QUALITY], [REACTIONS], [SOURCES] and [MIXING] as EPANET 2.3.5's input3.c reads them
// (optionchoice, optionvalue, qualdata, reactdata, sourcedata, mixingdata), then its adjustdata
// and convertunits for them (finish_quality). EPANET reads a file once, top to bottom: a line
// naming a node or link defined further down does not find it; node_before and link_before keep
// that.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "network/inp_reader_impl.hpp"

namespace cgs::net::inp {

namespace {

constexpr double kLitresPerFt3 = 28.317;  // EPANET's LperFT3
constexpr double kSecondsPerDay = 86400;
constexpr double kDiffusivity = 1.3e-8;  // EPANET's DIFFUS, chlorine at 20 C (ft^2/s)

}  // namespace

void InpReader::quality_error(const Record& r, int code, const std::string& what,
                              const char* section) const {
  fail(r.line, what + " (EPANET error " + std::to_string(code) + ") in " + section);
}

int InpReader::node_before(const Record& r, std::size_t i) const {
  const int n = net_.find_node(r.tokens[i]);
  return n >= 0 && net_.nodes[n].line < r.line ? n : -1;
}

int InpReader::link_before(const Record& r, std::size_t i) const {
  const int k = net_.find_link(r.tokens[i]);
  return k >= 0 && net_.links[k].line < r.line ? k : -1;
}

template <typename Element, typename Fn>
void InpReader::for_range(const Record& r, std::size_t at, const std::vector<Element>& elements,
                          std::size_t begin, Fn&& fn) const {
  const std::string& first = r.tokens[at];
  const std::string& last = r.tokens[at + 1];
  const long i1 = std::atol(first.c_str()), i2 = std::atol(last.c_str());
  const bool numeric = i1 > 0 && i2 > 0;
  for (std::size_t j = begin; j < elements.size(); ++j) {
    const Element& e = elements[j];
    if (e.line >= r.line) continue;
    const bool in = numeric ? std::atol(e.id.c_str()) >= i1 && std::atol(e.id.c_str()) <= i2
                            : std::strcmp(first.c_str(), e.id.c_str()) <= 0 &&
                                  std::strcmp(last.c_str(), e.id.c_str()) >= 0;
    if (in) fn(static_cast<int>(j));
  }
}

// QUALITY NONE|CHEMICAL|AGE|TRACE node|name [units], TOLERANCE and DIFFUSIVITY (>= 0, else
// EPANET's error 213). False where the key is none of them.
bool InpReader::read_quality_option(const Record& r, const std::string& key) {
  const auto& t = r.tokens;
  QualityInput& q = net_.quality;
  if (starts_with_keyword(key, "QUAL")) {
    const std::string& w = t[1];
    q.units = "mg/L";
    if (starts_with_keyword(w, "NONE")) {
      q.type = QualityType::none;
    } else if (starts_with_keyword(w, "CHEM")) {
      q.type = QualityType::chemical;
    } else if (starts_with_keyword(w, "AGE")) {
      q.type = QualityType::age;
    } else if (starts_with_keyword(w, "TRACE")) {
      q.type = QualityType::trace;
    } else {
      q.type = QualityType::chemical;
      q.chemical = w;
      if (t.size() > 2) q.units = t[2];
    }
    if (q.type == QualityType::trace) {
      if (t.size() < 3) quality_error(r, 201, "syntax error: QUALITY TRACE without a node", "[OPTIONS]");
      trace_node_id_ = t[2];
      quality_option_line_ = r.line;
    }
    if (q.type == QualityType::age) q.units = "hrs";
    if (q.type == QualityType::trace) q.units = "%";
    return true;
  }
  const bool tolerance = starts_with_keyword(key, "TOLER");
  if (!tolerance && !starts_with_keyword(key, "DIFF")) return false;
  double y = 0;
  if (!parse_number(t[1], y) || !std::isfinite(y))
    quality_error(r, 202, "illegal numeric value " + t[1], "[OPTIONS]");
  if (y < 0) quality_error(r, 213, "invalid option value " + key + " " + t[1], "[OPTIONS]");
  (tolerance ? tolerance_input_ : diffusivity_input_) = y;
  return true;
}

// [QUALITY] node value, or first last value (a range). Values >= 0.
void InpReader::read_initial_quality(const Record& r) {
  const auto& t = r.tokens;
  if (t.size() < 2) return;
  std::vector<double>& c0 = net_.quality.initial;
  auto value = [&](std::size_t i) {
    double c = 0;
    if (!parse_number(t[i], c) || !std::isfinite(c))
      quality_error(r, 202, "illegal numeric value " + t[i], "[QUALITY]");
    if (c < 0) quality_error(r, 209, "illegal value " + t[i] + " (negative)", "[QUALITY]");
    return c;
  };
  if (t.size() == 2) {
    const int n = node_before(r, 0);
    if (n < 0) quality_error(r, 203, "undefined node " + t[0], "[QUALITY]");
    c0[n] = value(1);
    return;
  }
  const double c = value(2);
  for_range(r, 0, net_.nodes, 0, [&](int n) { c0[n] = c; });
}

// [REACTIONS]: ORDER BULK|WALL|TANK n, ROUGHNESS CORRELATION f, LIMITING POTENTIAL c,
// GLOBAL BULK|WALL k, BULK|WALL link [last] k, TANK node [last] k. The value is the last token.
void InpReader::read_reaction(const Record& r) {
  const auto& t = r.tokens;
  const std::size_t n = t.size();
  if (n < 3) return;  // as EPANET: too short a line is skipped
  QualityInput& q = net_.quality;
  double y = 0;
  if (!parse_number(t[n - 1], y) || !std::isfinite(y))
    quality_error(r, 202, "illegal numeric value " + t[n - 1], "[REACTIONS]");
  auto bad = [&](std::size_t i) { quality_error(r, 213, "invalid keyword " + t[i], "[REACTIONS]"); };
  auto is = [&](std::size_t i, const char* w) { return starts_with_keyword(t[i], w); };
  if (is(0, "ORDER")) {
    if (is(1, "BULK"))
      q.bulk_order = y;
    else if (is(1, "TANK"))
      q.tank_order = y;
    else if (!is(1, "WALL"))
      bad(1);
    else if (y == 0.0 || y == 1.0)
      q.wall_order = y;
    else
      quality_error(r, 213, "invalid wall reaction order " + t[n - 1] + " (0 or 1)", "[REACTIONS]");
  } else if (is(0, "ROUG")) {
    q.roughness_factor = y;
  } else if (is(0, "LIMIT")) {
    q.limiting_potential = y;
  } else if (is(0, "GLOB")) {
    if (is(1, "BULK"))
      q.global_bulk = y;
    else if (is(1, "WALL"))
      q.global_wall = y;
    else
      bad(1);
  } else if (is(0, "BULK") || is(0, "WALL") || is(0, "TANK")) {
    read_reaction_coefficient(r, is(0, "BULK") ? 1 : is(0, "WALL") ? 2 : 3, y);
  } else {
    bad(0);
  }
}

// BULK (item 1), WALL (2) or TANK (3) coefficients of one element or a range; unknown elements
// (and junctions for TANK) are passed over, as EPANET does.
void InpReader::read_reaction_coefficient(const Record& r, int item, double y) {
  if (item == 3) {
    auto set = [&](int j) {
      if (!net_.is_junction(j)) tank_bulk_[j] = y;
    };
    if (r.tokens.size() == 3) {
      if (const int j = node_before(r, 1); j >= 0) set(j);
    } else {
      for_range(r, 1, net_.nodes, net_.junction_count, set);
    }
    return;
  }
  std::vector<double>& k = item == 1 ? link_bulk_ : link_wall_;
  if (r.tokens.size() == 3) {
    if (const int j = link_before(r, 1); j >= 0) k[j] = y;
  } else {
    for_range(r, 1, net_.links, 0, [&](int j) { k[j] = y; });
  }
}

// [SOURCES] node [CONCEN|MASS|SETPOINT|FLOWPACED] strength [pattern]: an unknown node is EPANET's
// error 203, a strength that is not a number 202 (213 without a type), an unknown pattern 205. A
// later line for the same node replaces the source.
void InpReader::read_source(const Record& r) {
  const auto& t = r.tokens;
  auto error = [&](int code, const std::string& what) { quality_error(r, code, what, "[SOURCES]"); };
  if (t.size() < 2) error(201, "syntax error");
  const int node = node_before(r, 0);
  if (node < 0) error(203, "undefined node " + t[0]);
  QualitySource s;
  std::size_t i = 2;
  if (starts_with_keyword(t[1], "CONCEN"))
    s.type = SourceType::concen;
  else if (starts_with_keyword(t[1], "MASS"))
    s.type = SourceType::mass;
  else if (starts_with_keyword(t[1], "SETPOINT"))
    s.type = SourceType::setpoint;
  else if (starts_with_keyword(t[1], "FLOWPACED"))
    s.type = SourceType::flowpaced;
  else
    i = 1;
  if (i >= t.size() || !parse_number(t[i], s.strength) || !std::isfinite(s.strength))
    error(i == 1 ? 213 : 202, "invalid value " + (i < t.size() ? t[i] : std::string("(none)")));
  if (i + 1 < t.size() && !t[i + 1].empty() && t[i + 1] != "*") {
    pattern_or(r, i + 1, 205, "[SOURCES]");
    s.pattern = pattern_ref(r, i + 1);
  }
  QualityInput& q = net_.quality;
  if (q.source[node] < 0) {
    q.source[node] = static_cast<int>(q.sources.size());
    q.sources.push_back(s);
  } else {
    q.sources[q.source[node]] = s;
  }
}

// [MIXING] tank MIXED|2COMP [fraction]|FIFO|LIFO: junctions and reservoirs are passed over; a
// 2COMP fraction of 0 (or none) is 1, as EPANET's.
void InpReader::read_mixing(const Record& r) {
  const auto& t = r.tokens;
  if (t.size() < 2) return;
  const int j = node_before(r, 0);
  if (j < 0) quality_error(r, 203, "undefined node " + t[0], "[MIXING]");
  if (net_.is_junction(j)) return;
  static const std::pair<const char*, MixModel> models[] = {{"MIXED", MixModel::mixed},
                                                            {"2COMP", MixModel::two_compartment},
                                                            {"FIFO", MixModel::fifo},
                                                            {"LIFO", MixModel::lifo}};
  const MixModel* model = nullptr;
  for (const auto& [word, m] : models)
    if (!model && starts_with_keyword(t[1], word)) model = &m;
  if (!model) quality_error(r, 213, "invalid mixing model " + t[1], "[MIXING]");
  double v = 1.0;
  if (*model == MixModel::two_compartment && t.size() == 3 &&
      (!parse_number(t[2], v) || !std::isfinite(v)))
    quality_error(r, 202, "illegal numeric value " + t[2], "[MIXING]");
  if (v == 0.0) v = 1.0;
  if (net_.nodes[j].type != NodeType::tank) return;
  net_.quality.mixing[j] = *model;
  net_.quality.mixing_fraction[j] = v;
}

// Sizes the per-node and per-link values once the nodes and links are read.
void InpReader::prepare_quality() {
  QualityInput& q = net_.quality;
  const std::size_t nodes = net_.nodes.size(), links = net_.links.size();
  q.initial.assign(nodes, 0.0);
  q.source.assign(nodes, -1);
  q.tank_bulk.assign(nodes, 0.0);
  q.mixing.assign(nodes, MixModel::mixed);
  q.mixing_fraction.assign(nodes, 1.0);
  q.bulk.assign(links, 0.0);
  q.wall.assign(links, 0.0);
  link_bulk_.assign(links, kMissing);
  link_wall_.assign(links, kMissing);
  tank_bulk_.assign(nodes, kMissing);
  if (q.type != QualityType::trace) return;
  // EPANET looks the trace node up where it reads the option.
  const int n = net_.find_node(trace_node_id_);
  if (n < 0 || net_.nodes[n].line > quality_option_line_)
    fail(quality_option_line_,
         "undefined trace node " + trace_node_id_ + " (EPANET error 212) in [OPTIONS]");
  q.trace_node = n;
}

// EPANET's adjustdata and convertunits for water quality: the quality step (a tenth of the
// hydraulic step unless given, never more than it), the tolerance's and the diffusivity's
// defaults, each pipe's and tank's coefficients (the global ones where none was given, the wall
// one from the roughness correlation where it is set), then internal units. Before the links'
// roughness and diameters are converted: the correlation reads them in the file's units.
void InpReader::finish_quality() {
  QualityInput& q = net_.quality;
  const long hydraulic_step = net_.times.hydraulic_step;
  q.step = quality_step_ == 0 ? hydraulic_step / 10 : quality_step_;
  q.step = std::min(q.step, hydraulic_step);
  if (q.enabled() && q.step <= 0)  // EPANET would loop for ever on a zero step
    fail(0, "the quality time step is 0 s (a tenth of a hydraulic step under 10 s): give [TIMES] "
            "QUALITY TIMESTEP");
  q.tolerance = tolerance_input_ == kMissing ? 0.01 : tolerance_input_;
  const double si = net_.units.si() ? 0.3048 * 0.3048 : 1.0;
  if (diffusivity_input_ == kMissing)
    q.diffusivity = kDiffusivity;
  else if (diffusivity_input_ > 1e-4)
    q.diffusivity = diffusivity_input_ * kDiffusivity;  // a multiplier
  else
    q.diffusivity = diffusivity_input_ / si;
  const HeadlossFormula formula = net_.options.formula;
  for (std::size_t k = 0; k < net_.links.size(); ++k) {
    const Link& link = net_.links[k];
    if (link.type > LinkType::pipe) continue;
    double kb = link_bulk_[k], kw = link_wall_[k];
    if (kb == kMissing) kb = q.global_bulk;
    if (kw == kMissing) {
      const double c = link.roughness, d = link.diameter;
      if (q.roughness_factor == 0.0)
        kw = q.global_wall;
      else if (c > 0.0 && d > 0.0)
        kw = formula == HeadlossFormula::hazen_williams   ? q.roughness_factor / c
             : formula == HeadlossFormula::darcy_weisbach ? q.roughness_factor / std::abs(std::log(c / d))
                                                          : q.roughness_factor * c;
      else
        kw = 0.0;
    }
    q.bulk[k] = kb / kSecondsPerDay;
    q.wall[k] = kw / kSecondsPerDay;
  }
  for (std::size_t n = net_.junction_count; n < net_.nodes.size(); ++n)
    q.tank_bulk[n] = (tank_bulk_[n] == kMissing ? q.global_bulk : tank_bulk_[n]) / kSecondsPerDay;
  q.to_user = q.type == QualityType::chemical ? 1.0 / kLitresPerFt3 : 1.0;
  for (double& c : q.initial) c /= q.to_user;
  q.limiting_potential /= q.to_user;
  q.tolerance /= q.to_user;
  q.global_bulk /= kSecondsPerDay;
  q.global_wall /= kSecondsPerDay;
}

}  // namespace cgs::net::inp
