#include "network/inp_reader.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <span>
#include <string_view>

#include "formats/types.hpp"
#include "network/epanet_time.hpp"

namespace cgs::net {
namespace {

enum class Section {
  title,
  junctions,
  reservoirs,
  tanks,
  pipes,
  pumps,
  valves,
  demands,
  status,
  patterns,
  curves,
  controls,
  rules,
  emitters,
  options,
  times,
  skipped,
  end
};

struct Record {
  Section section;
  long line;
  std::span<const std::string> tokens;  // into InpReader::tokens_
  std::size_t first = 0;                // where they start there
};

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// EPANET matches keywords by prefix, case-insensitively ("[JUNCTIONS]" and "[JUNC" are alike).
bool starts_with_keyword(const std::string& token, const std::string& keyword) {
  return upper(token).rfind(keyword, 0) == 0;
}

std::optional<Section> section_from_header(const std::string& header) {
  static const std::vector<std::pair<std::string, Section>> known = {
      {"[TITL", Section::title},    {"[JUNC", Section::junctions}, {"[RESE", Section::reservoirs},
      {"[TANK", Section::tanks},    {"[PIPE", Section::pipes},     {"[PUMP", Section::pumps},
      {"[VALV", Section::valves},   {"[DEMA", Section::demands},   {"[STAT", Section::status},
      {"[PATT", Section::patterns}, {"[CURV", Section::curves},    {"[CONT", Section::controls},
      {"[RULE", Section::rules},    {"[EMIT", Section::emitters},  {"[OPTI", Section::options},
      {"[TIME", Section::times},    {"[COOR", Section::skipped},   {"[VERT", Section::skipped},
      {"[LABE", Section::skipped},  {"[BACK", Section::skipped},   {"[TAGS", Section::skipped},
      {"[QUAL", Section::skipped},  {"[REAC", Section::skipped},   {"[SOUR", Section::skipped},
      {"[MIXI", Section::skipped},  {"[ENER", Section::skipped},   {"[REPO", Section::skipped},
      {"[ROUG", Section::skipped},  {"[END", Section::end}};
  for (const auto& [prefix, section] : known) {
    if (starts_with_keyword(header, prefix)) return section;
  }
  return std::nullopt;
}

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

// Appends the tokens of one line to `tokens`: whitespace separated, "double quotes" keep spaces,
// ';' starts a comment. NUL bytes (some files are padded with them) count as blanks.
void tokenize(std::string_view line, std::vector<std::string>& tokens) {
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

// Limits that keep arithmetic on values from the file defined: counts of trials and checks,
// and time values (about 114,000 years, in seconds far inside a long).
constexpr int kMaxCount = 100'000'000;
constexpr double kMaxHours = 1e9;

class InpReader {
 public:
  explicit InpReader(std::string name) { net_.source = std::move(name); }

  Network read(std::istream& in) {
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
        [](Section s) {
          return s == Section::pipes || s == Section::pumps || s == Section::valves;
        },
        [&](const Record& r) { read_link(r); });
    for_section(Section::demands, [&](const Record& r) { read_demand(r); });
    for_section(Section::emitters, [&](const Record& r) { read_emitter(r); });
    for_section(Section::status, [&](const Record& r) { read_status(r); });
    for_section(Section::controls, [&](const Record& r) { read_control(r); });
    read_rules();
    finish();
    return std::move(net_);
  }

 private:
  Network net_;
  std::vector<std::string> tokens_;  // of every record, in file order
  std::vector<Record> records_;
  std::map<int, long> pump_curve_line_;
  std::vector<bool> demands_replaced_;
  std::string flow_units_text_ = "GPM", pressure_units_text_ = "PSI";
  double viscosity_input_ = kMissing;
  long rule_step_ = 0;  // RULE TIMESTEP as given (0: a tenth of the hydraulic step)
  double emitter_exponent_input_ = 0.5;

  [[noreturn]] void fail(long line, const std::string& message) const {
    throw InputError(net_.source, line, message);
  }

  // One pass over the whole text: every line's tokens go into one flat vector (no allocation per
  // line; BWSN_Network_2 has 60,000 lines), the records point into it.
  void split_into_records(std::istream& in) {
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
        if (!section) fail(line, "unknown section " + tokens[0]);
        if (*section == Section::end) break;
        continue;
      }
      if (!section) fail(line, "data before the first [SECTION] header");
      if (*section == Section::title) {
        if (net_.title.empty()) net_.title = std::string(raw);
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

  void reserve_indexes() {
    std::size_t nodes = 0, links = 0;
    for (const Record& r : records_) {
      nodes += r.section == Section::junctions || r.section == Section::reservoirs ||
               r.section == Section::tanks;
      links += r.section == Section::pipes || r.section == Section::pumps ||
               r.section == Section::valves;
    }
    net_.nodes.reserve(nodes);
    net_.links.reserve(links);
    net_.node_index.reserve(nodes);
    net_.link_index.reserve(links);
  }

  template <typename Fn>
  void for_section(Section section, Fn&& fn) {
    for (const Record& r : records_)
      if (r.section == section) fn(r);
  }
  template <typename Pred, typename Fn>
  void for_records(Pred&& pred, Fn&& fn) {
    for (const Record& r : records_)
      if (pred(r.section)) fn(r);
  }

  double number(const Record& r, std::size_t i, const std::string& what) const {
    if (i >= r.tokens.size()) fail(r.line, "missing " + what);
    const std::string& s = r.tokens[i];
    double v = 0;
    if (!parse_number(s, v) || !std::isfinite(v))
      fail(r.line, "bad number '" + s + "' for " + what);
    return v;
  }
  // What strtod accepts whole (EPANET's getfloat), with from_chars first: 3x faster on the
  // plain decimals that make up nearly every number of a file.
  static bool parse_number(const std::string& s, double& v) {
    const char* first = s.data() + (!s.empty() && s[0] == '+' ? 1 : 0);
    const char* last = s.data() + s.size();
    const auto [end, error] = std::from_chars(first, last, v);
    if (error == std::errc() && end == last && first != last) return true;
    char* stop = nullptr;
    v = std::strtod(s.c_str(), &stop);
    return stop != s.c_str() && *stop == '\0';
  }
  static bool is_number(const std::string& s) {
    double v = 0;
    return parse_number(s, v);
  }
  void need(const Record& r, std::size_t count, const std::string& what) const {
    if (r.tokens.size() < count) fail(r.line, "missing fields: expected " + what);
  }

  int node_ref(const Record& r, std::size_t i) const {
    int n = net_.find_node(r.tokens[i]);
    if (n < 0) fail(r.line, "unknown node '" + r.tokens[i] + "'");
    return n;
  }
  int link_ref(const Record& r, std::size_t i) const {
    int k = net_.find_link(r.tokens[i]);
    if (k < 0) fail(r.line, "unknown link '" + r.tokens[i] + "'");
    return k;
  }
  int pattern_ref(const Record& r, std::size_t i) const {
    for (std::size_t p = 0; p < net_.patterns.size(); ++p)
      if (net_.patterns[p].id == r.tokens[i]) return static_cast<int>(p);
    fail(r.line, "unknown pattern '" + r.tokens[i] + "'");
  }
  int curve_ref(const Record& r, std::size_t i) const {
    for (std::size_t c = 0; c < net_.curves.size(); ++c)
      if (net_.curves[c].id == r.tokens[i]) return static_cast<int>(c);
    fail(r.line, "unknown curve '" + r.tokens[i] + "'");
  }

  // ---- [OPTIONS] and [TIMES] ------------------------------------------------------------------
  void read_option(const Record& r) {
    const auto& t = r.tokens;
    const std::string key = upper(t[0]);
    auto value = [&](std::size_t i) { return number(r, i, "option " + key); };
    // Counts are read as numbers and truncated, as EPANET does, within limits that keep the
    // trial loop's int arithmetic (trials + extra trials, trial + CHECKFREQ) from overflowing.
    auto count = [&](std::size_t i, int min, const char* what) {
      const double v = value(i);
      if (!(v >= min && v <= kMaxCount))
        fail(r.line, std::string(what) + " must be between " + std::to_string(min) + " and " +
                         std::to_string(kMaxCount));
      return static_cast<int>(v);
    };
    auto word = [&](std::size_t i) {
      if (i >= t.size()) fail(r.line, "missing value for option " + key);
      return upper(t[i]);
    };
    auto& o = net_.options;
    if (key == "UNITS") {
      flow_units_text_ = word(1);
    } else if (key == "HEADLOSS") {
      const std::string f = word(1);
      if (f == "H-W")
        o.formula = HeadlossFormula::hazen_williams;
      else if (f == "D-W")
        o.formula = HeadlossFormula::darcy_weisbach;
      else if (f == "C-M")
        o.formula = HeadlossFormula::chezy_manning;
      else
        fail(r.line, "unknown HEADLOSS formula '" + t[1] + "' (H-W, D-W or C-M)");
    } else if (key == "VISCOSITY") {
      viscosity_input_ = value(1);
    } else if (key == "SPECIFIC") {
      o.specific_gravity = value(t.size() > 2 ? 2 : 1);
      if (o.specific_gravity <= 0) fail(r.line, "SPECIFIC GRAVITY must be positive");
    } else if (key == "TRIALS") {
      o.max_trials = count(1, 1, "TRIALS");
    } else if (key == "ACCURACY") {
      o.accuracy = value(1);
      if (o.accuracy < 1e-8 || o.accuracy > 1e-1) fail(r.line, "ACCURACY out of range");
    } else if (key == "UNBALANCED") {
      const std::string w = word(1);
      if (w == "STOP")
        o.extra_trials = -1;
      else if (starts_with_keyword(w, "CONT"))
        o.extra_trials = t.size() > 2 ? count(2, 0, "UNBALANCED CONTINUE") : 0;
      else
        fail(r.line, "UNBALANCED must be STOP or CONTINUE [n]");
    } else if (key == "PATTERN") {
      if (t.size() > 1) o.default_pattern_id = t[1];
    } else if (key == "DEMAND") {
      const std::string w = word(1);
      if (w == "MULTIPLIER") {
        o.demand_multiplier = value(2);
      } else if (w == "MODEL") {
        read_demand_model(r);
      } else {
        fail(r.line, "unknown option DEMAND " + t[1]);
      }
    } else if (key == "EMITTER") {
      if (word(1) == "EXPONENT")
        emitter_exponent_input_ = value(2);
      else if (word(1) == "BACKFLOW")
        o.emitter_backflow = word(2) == "YES";
    } else if (key == "CHECKFREQ") {
      o.check_frequency = count(1, 0, "CHECKFREQ");
    } else if (key == "MAXCHECK") {
      o.max_check = count(1, 0, "MAXCHECK");
    } else if (key == "DAMPLIMIT") {
      o.damp_limit = value(1);
    } else if (key == "HEADERROR") {
      o.head_error_limit = value(1);
    } else if (key == "FLOWCHANGE") {
      o.flow_change_limit = value(1);
    } else if (key == "PRESSURE" && t.size() > 1 && starts_with_keyword(t[1], "EXP")) {
      pda_value(r, set_pressure_exponent);
    } else if (key == "PRESSURE") {
      if (t.size() > 1 && !is_number(t[1])) pressure_units_text_ = upper(t[1]);
    } else if (starts_with_keyword(key, "MINI")) {
      pda_value(r, set_minimum_pressure);
    } else if (starts_with_keyword(key, "REQ")) {
      pda_value(r, set_required_pressure);
    } else if (key == "HYDRAULICS") {
      fail(r.line, "HYDRAULICS USE/SAVE files are not supported");
    } else {
      // QUALITY, DIFFUSIVITY, TOLERANCE, MAP, ...: they do not change the hydraulics.
      net_.notes.push_back("option " + key + " ignored (no effect on hydraulics at time 0)");
    }
  }

  // DEMAND MODEL DDA|PDA, matched by prefix as EPANET's findmatch.
  void read_demand_model(const Record& r) {
    need(r, 3, "DEMAND MODEL DDA or PDA");
    DemandModelOptions& d = net_.options.demand;
    if (starts_with_keyword(r.tokens[2], "DDA"))
      d.model = DemandModel::dda;
    else if (starts_with_keyword(r.tokens[2], "PDA"))
      d.model = DemandModel::pda;
    else
      fail(r.line, "invalid option value (EPANET error 213): DEMAND MODEL " + r.tokens[2] +
                       " (DDA or PDA)");
  }

  // MINIMUM PRESSURE, REQUIRED PRESSURE, PRESSURE EXPONENT: the value is the third token; EPANET's
  // rules for it (and its errors 213, 208) are network.hpp's, shared with netsolve's flags.
  using PdaSetter = std::string (*)(DemandModelOptions&, double);
  void pda_value(const Record& r, PdaSetter set) {
    // The option's name from the tokens there are: a bare "MINIMUM" has no second one (its
    // message once read past the record, found by fuzz_eps).
    const std::string name =
        r.tokens.size() > 1 ? upper(r.tokens[0]) + " " + upper(r.tokens[1]) : upper(r.tokens[0]);
    need(r, 3, name + " value");
    const std::string error =
        set(net_.options.demand, number(r, 2, "option " + upper(r.tokens[0])));
    if (!error.empty()) fail(r.line, error);
  }

  // [TIMES] as EPANET's timedata: the value is the last token when it is a number or a time
  // (h:mm[:ss]), else the token before it with the last as its unit; rounded to the second.
  void read_time(const Record& r) {
    const auto& t = r.tokens;
    if (t.size() < 2) fail(r.line, "missing value in [TIMES]");
    if (starts_with_keyword(t[0], "STAT")) return;  // STATISTIC: reporting only
    const std::size_t n = t.size() - 1;
    double hours = 0;
    if (!parse_number(t[n], hours)) {
      hours = epanet_hours(t[n], "");
      if (hours < 0 && n >= 2) hours = epanet_hours(t[n - 1], t[n]);
      if (hours < 0) {
        const std::string value = n >= 2 ? t[n - 1] + " " + t[n] : t[n];
        fail(r.line, "invalid option value " + t[n >= 2 ? n - 1 : n] + " in [TIMES] section ('" +
                         value +
                         "' is not a time: hours, h:mm[:ss], or a number with SEC, MIN, HOURS, "
                         "DAYS, AM or PM)");
      }
    }
    if (!(hours >= 0) || !std::isfinite(hours))
      fail(r.line, "invalid option value " + t[n] + " in [TIMES] section: negative time");
    if (hours > kMaxHours)  // beyond this the conversion to whole seconds is undefined
      fail(r.line, "invalid option value " + t[n] + " in [TIMES] section: over " +
                       std::to_string(long(kMaxHours)) + " hours");
    const long seconds = static_cast<long>(3600.0 * hours + 0.5);
    auto& times = net_.times;
    auto second_word = [&](long& time_value, long& start_value) {
      if (t.size() > 2 && starts_with_keyword(t[1], "TIME"))
        time_value = seconds;
      else if (t.size() > 2 && starts_with_keyword(t[1], "STAR"))
        start_value = seconds;
      else
        fail(r.line, "unknown [TIMES] keyword " + t[0] + " " + t[1]);
    };
    if (starts_with_keyword(t[0], "DURA"))
      times.duration = seconds;
    else if (starts_with_keyword(t[0], "HYDR"))
      times.hydraulic_step = seconds;
    else if (starts_with_keyword(t[0], "QUAL") || starts_with_keyword(t[0], "MINI"))
      return;  // water quality is not simulated
    else if (starts_with_keyword(t[0], "RULE"))
      rule_step_ = seconds;
    else if (starts_with_keyword(t[0], "PATT"))
      second_word(times.pattern_step, times.pattern_start);
    else if (starts_with_keyword(t[0], "REPO"))
      second_word(times.report_step, times.report_start);
    else if (starts_with_keyword(t[0], "STAR"))
      times.start_clocktime = seconds % 86400;
    else
      fail(r.line, "unknown [TIMES] keyword " + t[0]);
  }

  // EPANET's adjustdata for the time steps.
  void adjust_times() {
    auto& times = net_.times;
    if (times.pattern_step <= 0) times.pattern_step = 3600;
    if (times.report_step == 0) times.report_step = times.pattern_step;
    if (times.hydraulic_step <= 0) times.hydraulic_step = 3600;
    times.hydraulic_step = std::min({times.hydraulic_step, times.pattern_step, times.report_step});
    if (times.report_start > times.duration) times.report_start = 0;
    times.rule_step = rule_step_ == 0 ? times.hydraulic_step / 10 : rule_step_;
    times.rule_step = std::min(times.rule_step, times.hydraulic_step);
    if (times.report_step <= 0) times.report_step = times.hydraulic_step;
    if (times.rule_step <= 0) times.rule_step = 1;
  }

  // ---- [PATTERNS] and [CURVES] --------------------------------------------------------------
  void read_pattern(const Record& r) {
    int p = -1;
    for (std::size_t i = 0; i < net_.patterns.size(); ++i)
      if (net_.patterns[i].id == r.tokens[0]) p = static_cast<int>(i);
    if (p < 0) {
      net_.patterns.push_back({r.tokens[0], {}});
      p = static_cast<int>(net_.patterns.size()) - 1;
    }
    for (std::size_t i = 1; i < r.tokens.size(); ++i)
      net_.patterns[p].factors.push_back(number(r, i, "pattern factor"));
  }

  void read_curve(const Record& r) {
    need(r, 3, "curve ID, X and Y");
    int c = -1;
    for (std::size_t i = 0; i < net_.curves.size(); ++i)
      if (net_.curves[i].id == r.tokens[0]) c = static_cast<int>(i);
    if (c < 0) {
      net_.curves.push_back({r.tokens[0], {}, {}});
      c = static_cast<int>(net_.curves.size()) - 1;
    }
    net_.curves[c].x.push_back(number(r, 1, "curve X"));
    net_.curves[c].y.push_back(number(r, 2, "curve Y"));
  }

  // ---- nodes --------------------------------------------------------------------------------
  int add_node(const Record& r, NodeType type) {
    const std::string& id = r.tokens[0];
    if (net_.node_index.count(id)) {
      fail(r.line, "duplicate node ID '" + id + "' (first defined on line " +
                       std::to_string(net_.nodes[net_.node_index[id]].line) + ")");
    }
    Node node;
    node.id = id;
    node.type = type;
    node.line = r.line;
    net_.node_index[id] = static_cast<int>(net_.nodes.size());
    net_.nodes.push_back(node);
    return static_cast<int>(net_.nodes.size()) - 1;
  }

  void read_junction(const Record& r) {
    need(r, 2, "ID and elevation");
    int n = add_node(r, NodeType::junction);
    Node& node = net_.nodes[n];
    node.elevation = number(r, 1, "elevation");
    Demand d;
    if (r.tokens.size() > 2) d.base = number(r, 2, "demand");
    if (r.tokens.size() > 3) d.pattern = pattern_ref(r, 3);
    node.demands.push_back(d);
  }

  void read_fixed_head_node(const Record& r) {
    // As EPANET: a [TANKS] line with only an elevation (and a pattern) is a reservoir.
    if (r.section == Section::reservoirs || r.tokens.size() <= 3) {
      need(r, 2, "ID and head");
      int n = add_node(r, NodeType::reservoir);
      net_.nodes[n].elevation = number(r, 1, "head");
      if (r.tokens.size() > 2) net_.nodes[n].head_pattern = pattern_ref(r, 2);
      return;
    }
    need(r, 6, "ID, elevation, initial, minimum and maximum level, diameter");
    const double diameter = number(r, 5, "diameter");
    // As EPANET: a tank of diameter 0 is a reservoir (at its initial level).
    int n = add_node(r, diameter == 0 ? NodeType::reservoir : NodeType::tank);
    Node& tank = net_.nodes[n];
    tank.elevation = number(r, 1, "elevation");
    // Levels and volumes stay in the file's units until convert_nodes (EPANET's order).
    tank.initial_head = number(r, 2, "initial level");
    tank.min_head = number(r, 3, "minimum level");
    tank.max_head = number(r, 4, "maximum level");
    tank.diameter = diameter;
    if (r.tokens.size() > 6) tank.min_volume = number(r, 6, "minimum volume");
    if (r.tokens.size() > 7 && r.tokens[7] != "*") {
      tank.volume_curve = curve_ref(r, 7);
      const Curve& c = net_.curves[tank.volume_curve];
      bool increasing = c.x.size() >= 2;
      for (std::size_t k = 1; k < c.x.size(); ++k) increasing = increasing && c.x[k] > c.x[k - 1];
      if (!increasing)
        fail(r.line, "tank '" + tank.id + "': volume curve " + c.id +
                         " needs at least 2 points of increasing level");
    }
    if (r.tokens.size() > 8) tank.can_overflow = upper(r.tokens[8]) == "YES";
    if (tank.initial_head < 0 || tank.min_head < 0 || tank.max_head < 0 || diameter < 0 ||
        tank.min_volume < 0)
      fail(r.line, "tank '" + tank.id + "': negative level, diameter or volume (EPANET error 209)");
    if (tank.initial_head > tank.max_head || tank.min_head > tank.max_head ||
        tank.initial_head < tank.min_head)
      fail(r.line, "tank '" + tank.id + "': levels out of order (min <= initial <= max)");
  }

  // ---- links --------------------------------------------------------------------------------
  int add_link(const Record& r, LinkType type) {
    need(r, 3, "ID, start node and end node");
    const std::string& id = r.tokens[0];
    if (net_.link_index.count(id)) {
      fail(r.line, "duplicate link ID '" + id + "' (first defined on line " +
                       std::to_string(net_.links[net_.link_index[id]].line) + ")");
    }
    Link link;
    link.id = id;
    link.type = type;
    link.line = r.line;
    link.from = node_ref(r, 1);
    link.to = node_ref(r, 2);
    if (link.from == link.to) fail(r.line, "link '" + id + "' starts and ends at the same node");
    net_.link_index[id] = static_cast<int>(net_.links.size());
    net_.links.push_back(link);
    return static_cast<int>(net_.links.size()) - 1;
  }

  void read_link(const Record& r) {
    if (r.section == Section::pipes)
      read_pipe(r);
    else if (r.section == Section::pumps)
      read_pump(r);
    else
      read_valve(r);
  }

  void read_pipe(const Record& r) {
    need(r, 6, "ID, nodes, length, diameter and roughness");
    int k = add_link(r, LinkType::pipe);
    Link& pipe = net_.links[k];
    pipe.length = number(r, 3, "length");
    pipe.diameter = number(r, 4, "diameter");
    pipe.roughness = number(r, 5, "roughness");
    if (pipe.length <= 0 || pipe.diameter <= 0 || pipe.roughness <= 0)
      fail(r.line, "pipe '" + pipe.id + "': length, diameter and roughness must be positive");
    std::size_t next = 6;
    if (r.tokens.size() > 6 && is_number(r.tokens[6])) {
      pipe.minor_loss = number(r, 6, "minor loss");
      next = 7;
    }
    if (r.tokens.size() > next) {
      const std::string s = upper(r.tokens[next]);
      if (s == "CV")
        pipe.type = LinkType::cv_pipe;
      else if (s == "CLOSED")
        pipe.status = LinkStatus::closed;
      else if (s != "OPEN")
        fail(r.line, "bad pipe status '" + r.tokens[next] + "'");
    }
  }

  void read_pump(const Record& r) {
    need(r, 5, "ID, nodes and HEAD curve or POWER");
    int k = add_link(r, LinkType::pump);
    Link& link = net_.links[k];
    link.setting = 1.0;  // speed
    Pump pump;
    bool has_curve = false;
    for (std::size_t i = 3; i < r.tokens.size(); i += 2) {
      const std::string key = upper(r.tokens[i]);
      if (i + 1 >= r.tokens.size()) fail(r.line, "syntax error: " + r.tokens[i] + " needs a value");
      if (key == "HEAD") {
        pump.head_curve = curve_ref(r, i + 1);
        has_curve = true;
        pump_curve_line_[k] = r.line;
      } else if (key == "POWER") {
        pump.power = number(r, i + 1, "pump power");
        if (pump.power <= 0) fail(r.line, "pump power must be positive");
        pump.type = PumpCurveType::constant_power;
        has_curve = true;
      } else if (key == "SPEED") {
        link.setting = number(r, i + 1, "pump speed");
        if (link.setting < 0) fail(r.line, "pump speed must not be negative");
      } else if (key == "PATTERN") {
        pump.speed_pattern = pattern_ref(r, i + 1);
      } else {
        fail(r.line, "syntax error " + r.tokens[i] + " in [PUMPS] section");
      }
    }
    if (!has_curve)
      fail(r.line, "pump '" + link.id + "' has neither a HEAD curve nor POWER (EPANET error 226)");
    if (link.setting == 0) link.status = LinkStatus::closed;
    link.pump = static_cast<int>(net_.pumps.size());
    net_.pumps.push_back(pump);
  }

  void read_valve(const Record& r) {
    need(r, 6, "ID, nodes, diameter, type and setting");
    const std::string type = upper(r.tokens[4]);
    static const std::map<std::string, LinkType> types = {
        {"PRV", LinkType::prv}, {"PSV", LinkType::psv}, {"PBV", LinkType::pbv},
        {"FCV", LinkType::fcv}, {"TCV", LinkType::tcv}, {"GPV", LinkType::gpv}};
    auto it = types.find(type);
    if (it == types.end()) {
      fail(r.line,
           "valve type '" + r.tokens[4] + "' is not supported (PRV, PSV, PBV, FCV, TCV, GPV)");
    }
    int k = add_link(r, it->second);
    Link& valve = net_.links[k];
    valve.diameter = number(r, 3, "diameter");
    if (valve.diameter <= 0) fail(r.line, "valve diameter must be positive");
    if (valve.type == LinkType::gpv)
      valve.setting = curve_ref(r, 5);
    else
      valve.setting = number(r, 5, "valve setting");
    if (r.tokens.size() > 6) valve.minor_loss = number(r, 6, "minor loss");
    valve.status = LinkStatus::active;
    const bool pressure_or_flow_valve =
        valve.type == LinkType::prv || valve.type == LinkType::psv || valve.type == LinkType::fcv;
    if (pressure_or_flow_valve && (!net_.is_junction(valve.from) || !net_.is_junction(valve.to)))
      fail(r.line, "valve '" + valve.id + "' connects a tank or reservoir (EPANET error 219)");
    net_.valves.push_back(k);
  }

  // ---- [DEMANDS], [EMITTERS], [STATUS] ------------------------------------------------------
  void read_demand(const Record& r) {
    need(r, 2, "junction ID and demand");
    if (upper(r.tokens[0]) == "MULTIPLY") {
      net_.options.demand_multiplier = number(r, 1, "demand multiplier");
      return;
    }
    int n = node_ref(r, 0);
    if (!net_.is_junction(n)) return;  // as EPANET: demands on tanks are ignored
    Demand d;
    d.base = number(r, 1, "demand");
    if (r.tokens.size() > 2) d.pattern = pattern_ref(r, 2);
    if (demands_replaced_.empty()) demands_replaced_.assign(net_.nodes.size(), false);
    auto& list = net_.nodes[n].demands;
    // The first [DEMANDS] entry of a junction replaces the demand given in [JUNCTIONS].
    if (!demands_replaced_[n] && !list.empty())
      list.front() = d;
    else
      list.push_back(d);
    demands_replaced_[n] = true;
  }

  void read_emitter(const Record& r) {
    need(r, 2, "junction ID and coefficient");
    int n = node_ref(r, 0);
    double k = number(r, 1, "emitter coefficient");
    if (k < 0) fail(r.line, "emitter coefficient must not be negative");
    if (net_.is_junction(n)) net_.nodes[n].emitter = k;
  }

  void read_status(const Record& r) {
    need(r, 2, "link ID and status or setting");
    int k = link_ref(r, 0);
    Link& link = net_.links[k];
    const std::string s = upper(r.tokens[1]);
    std::optional<LinkStatus> status;
    double value = kMissing;
    if (s == "OPEN")
      status = LinkStatus::open;
    else if (s == "CLOSED")
      status = LinkStatus::closed;
    else if (s == "ACTIVE")
      status = LinkStatus::active;
    else
      value = number(r, 1, "status or setting");
    if (link.type == LinkType::cv_pipe)
      fail(r.line, "cannot set the status of check valve " + link.id);
    if (link.type == LinkType::pipe || link.type == LinkType::gpv) {
      if (status && *status != LinkStatus::active) link.status = *status;
    } else if (link.type == LinkType::pump) {
      if (!status) {
        if (value < 0) fail(r.line, "pump speed must not be negative");
        link.setting = value;
        link.status = value == 0 ? LinkStatus::closed : LinkStatus::open;
      } else if (*status == LinkStatus::open) {
        link.setting = 1.0;
        link.status = LinkStatus::open;
      } else if (*status == LinkStatus::closed) {
        // As EPANET's changestatus: a pump closed in [STATUS] has speed 0, so a control that
        // closes it changes nothing (and cuts no time step) until one opens it.
        link.setting = 0.0;
        link.status = LinkStatus::closed;
      }
    } else {  // valves: a number is a setting, OPEN/CLOSED fix the status
      if (!status) {
        link.setting = value;
        link.status = LinkStatus::active;
      } else if (*status != LinkStatus::active) {
        link.setting = kMissing;
        link.status = *status;
      }
    }
  }

  // ---- [CONTROLS] ---------------------------------------------------------------------------
  void read_control(const Record& r) {
    const auto& t = r.tokens;
    need(r, 6, "LINK id status IF NODE id ABOVE/BELOW value, or ... AT TIME t");
    if (upper(t[0]) != "LINK") fail(r.line, "control must start with LINK");
    Control c;
    c.line = r.line;
    c.link = link_ref(r, 1);
    const Link& link = net_.links[c.link];
    if (link.type == LinkType::cv_pipe) fail(r.line, "cannot control check valve " + link.id);
    const std::string action = upper(t[2]);
    if (action == "OPEN" || action == "CLOSED") {
      c.status = action == "OPEN" ? LinkStatus::open : LinkStatus::closed;
      if (link.type == LinkType::pump) c.setting = action == "OPEN" ? 1.0 : 0.0;
      if (link.type == LinkType::gpv) c.setting = link.setting;
    } else if (link.type == LinkType::gpv) {
      fail(r.line, "a GPV can only be opened or closed by a control");
    } else {
      c.setting = number(r, 2, "control setting");
      if (link.type == LinkType::pump || link.type == LinkType::pipe) {
        if (c.setting < 0) fail(r.line, "negative control setting");
        c.status = c.setting == 0 ? LinkStatus::closed : LinkStatus::open;
      }
    }
    const std::string kind = upper(t[3]);
    if (kind == "IF") {
      need(r, 8, "LINK id status IF NODE id ABOVE/BELOW value");
      c.node = node_ref(r, 5);
      const std::string dir = upper(t[6]);
      if (dir == "BELOW")
        c.type = ControlType::low_level;
      else if (dir == "ABOVE")
        c.type = ControlType::high_level;
      else
        fail(r.line, "control condition must be ABOVE or BELOW");
      c.grade = number(r, 7, "control level");
    } else if (kind == "AT") {
      const std::string when = upper(t[4]);
      const std::string unit = t.size() > 6 ? t[6] : "";
      if (when == "TIME")
        c.type = ControlType::timer;
      else if (when == "CLOCKTIME")
        c.type = ControlType::time_of_day;
      else
        fail(r.line, "control must be AT TIME or AT CLOCKTIME");
      const double hours = epanet_hours(t[5], unit);
      if (!(hours >= 0))
        fail(r.line, "invalid time '" + t[5] + (unit.empty() ? "" : " " + unit) +
                         "' in [CONTROLS] (hours, h:mm[:ss], a unit, or AM/PM)");
      c.time = static_cast<long>(3600.0 * hours);  // truncated, as EPANET's controldata
      if (c.type == ControlType::time_of_day) c.time %= 86400;
    } else {
      fail(r.line, "control must have IF NODE ... or AT TIME ...");
    }
    net_.controls.push_back(c);
  }

  // ---- [RULES] (EPANET's rules.c: ruledata, newpremise, newaction, newpriority) -------------
  enum class RuleClause { rule, if_, and_, or_, then_, else_, priority };

  // EPANET's findmatch: the first keyword the word begins with, or -1.
  static int find_keyword(const std::string& word, const std::vector<const char*>& keywords) {
    for (std::size_t i = 0; i < keywords.size(); ++i)
      if (starts_with_keyword(word, keywords[i])) return static_cast<int>(i);
    return -1;
  }

  void read_rules() {
    static const std::vector<const char*> clauses = {"RULE", "IF",   "AND", "OR",
                                                     "THEN", "ELSE", "PRIO"};
    // EPANET starts as if after a PRIORITY line: the first clause must be RULE.
    RuleClause state = RuleClause::priority;
    for_section(Section::rules, [&](const Record& r) {
      const int key = find_keyword(r.tokens[0], clauses);
      if (key < 0) fail(r.line, "syntax error in [RULES]: unknown clause '" + r.tokens[0] + "'");
      const auto clause = static_cast<RuleClause>(key);
      auto misplaced = [&]() {
        fail(r.line, "mis-placed clause " + upper(r.tokens[0]) + " in rule " + rule_label() +
                         " (EPANET error 221)");
      };
      switch (clause) {
        case RuleClause::rule:
          if (r.tokens.size() != 2) fail(r.line, "RULE needs exactly one label");
          net_.rules.push_back({r.tokens[1], 0.0, {}, {}, {}, r.line});
          break;
        case RuleClause::if_:
          if (state != RuleClause::rule) misplaced();
          add_premise(r, false);
          break;
        case RuleClause::and_:
          if (state == RuleClause::if_)
            add_premise(r, false);
          else if (state == RuleClause::then_ || state == RuleClause::else_)
            add_action(r, state == RuleClause::then_);
          else
            misplaced();
          return;  // AND keeps the state
        case RuleClause::or_:
          if (state != RuleClause::if_) misplaced();
          add_premise(r, true);
          return;
        case RuleClause::then_:
          if (state != RuleClause::if_) misplaced();
          add_action(r, true);
          break;
        case RuleClause::else_:
          if (state != RuleClause::then_) misplaced();
          add_action(r, false);
          break;
        case RuleClause::priority:
          if (state != RuleClause::then_ && state != RuleClause::else_) misplaced();
          if (r.tokens.size() < 2 || !parse_number(r.tokens[1], net_.rules.back().priority))
            fail(r.line, "bad PRIORITY value in rule " + rule_label() + " (EPANET error 202)");
          break;
      }
      state = clause;
    });
  }

  std::string rule_label() const {
    return net_.rules.empty() ? std::string("(none)") : net_.rules.back().label;
  }

  // IF/AND/OR <object> <id> <variable> <relation> <value>, or SYSTEM <variable> <relation>
  // <value> [unit].
  void add_premise(const Record& r, bool or_) {
    const auto& t = r.tokens;
    const std::string where = " in rule " + rule_label();
    if (t.size() != 5 && t.size() != 6)
      fail(r.line, "syntax error: a premise has 5 or 6 words" + where + " (EPANET error 201)");
    static const std::vector<const char*> objects = {"JUNC",  "RESER", "TANK", "PIPE",  "PUMP",
                                                     "VALVE", "NODE",  "LINK", "SYSTEM"};
    static const std::vector<const char*> variables = {
        "DEMAND",  "HEAD",  "GRADE", "LEVEL",     "PRESSURE", "FLOW",     "STATUS",
        "SETTING", "POWER", "TIME",  "CLOCKTIME", "FILLTIME", "DRAINTIME"};
    RulePremise p;
    p.or_ = or_;
    const int object = find_keyword(t[1], objects);
    if (object < 0) fail(r.line, "unknown object '" + t[1] + "'" + where + " (EPANET error 201)");
    const std::size_t variable_at = object == 8 ? 2 : 3;
    const int variable = find_keyword(t[variable_at], variables);
    if (variable < 0)
      fail(r.line, "unknown variable '" + t[variable_at] + "'" + where + " (EPANET error 201)");
    p.variable = static_cast<RuleVariable>(variable);
    using V = RuleVariable;
    if (object == 8) {
      p.object = RuleObject::system;
      if (p.variable != V::demand && p.variable != V::time && p.variable != V::clocktime)
        fail(r.line, "SYSTEM has DEMAND, TIME or CLOCKTIME only" + where + " (EPANET error 201)");
    } else if (object <= 2 || object == 6) {
      p.object = RuleObject::node;
      p.index = net_.find_node(t[2]);
      if (p.index < 0) fail(r.line, "unknown node '" + t[2] + "'" + where + " (EPANET error 203)");
      const bool tank_time = p.variable == V::filltime || p.variable == V::draintime;
      if ((p.variable > V::pressure && !tank_time) || (tank_time && net_.is_junction(p.index)))
        fail(r.line, "variable " + upper(t[3]) + " does not apply to node " + t[2] + where +
                         " (EPANET error 201)");
    } else {
      p.object = RuleObject::link;
      p.index = net_.find_link(t[2]);
      if (p.index < 0) fail(r.line, "unknown link '" + t[2] + "'" + where + " (EPANET error 204)");
      if (p.variable != V::flow && p.variable != V::status && p.variable != V::setting)
        fail(r.line, "variable " + upper(t[3]) + " does not apply to link " + t[2] + where +
                         " (EPANET error 201)");
    }
    const std::size_t relation_at = variable_at + 1;
    static const std::vector<const char*> relations = {"=", "<>", "<=",  ">=",    "<",
                                                       ">", "IS", "NOT", "BELOW", "ABOVE"};
    static const RuleRelation relation_of[] = {
        RuleRelation::eq, RuleRelation::ne, RuleRelation::le, RuleRelation::ge, RuleRelation::lt,
        RuleRelation::gt, RuleRelation::eq, RuleRelation::ne, RuleRelation::lt, RuleRelation::gt};
    const int relation = find_keyword(t[relation_at], relations);
    if (relation < 0)
      fail(r.line, "unknown relation '" + t[relation_at] + "'" + where + " (EPANET error 201)");
    p.relation = relation_of[relation];
    read_premise_value(r, p, where);
    if (p.state != RuleState::none && p.object != RuleObject::link)
      fail(r.line, "OPEN, CLOSED or ACTIVE compares a link's status, not a node's" + where);
    net_.rules.back().premises.push_back(p);
  }

  void read_premise_value(const Record& r, RulePremise& p, const std::string& where) {
    const auto& t = r.tokens;
    if (p.variable == RuleVariable::time || p.variable == RuleVariable::clocktime) {
      const double hours = epanet_hours(t[4], t.size() == 6 ? t[5] : "");
      if (!(hours >= 0))
        fail(r.line, "invalid time '" + t[4] + "'" + where + " (EPANET error 202)");
      p.value = hours * 3600.0;
      return;
    }
    const int state = find_keyword(t.back(), {"XXXX", "OPEN", "CLOSED", "ACTIVE"});
    if (state > 0) {
      p.state = static_cast<RuleState>(state);
      return;
    }
    if (!parse_number(t.back(), p.value))
      fail(r.line, "bad value '" + t.back() + "'" + where + " (EPANET error 202)");
    if (p.variable == RuleVariable::filltime || p.variable == RuleVariable::draintime)
      p.value *= 3600.0;
  }

  // THEN/ELSE/AND <LINK|PUMP|PIPE|VALVE> <id> <STATUS|SETTING> IS <value>
  void add_action(const Record& r, bool then_branch) {
    const auto& t = r.tokens;
    const std::string where = " in rule " + rule_label();
    if (t.size() != 6)
      fail(r.line, "syntax error: an action has 6 words" + where + " (EPANET error 201)");
    RuleAction a;
    a.link = net_.find_link(t[2]);
    if (a.link < 0) fail(r.line, "unknown link '" + t[2] + "'" + where + " (EPANET error 204)");
    const LinkType type = net_.links[a.link].type;
    if (type == LinkType::cv_pipe)
      fail(r.line, "cannot control check valve " + t[2] + where + " (EPANET error 207)");
    const int state = find_keyword(t[5], {"XXXX", "OPEN", "CLOSED", "ACTIVE"});
    if (state > 0) {
      a.state = static_cast<RuleState>(state);
    } else if (!parse_number(t[5], a.setting) || a.setting < 0) {
      fail(r.line, "bad setting '" + t[5] + "'" + where + " (EPANET error 202)");
    }
    if (a.setting != kMissing && type == LinkType::gpv)
      fail(r.line, "a rule cannot set a GPV's setting" + where + " (EPANET error 202)");
    if (a.setting != kMissing && type == LinkType::pipe) {  // a pipe's setting is its status
      a.state = a.setting == 0.0 ? RuleState::closed : RuleState::open;
      a.setting = kMissing;
    }
    Rule& rule = net_.rules.back();
    (then_branch ? rule.then_actions : rule.else_actions).push_back(a);
  }

  // ---- units and derived values -------------------------------------------------------------
  void set_units() {
    static const std::map<std::string, std::pair<FlowUnits, double>> flows = {
        {"CFS", {FlowUnits::cfs, 1.0}},     {"GPM", {FlowUnits::gpm, 448.831}},
        {"MGD", {FlowUnits::mgd, 0.64632}}, {"IMGD", {FlowUnits::imgd, 0.5382}},
        {"AFD", {FlowUnits::afd, 1.9837}},  {"LPS", {FlowUnits::lps, 28.317}},
        {"LPM", {FlowUnits::lpm, 1699.0}},  {"MLD", {FlowUnits::mld, 2.4466}},
        {"CMH", {FlowUnits::cmh, 101.94}},  {"CMD", {FlowUnits::cmd, 2446.6}}};
    auto it = flows.find(flow_units_text_);
    if (it == flows.end()) fail(0, "unknown flow UNITS '" + flow_units_text_ + "'");
    UnitSystem& u = net_.units;
    u.flow_units = it->second.first;
    u.flow = it->second.second;
    const double sg = net_.options.specific_gravity;
    if (u.si()) {
      u.length = 0.3048;
      u.diameter = 304.8;
      u.power = 0.7457;
      u.pressure_units = pressure_units_text_ == "KPA" ? PressureUnits::kpa : PressureUnits::meters;
      u.pressure = u.pressure_units == PressureUnits::kpa ? 6.895 * 0.4333 * sg : 0.3048 * sg;
    } else {
      u.length = 1.0;
      u.diameter = 12.0;
      u.power = 1.0;
      u.pressure_units = PressureUnits::psi;
      u.pressure = 0.4333 * sg;
    }
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

  void convert_nodes() {
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
  void convert_tank(Node& tank) {
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

  double convert_valve_setting(LinkType type, double setting) const {
    if (setting == kMissing) return setting;
    if (type == LinkType::fcv) return setting / net_.units.flow;
    if (type == LinkType::prv || type == LinkType::psv || type == LinkType::pbv)
      return setting / net_.units.pressure;
    return setting;
  }

  void convert_links() {
    const UnitSystem& u = net_.units;
    for (Link& link : net_.links) {
      if (link.type == LinkType::pump) continue;
      link.diameter /= u.diameter;
      link.length /= u.length;
      if (link.type == LinkType::pipe || link.type == LinkType::cv_pipe) {
        if (net_.options.formula == HeadlossFormula::darcy_weisbach)
          link.roughness /= 1000.0 * u.length;
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
  void set_pump_curve(int k) {
    Link& link = net_.links[k];
    Pump& pump = net_.pumps[link.pump];
    const UnitSystem& u = net_.units;
    if (pump.type == PumpCurveType::constant_power) {
      pump.h0 = 0;
      pump.r = -8.814 * pump.power / u.power;  // kW -> hp in SI
      pump.n = -1;
      pump.max_head = 1e10;
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
  }

  void convert_controls() {
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

  void finish() {
    adjust_times();
    if (net_.nodes.empty()) fail(0, "the network has no nodes");
    if (net_.junction_count == static_cast<int>(net_.nodes.size()))
      fail(0, "the network has no reservoir or tank (EPANET error 224)");
    // EPANET accepts PRESSURE EXPONENT 0 in a file and then computes NaN heads under PDA (its
    // demand function divides by the exponent); its EN_setdemandmodel refuses it: so does netsolve.
    if (const std::string pda = pda_limits_error(net_.options.demand); !pda.empty())
      fail(0, "DEMAND MODEL PDA: " + pda);
    set_units();
    convert_nodes();
    convert_links();
    convert_controls();
    for (const Pattern& p : net_.patterns)
      if (p.factors.empty()) net_.notes.push_back("pattern " + p.id + " has no factors");
  }
};

}  // namespace

Network parse_inp(std::istream& in, const std::string& name) { return InpReader(name).read(in); }

Network read_inp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 0, "cannot open network file");
  return parse_inp(in, path);
}

}  // namespace cgs::net
