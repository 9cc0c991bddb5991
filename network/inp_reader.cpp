// The .inp reader (inp_reader.hpp): the records of every section, then the network put together
// from them in EPANET's order and converted to its internal units (the other sections' readers:
// inp_reader_impl.hpp).
#include "network/inp_reader.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <optional>
#include <string_view>

#include "network/epanet_time.hpp"
#include "network/inp_reader_impl.hpp"

namespace cgs::net::inp {
namespace {

// EPANET 2.3.5's section keywords (enumstxt.h SectTxt), matched as its findmatch matches them:
// the header starts with the whole bracketed keyword, case-insensitively ("[junctions]" and
// "[JUNCTIONS]x" are [JUNCTIONS]; "[JUNC]" and "[PIPE]" are nothing, EPANET's error 299).
std::optional<Section> section_from_header(const std::string& header) {
  static const std::pair<const char*, Section> known[] = {
      {"[TITLE]", Section::title},           {"[JUNCTIONS]", Section::junctions},
      {"[RESERVOIRS]", Section::reservoirs}, {"[TANKS]", Section::tanks},
      {"[PIPES]", Section::pipes},           {"[PUMPS]", Section::pumps},
      {"[VALVES]", Section::valves},         {"[CONTROLS]", Section::controls},
      {"[RULES]", Section::rules},           {"[DEMANDS]", Section::demands},
      {"[SOURCES]", Section::sources},       {"[EMITTERS]", Section::emitters},
      {"[PATTERNS]", Section::patterns},     {"[CURVES]", Section::curves},
      {"[QUALITY]", Section::quality},       {"[STATUS]", Section::status},
      {"[ROUGHNESS]", Section::skipped},     {"[ENERGY]", Section::energy},
      {"[REACTIONS]", Section::reactions},   {"[MIXING]", Section::mixing},
      {"[REPORT]", Section::report},         {"[TIMES]", Section::times},
      {"[OPTIONS]", Section::options},       {"[COORDINATES]", Section::skipped},
      {"[VERTICES]", Section::skipped},      {"[LABELS]", Section::skipped},
      {"[BACKDROP]", Section::skipped},      {"[TAGS]", Section::skipped},
      {"[LEAKAGE]", Section::leakage},       {"[END]", Section::end}};
  for (const auto& [keyword, section] : known) {
    if (starts_with_keyword(header, keyword)) return section;
  }
  return std::nullopt;
}

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

void tokenize_quoted(std::string_view line, std::vector<std::string>& tokens);

// Appends the tokens of one line to `tokens`: whitespace separated, "double quotes" keep spaces,
// ';' starts a comment. NUL bytes (some files are padded with them) count as blanks. Tokens are
// cut whole from the line (built a character at a time, reading took 40 instructions a byte);
// a line with a quote before its comment takes the general path.
void tokenize(std::string_view line, std::vector<std::string>& tokens) {
  const std::size_t end = std::min(line.find(';'), line.size());
  const std::string_view text = line.substr(0, end);
  if (text.find('"') != std::string_view::npos) return tokenize_quoted(line, tokens);
  auto blank = [](char c) { return is_blank(c) || c == '\0'; };
  for (std::size_t i = 0; i < text.size();) {
    while (i < text.size() && blank(text[i])) ++i;
    const std::size_t first = i;
    while (i < text.size() && !blank(text[i])) ++i;
    if (i > first) tokens.emplace_back(text.substr(first, i - first));
  }
}

void tokenize_quoted(std::string_view line, std::vector<std::string>& tokens) {
  std::string current;
  bool quoted = false, in_token = false;
  for (char c : line) {
    if (c == '\0') c = ' ';
    if (quoted) {
      if (c == '"')
        quoted = false;
      else
        current += c;
      continue;
    }
    if (c == ';') break;
    if (c == '"') {
      quoted = in_token = true;
    } else if (is_blank(c)) {
      if (in_token) tokens.push_back(std::move(current));
      current.clear();
      in_token = false;
    } else {
      current += c;
      in_token = true;
    }
  }
  if (in_token) tokens.push_back(std::move(current));
}

// A line whose first non-blank character is '[' (a section header).
bool starts_section(std::string_view line) {
  for (char c : line) {
    if (c == '[') return true;
    if (!is_blank(c) && c != '\0') return false;
  }
  return false;
}

std::string read_whole(std::istream& in) {
  std::string text;
  // One allocation of the file's size where the stream can tell it (files can).
  const auto start = in.tellg();
  if (start != std::streampos(-1) && in.seekg(0, std::ios::end)) {
    const auto end = in.tellg();
    if (end != std::streampos(-1) && end > start)
      text.reserve(static_cast<std::size_t>(end - start));
    in.seekg(start);
  }
  in.clear();
  char buffer[1 << 16];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0)
    text.append(buffer, static_cast<std::size_t>(in.gcount()));
  return text;
}

}  // namespace

