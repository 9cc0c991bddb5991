// The .inp reader's one class, InpReader (inp_reader.hpp is its interface), its methods in one
// file per group of sections: inp_reader.cpp (the records, units and derived values),
// inp_options.cpp ([OPTIONS], [TIMES]), inp_elements.cpp (nodes, links, [DEMANDS], [EMITTERS],
// [STATUS]) and inp_controls.cpp ([PATTERNS], [CURVES], [CONTROLS], [RULES]).
#pragma once

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "formats/types.hpp"
#include "network/network.hpp"

namespace cgs::net::inp {

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
  sources,    // water quality (network/quality/inp_quality.cpp)
  quality,    // [QUALITY]: initial qualities
  reactions,
  mixing,
  energy,     // prices, price patterns, efficiencies, demand charge (network/energy.hpp)
  report,     // how the report file is shaped (network/inp_report.cpp)
  leakage,    // EPANET 2.3's pipe leakage (LEAK_AREA, LEAK_EXPANSION per pipe)
  end
};

struct Record {
  Section section;
  long line;
  std::span<const std::string> tokens;  // into InpReader::tokens_
  std::size_t first = 0;                // where they start there
};

inline std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// EPANET matches keywords by prefix, case-insensitively ("[JUNCTIONS]" and "[JUNC" are alike).
inline bool starts_with_keyword(const std::string& token, const std::string& keyword) {
  return upper(token).rfind(keyword, 0) == 0;
}

// Limits that keep arithmetic on values from the file defined: counts of trials and checks,
// and time values (about 114,000 years, in seconds far inside a long).
constexpr int kMaxCount = 100'000'000;
constexpr double kMaxHours = 1e9;

class InpReader {
 public:
  explicit InpReader(std::string name) { net_.source = std::move(name); }

  Network read(std::istream& in);

 private:
  Network net_;
  std::vector<std::string> tokens_;  // of every record, in file order
  std::vector<Record> records_;
  std::map<int, long> pump_curve_line_;
  std::vector<bool> demands_replaced_;
  std::string flow_units_text_ = "GPM", pressure_units_text_;  // empty: the system's default
  long flow_units_line_ = 0;  // where UNITS was given (0: the default)
  long pressure_units_line_ = 0;
  double viscosity_input_ = kMissing;
  long rule_step_ = 0;  // RULE TIMESTEP as given (0: a tenth of the hydraulic step)
  double emitter_exponent_input_ = 0.5;
  // Water quality as given, converted by finish_quality (EPANET's adjustdata, convertunits).
  std::string trace_node_id_;
  long quality_option_line_ = 0;
  double diffusivity_input_ = kMissing, tolerance_input_ = kMissing;
  long quality_step_ = 0;
  std::vector<double> link_bulk_, link_wall_, tank_bulk_;  // kMissing: the global coefficient

  [[noreturn]] void fail(long line, const std::string& message) const {
    throw InputError(net_.source, line, message);
  }

  // One pass over the whole text: every line's tokens go into one flat vector (no allocation per
  // line; BWSN_Network_2 has 60,000 lines), the records point into it.
  void split_into_records(std::istream& in);
  void reserve_indexes();

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

  // `what` names the field in the error (a view: no string is made on the way that succeeds).
  double number(const Record& r, std::size_t i, std::string_view what) const {
    if (i >= r.tokens.size()) fail(r.line, "missing " + std::string(what));
    const std::string& s = r.tokens[i];
    double v = 0;
    if (!parse_number(s, v) || !std::isfinite(v))
      fail(r.line, "bad number '" + s + "' for " + std::string(what));
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
  void need(const Record& r, std::size_t count, std::string_view what) const {
    if (r.tokens.size() < count) fail(r.line, "missing fields: expected " + std::string(what));
  }

  // A new node or link (`what`) named by the ID its line begins with, unused among its kind.
  template <typename Element, typename Type>
  Element new_element(const Record& r, Type type, const char* what, const IdIndex& index,
                      const std::vector<Element>& elements) const {
    const int found = index.find(r.tokens[0]);
    if (found >= 0)
      fail(r.line, std::string("duplicate ") + what + " ID '" + r.tokens[0] +
                       "' (first defined on line " +
                       std::to_string(elements[std::size_t(found)].line) + ")");
    Element e;
    e.id = r.tokens[0];
    e.type = type;
    e.line = r.line;
    return e;
  }
  // Appends it under its ID; its index.
  template <typename Element>
  static int append(Element e, IdIndex& index, std::vector<Element>& elements) {
    index.insert(e.id, static_cast<int>(elements.size()));
    elements.push_back(std::move(e));
    return static_cast<int>(elements.size()) - 1;
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
  // The same with EPANET's error code and section in the message (the checked-only sections).
  // Both return the index found.
  int pattern_or(const Record& r, std::size_t i, int code, const char* section) const {
    for (std::size_t p = 0; p < net_.patterns.size(); ++p)
      if (net_.patterns[p].id == r.tokens[i]) return static_cast<int>(p);
    fail(r.line, "undefined pattern " + r.tokens[i] + " (EPANET error " + std::to_string(code) +
                     ") in " + section);
  }
  int curve_or(const Record& r, std::size_t i, int code, const char* section) const {
    for (std::size_t c = 0; c < net_.curves.size(); ++c)
      if (net_.curves[c].id == r.tokens[i]) return static_cast<int>(c);
    fail(r.line, "undefined curve " + r.tokens[i] + " (EPANET error " + std::to_string(code) +
                     ") in " + section);
  }
  int curve_ref(const Record& r, std::size_t i) const {
    for (std::size_t c = 0; c < net_.curves.size(); ++c)
      if (net_.curves[c].id == r.tokens[i]) return static_cast<int>(c);
    fail(r.line, "unknown curve '" + r.tokens[i] + "'");
  }

  // ---- [OPTIONS] and [TIMES] ------------------------------------------------------------------
  void read_option(const Record& r);
  bool read_numeric_option(const Record& r, const std::string& key);
  double option_value(const Record& r, std::size_t i) const;
  int option_count(const Record& r, std::size_t i, int min, const char* what) const;
  std::string option_word(const Record& r, std::size_t i) const;
  bool read_quality_option(const Record& r, const std::string& key);
  void read_energy(const Record& r);
  // ---- [REPORT] (inp_report.cpp) -------------------------------------------------------------
  void read_report();
  void read_report_line(const Record& r);
  void read_report_selection(const Record& r, bool nodes);
  bool read_report_field(const Record& r);
  void read_demand_model(const Record& r);
  // MINIMUM PRESSURE, REQUIRED PRESSURE, PRESSURE EXPONENT: the value is the third token; EPANET's
  // rules for it (and its errors 213, 208) are network.hpp's, shared with netsolve's flags.
  using PdaSetter = std::string (*)(DemandModelOptions&, double);
  void pda_value(const Record& r, PdaSetter set);
  void read_time(const Record& r);
  void read_statistic(const Record& r);
  void adjust_times();

  // ---- water quality (network/quality/inp_quality.cpp) -----------------------------------
  [[noreturn]] void quality_error(const Record& r, int code, const std::string& what,
                                  const char* section) const;
  // A node or link the line names, as EPANET finds it there: defined on an earlier line (its
  // readers go through the file once); -1 where not.
  int node_before(const Record& r, std::size_t i) const;
  int link_before(const Record& r, std::size_t i) const;
  // The nodes (links) of an ID range "first last" (tokens at, at + 1) defined before the line
  // (from element `begin` on), as EPANET's
  // [QUALITY] and [REACTIONS] ranges: numerically where both are positive integers, else by
  // string comparison.
  template <typename Element, typename Fn>
  void for_range(const Record& r, std::size_t at, const std::vector<Element>& elements,
                 std::size_t begin, Fn&& fn) const;
  void prepare_quality();
  void read_initial_quality(const Record& r);
  void read_reaction(const Record& r);
  void read_reaction_coefficient(const Record& r, int item, double y);
  void read_source(const Record& r);
  void read_mixing(const Record& r);
  void finish_quality();

  // ---- [PATTERNS] and [CURVES] --------------------------------------------------------------
  void read_pattern(const Record& r);
  void read_curve(const Record& r);

  // ---- nodes --------------------------------------------------------------------------------
  int add_node(const Record& r, NodeType type);
  void read_junction(const Record& r);
  void read_fixed_head_node(const Record& r);

  // ---- links --------------------------------------------------------------------------------
  int add_link(const Record& r, LinkType type);
  void read_link(const Record& r);
  void read_pipe(const Record& r);
  void read_pump(const Record& r);
  void read_valve(const Record& r);

  // ---- [DEMANDS], [EMITTERS], [STATUS] ------------------------------------------------------
  void read_demand(const Record& r);
  void read_emitter(const Record& r);
  void read_status(const Record& r);
  void read_leakage(const Record& r);

  // ---- [CONTROLS] ---------------------------------------------------------------------------
  void read_control(const Record& r);

  // ---- [RULES] (EPANET's rules.c: ruledata, newpremise, newaction, newpriority) -------------
  enum class RuleClause { rule, if_, and_, or_, then_, else_, priority };
  static int find_keyword(const std::string& word, const std::vector<const char*>& keywords);
  void read_rules();
  std::string rule_label() const;
  void add_premise(const Record& r, bool or_);
  void read_premise_value(const Record& r, RulePremise& p, const std::string& where);
  void add_action(const Record& r, bool then_branch);

  // ---- units and derived values -------------------------------------------------------------
  void set_units();
  void set_pressure_units();
  void convert_nodes();
  void convert_tank(Node& tank);
  double convert_valve_setting(LinkType type, double setting) const;
  void convert_links();
  void set_pump_curve(int k);
  void convert_controls();
  void finish();
};

}  // namespace cgs::net::inp