Network InpReader::read(std::istream& in) {
  split_into_records(in);
  reserve_indexes();
  for_section(Section::options, [&](const Record& r) { read_option(r); });
  for_section(Section::times, [&](const Record& r) { read_time(r); });
  for_section(Section::patterns, [&](const Record& r) { read_pattern(r); });
  for_section(Section::curves, [&](const Record& r) { read_curve(r); });
  for_section(Section::junctions, [&](const Record& r) { read_junction(r); });
  net_.junction_count = static_cast<int>(net_.nodes.size());
  for_records([](Section s) { return s == Section::reservoirs || s == Section::tanks; },
              [&](const Record& r) { read_fixed_head_node(r); });
  for_records(
      [](Section s) { return s == Section::pipes || s == Section::pumps || s == Section::valves; },
      [&](const Record& r) { read_link(r); });
  for_section(Section::demands, [&](const Record& r) { read_demand(r); });
  for_section(Section::emitters, [&](const Record& r) { read_emitter(r); });
  for_section(Section::status, [&](const Record& r) { read_status(r); });
  for_section(Section::leakage, [&](const Record& r) { read_leakage(r); });
  for_section(Section::controls, [&](const Record& r) { read_control(r); });
  prepare_quality();
  for_section(Section::quality, [&](const Record& r) { read_initial_quality(r); });
  for_section(Section::reactions, [&](const Record& r) { read_reaction(r); });
  for_section(Section::sources, [&](const Record& r) { read_source(r); });
  for_section(Section::mixing, [&](const Record& r) { read_mixing(r); });
  for_section(Section::energy, [&](const Record& r) { read_energy(r); });
  read_report();
  read_rules();
  finish();
  return std::move(net_);
}

// One pass over the whole text: every line's tokens go into one flat vector (no allocation per
// line; BWSN_Network_2 has 60,000 lines), the records point into it.
void InpReader::split_into_records(std::istream& in) {
  const std::string text = read_whole(in);
  const auto lines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
  records_.reserve(lines);
  tokens_.reserve(5 * lines);
  long line = 0;
  std::optional<Section> section;
  std::vector<std::string> tokens;
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string_view raw(text.data() + start, end - start);
    start = end + 1;
    ++line;
    if (section == Section::skipped && !starts_section(raw)) continue;  // coordinates etc.
    tokens.clear();
    tokenize(raw, tokens);
    if (tokens.empty()) continue;
    if (tokens[0][0] == '[') {
      section = section_from_header(tokens[0]);
      if (!section) fail(line, "invalid section keyword (EPANET error 299): " + tokens[0]);
      if (*section == Section::end) break;
      continue;
    }
    if (!section) continue;  // before the first section: EPANET reads nothing there either
    if (*section == Section::title) {
      if (net_.title.empty()) net_.title = std::string(raw);
      if (net_.title_lines.size() < 3) net_.title_lines.emplace_back(raw.substr(0, 79));
      continue;
    }
    if (*section == Section::skipped) continue;
    records_.push_back({*section, line, {}, tokens_.size()});
    for (std::string& t : tokens) tokens_.push_back(std::move(t));
  }
  for (std::size_t r = 0; r < records_.size(); ++r) {
    const std::size_t last = r + 1 < records_.size() ? records_[r + 1].first : tokens_.size();
    records_[r].tokens = {tokens_.data() + records_[r].first, last - records_[r].first};
  }
}

void InpReader::reserve_indexes() {
  std::size_t nodes = 0, links = 0;
  for (const Record& r : records_) {
    nodes += r.section == Section::junctions || r.section == Section::reservoirs ||
             r.section == Section::tanks;
    links +=
        r.section == Section::pipes || r.section == Section::pumps || r.section == Section::valves;
  }
  net_.nodes.reserve(nodes);
  net_.links.reserve(links);
  net_.node_index.reserve(nodes);
  net_.link_index.reserve(links);
}

// EPANET's getunitsoption: the first of its keywords the word starts with, in its order (SI is
// LPS); nullptr for none.
const std::pair<FlowUnits, double>* flow_units_of(const std::string& word) {
  static const std::pair<const char*, std::pair<FlowUnits, double>> keywords[] = {
      {"CFS", {FlowUnits::cfs, 1.0}},      {"GPM", {FlowUnits::gpm, 448.831}},
      {"AFD", {FlowUnits::afd, 1.9837}},   {"MGD", {FlowUnits::mgd, 0.64632}},
      {"IMGD", {FlowUnits::imgd, 0.5382}}, {"LPS", {FlowUnits::lps, 28.317}},
      {"LPM", {FlowUnits::lpm, 1699.0}},   {"CMH", {FlowUnits::cmh, 101.94}},
      {"CMD", {FlowUnits::cmd, 2446.6}},   {"MLD", {FlowUnits::mld, 2.4466}},
      {"CMS", {FlowUnits::cms, 0.028317}}, {"SI", {FlowUnits::lps, 28.317}}};
  for (const auto& [keyword, units] : keywords)
    if (starts_with_keyword(word, keyword)) return &units;
  return nullptr;
}

// EPANET 2.3.5's pressure units (input3.c optionchoice, input1.c initunits): PSI, KPA, METERS,
// BAR or FEET whatever the flow units (the default: meters with SI flows, psi with US), their
// factors as EPANET's; meters and feet of water are heads, not scaled by SPECIFIC GRAVITY.
void InpReader::set_pressure_units() {
  UnitSystem& u = net_.units;
  const double sg = net_.options.specific_gravity;
  const std::string& w = pressure_units_text_;
  if (w.empty())
    u.pressure_units = u.si() ? PressureUnits::meters : PressureUnits::psi;
  else if (starts_with_keyword(w, "PSI"))
    u.pressure_units = PressureUnits::psi;
  else if (starts_with_keyword(w, "KPA"))
    u.pressure_units = PressureUnits::kpa;
  else if (starts_with_keyword(w, "METERS"))
    u.pressure_units = PressureUnits::meters;
  else if (starts_with_keyword(w, "BAR"))
    u.pressure_units = PressureUnits::bar;
  else if (starts_with_keyword(w, "FEET"))
    u.pressure_units = PressureUnits::feet;
  else
    fail(pressure_units_line_, "invalid option value (EPANET error 213): PRESSURE " + w +
                                   " (PSI, KPA, METERS, BAR or FEET)");
  switch (u.pressure_units) {
    case PressureUnits::psi: u.pressure = 0.4333 * sg; break;
    case PressureUnits::kpa: u.pressure = 6.895 * 0.4333 * sg; break;
    case PressureUnits::meters: u.pressure = 0.3048; break;
    case PressureUnits::bar: u.pressure = 0.068948 * 0.4333 * sg; break;
    case PressureUnits::feet: u.pressure = 1.0; break;
  }
}

void InpReader::set_units() {
  const std::pair<FlowUnits, double>* flow = flow_units_of(flow_units_text_);
  if (!flow)
    fail(flow_units_line_, "invalid option value (EPANET error 213): UNITS " + flow_units_text_ +
                               " (CFS, GPM, MGD, IMGD, AFD, LPS, LPM, MLD, CMH, CMD, CMS or SI)");
  UnitSystem& u = net_.units;
  u.flow_units = flow->first;
  u.flow = flow->second;
  if (u.si()) {
    u.length = 0.3048;
    u.diameter = 304.8;
    u.power = 0.7457;
  } else {
    u.length = 1.0;
    u.diameter = 12.0;
    u.power = 1.0;
  }
  set_pressure_units();
  u.volume = u.length * u.length * u.length;
  auto& o = net_.options;
  if (viscosity_input_ == kMissing)
    o.viscosity = 1.1e-5;
  else if (viscosity_input_ > 1e-3)
    o.viscosity = viscosity_input_ * 1.1e-5;
  else
    o.viscosity = viscosity_input_ / (u.si() ? 0.3048 * 0.3048 : 1.0);
  if (emitter_exponent_input_ <= 0) fail(0, "EMITTER EXPONENT must be positive");
  o.emitter_exponent = 1.0 / emitter_exponent_input_;
}

void InpReader::convert_nodes() {
  const UnitSystem& u = net_.units;
  for (Node& node : net_.nodes) {
    node.elevation /= u.length;
    for (Demand& d : node.demands) d.base /= u.flow;
    if (node.emitter > 0) {
      // EPANET's convertunits: emitter coefficients are per psi (specific gravity included) in
      // US units but per metre of water in SI ones, whatever PRESSURE and SPECIFIC GRAVITY say.
      const double q = net_.options.emitter_exponent;
      const double per_ft = u.si() ? 0.3048 : 0.4333 * net_.options.specific_gravity;
      node.emitter = std::pow(u.flow, q) / per_ft / std::pow(node.emitter, q);
    }
    if (node.type == NodeType::tank)
      convert_tank(node);
    else
      node.initial_head = node.elevation + node.initial_head / u.length;
  }
}

// EPANET's tankdata, inittanks and convertunits, in that order and in the same arithmetic:
// volumes in the file's units from the diameter (or the volume curve), then converted.
void InpReader::convert_tank(Node& tank) {
  const UnitSystem& u = net_.units;
  constexpr double pi = 3.14159265358979323846;
  double diameter = tank.diameter;
  const double area = pi * (diameter * diameter) / 4.0;
  double vmin = area * tank.min_head;
  if (tank.min_volume > 0.0) vmin = tank.min_volume;
  double v0 = vmin + area * (tank.initial_head - tank.min_head);
  double vmax = vmin + area * (tank.max_head - tank.min_head);
  if (tank.volume_curve >= 0) {
    const Curve& c = net_.curves[tank.volume_curve];
    vmin = interpolate(c.x, c.y, tank.min_head);
    vmax = interpolate(c.x, c.y, tank.max_head);
    v0 = interpolate(c.x, c.y, tank.initial_head);
    const std::size_t n = c.x.size() - 1;
    const double a = (c.y[n] - c.y[0]) / (c.x[n] - c.x[0]);
    diameter = std::sqrt(4.0 * a / pi);  // a nominal diameter
  }
  tank.initial_head = tank.elevation + tank.initial_head / u.length;
  tank.min_head = tank.elevation + tank.min_head / u.length;
  tank.max_head = tank.elevation + tank.max_head / u.length;
  tank.diameter = diameter / u.length;
  tank.area = pi * ((diameter / u.length) * (diameter / u.length)) / 4.0;
  tank.initial_volume = v0 / u.volume;
  tank.min_volume = vmin / u.volume;
  tank.max_volume = vmax / u.volume;
}

double InpReader::convert_valve_setting(LinkType type, double setting) const {
  if (setting == kMissing) return setting;
  if (type == LinkType::fcv) return setting / net_.units.flow;
  if (type == LinkType::prv || type == LinkType::psv || type == LinkType::pbv)
    return setting / net_.units.pressure;
  return setting;
}

void InpReader::convert_links() {
  const UnitSystem& u = net_.units;
  for (Link& link : net_.links) {
    if (link.type == LinkType::pump) continue;
    link.diameter /= u.diameter;
    link.length /= u.length;
    if (link.type == LinkType::pipe || link.type == LinkType::cv_pipe) {
      if (net_.options.formula == HeadlossFormula::darcy_weisbach)
        link.roughness /= 1000.0 * u.length;
      link.leak_area *= u.length;  // per 100 m (or ft) -> per 100 ft, as EPANET's convertunits
      link.leak_expansion *= u.length;
    } else {
      link.setting = convert_valve_setting(link.type, link.setting);
    }
    const double d2 = link.diameter * link.diameter;
    link.minor_loss = 0.02517 * link.minor_loss / d2 / d2;  // V^2/2g basis -> Q^2 basis
  }
  for (std::size_t k = 0; k < net_.links.size(); ++k)
    if (net_.links[k].type == LinkType::pump) set_pump_curve(static_cast<int>(k));
}

// Pump head curves as EPANET 2.2 fits them: one point (q1, h1) -> power curve through
// (0, 1.33334 h1), (q1, h1), (2 q1, 0); three points starting at q = 0 -> power curve
// h = h0 - r q^n through them; anything else -> piecewise-linear custom curve.
void InpReader::set_pump_curve(int k) {
  Link& link = net_.links[k];
  Pump& pump = net_.pumps[link.pump];
  const UnitSystem& u = net_.units;
  if (pump.type == PumpCurveType::constant_power) {
    pump.h0 = 0;
    pump.r = -8.814 * pump.power / u.power;  // kW -> hp in SI
    pump.n = -1;
    pump.max_head = 1e10;
    pump.max_flow = 1e10;
    pump.q0 = 1.0;  // cfs
    return;
  }
  const long line = pump_curve_line_[k];
  const Curve& c = net_.curves[pump.head_curve];
  double h0, h1, h2, q1, q2;
  if (c.x.size() == 1) {
    q1 = c.x[0];
    h1 = c.y[0];
    h0 = 1.33334 * h1;
    q2 = 2.0 * q1;
    h2 = 0.0;
  } else if (c.x.size() == 3 && c.x[0] == 0.0) {
    h0 = c.y[0];
    q1 = c.x[1];
    h1 = c.y[1];
    q2 = c.x[2];
    h2 = c.y[2];
  } else {
    pump.type = PumpCurveType::custom;
    for (std::size_t m = 1; m < c.y.size(); ++m)
      if (c.y[m] >= c.y[m - 1])
        fail(line, "pump '" + link.id + "': head curve " + c.id + " must decrease");
    pump.q0 = (c.x.front() + c.x.back()) / 2.0 / u.flow;
    pump.max_head = c.y.front() / u.length;
    pump.max_flow = c.x.back() / u.flow;
    return;
  }
  constexpr double tiny = 1e-6;
  if (h0 < tiny || h0 - h1 < tiny || h1 - h2 < tiny || q1 < tiny || q2 - q1 < tiny)
    fail(line, "pump '" + link.id + "': invalid head curve " + c.id + " (EPANET error 206)");
  const double n = std::log((h0 - h2) / (h0 - h1)) / std::log(q2 / q1);
  if (n <= 0 || n > 20) fail(line, "pump '" + link.id + "': invalid head curve " + c.id);
  const double r = (h0 - h1) / std::pow(q1, n);
  pump.type = PumpCurveType::power_function;
  pump.n = n;
  pump.h0 = -h0 / u.length;  // stored as head loss, as EPANET does
  // h(ft) = r q(cfs)^n; the unit factor grouped as EPANET's pumpcurvepump groups it, so that r
  // rounds as EPANET's does (its last bit moves every trial's pump coefficients).
  pump.r = r * (std::pow(u.flow, n) / u.length);
  pump.q0 = q1 / u.flow;
  pump.max_head = h0 / u.length;
  pump.max_flow = std::pow(h0 / r, 1.0 / n) / u.flow;  // where the curve meets zero head
}

void InpReader::convert_controls() {
  const UnitSystem& u = net_.units;
  for (Control& c : net_.controls) {
    const Link& link = net_.links[c.link];
    if (c.node >= 0) {
      const Node& node = net_.nodes[c.node];
      c.grade = node.elevation + c.grade / (net_.is_junction(c.node) ? u.pressure : u.length);
    }
    if (link.type != LinkType::pump && link.type != LinkType::pipe && link.type != LinkType::gpv)
      c.setting = convert_valve_setting(link.type, c.setting);
  }
}

void InpReader::finish() {
  adjust_times();
  if (net_.nodes.empty()) fail(0, "the network has no nodes");
  if (net_.junction_count == static_cast<int>(net_.nodes.size()))
    fail(0, "the network has no reservoir or tank (EPANET error 224)");
  // EPANET accepts PRESSURE EXPONENT 0 in a file and then computes NaN heads under PDA (its
  // demand function divides by the exponent); its EN_setdemandmodel refuses it: so does netsolve.
  if (const std::string pda = pda_limits_error(net_.options.demand); !pda.empty())
    fail(0, "DEMAND MODEL PDA: " + pda);
  set_units();
  finish_quality();  // before the links' roughness and diameters are converted
  convert_nodes();
  convert_links();
  convert_controls();
  for (const Pattern& p : net_.patterns)
    if (p.factors.empty()) net_.notes.push_back("pattern " + p.id + " has no factors");
}

}  // namespace cgs::net::inp

namespace cgs::net {

Network parse_inp(std::istream& in, const std::string& name) {
  return inp::InpReader(name).read(in);
}

Network read_inp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 0, "cannot open network file");
  return parse_inp(in, path);
}

}  // namespace cgs::net
