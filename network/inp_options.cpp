// The .inp reader (inp_reader_impl.hpp): [OPTIONS] and [TIMES].
#include <algorithm>
#include <cmath>

#include "network/epanet_time.hpp"
#include "network/inp_reader_impl.hpp"

namespace cgs::net::inp {

namespace {

// Where EPANET reads an option's value (optionchoice, optionvalue: PRESSURE EXPONENT, DEMAND
// MODEL and the two-word numeric options at the third token): a line that ends before it
// changes nothing there (both return 0 when the value is missing).
std::size_t value_position(const std::span<const std::string>& t, const std::string& key) {
  auto is = [&](const char* prefix) { return starts_with_keyword(key, prefix); };
  if (is("PRESSURE")) return t.size() > 1 && starts_with_keyword(t[1], "EXP") ? 2 : 1;
  if (is("DEMAND") || is("SPEC") || is("EMIT") || is("MINI") || is("REQ") || is("PREC") ||
      is("BACK") || is("HYDR"))
    return 2;
  return 1;
}

}  // namespace

// An [OPTIONS] line's value i as a number, named by its keyword in errors.
double InpReader::option_value(const Record& r, std::size_t i) const {
  return number(r, i, "option " + upper(r.tokens[0]));
}

// Counts are read as numbers and truncated, as EPANET does, within limits that keep the trial
// loop's int arithmetic (trials + extra trials, trial + CHECKFREQ) from overflowing.
int InpReader::option_count(const Record& r, std::size_t i, int min, const char* what) const {
  const double v = option_value(r, i);
  if (!(v >= min && v <= kMaxCount))
    fail(r.line, std::string(what) + " must be between " + std::to_string(min) + " and " +
                     std::to_string(kMaxCount));
  return static_cast<int>(v);
}

std::string InpReader::option_word(const Record& r, std::size_t i) const {
  if (i >= r.tokens.size()) fail(r.line, "missing value for option " + upper(r.tokens[0]));
  return upper(r.tokens[i]);
}

void InpReader::read_option(const Record& r) {
  const auto& t = r.tokens;
  const std::string key = upper(t[0]);
  if (t.size() <= value_position(t, key)) {
    net_.notes.push_back("option " + key + " without a value: nothing changed (as EPANET)");
    return;
  }
  auto count = [&](std::size_t i, int min, const char* what) {
    return option_count(r, i, min, what);
  };
  auto word = [&](std::size_t i) { return option_word(r, i); };
  auto& o = net_.options;
  // EPANET's keywords are prefixes (text.h: "UNIT", "ACCU", "TRIAL", ...), tried in the order of
  // its optionchoice and then optionvalue.
  auto is = [&](const char* prefix) { return starts_with_keyword(key, prefix); };
  if (is("UNIT")) {
    flow_units_text_ = word(1);
    flow_units_line_ = r.line;
  } else if (is("PRESSURE") && t.size() > 1 && starts_with_keyword(t[1], "EXP")) {
    pda_value(r, set_pressure_exponent);
  } else if (is("PRESSURE")) {
    pressure_units_text_ = upper(t[1]);
    pressure_units_line_ = r.line;
  } else if (is("HEADL")) {
    const std::string f = word(1);
    if (starts_with_keyword(f, "H-W"))
      o.formula = HeadlossFormula::hazen_williams;
    else if (starts_with_keyword(f, "D-W"))
      o.formula = HeadlossFormula::darcy_weisbach;
    else if (starts_with_keyword(f, "C-M"))
      o.formula = HeadlossFormula::chezy_manning;
    else
      fail(r.line, "invalid option value (EPANET error 213): HEADLOSS " + t[1] +
                       " (H-W, D-W or C-M)");
  } else if (is("HYDR")) {
    fail(r.line, "HYDRAULICS USE/SAVE files are not supported");
  } else if (read_quality_option(r, key)) {
    return;
  } else if (is("MAP") || is("VERI") || is("SEGM") || is("PREC")) {
    net_.notes.push_back("option " + key + " ignored (no effect on the results)");
  } else if (is("UNBA")) {
    const std::string w = word(1);
    if (starts_with_keyword(w, "STOP"))
      o.extra_trials = -1;
    else if (starts_with_keyword(w, "CONT"))
      o.extra_trials = t.size() > 2 ? count(2, 0, "UNBALANCED CONTINUE") : 0;
    else
      fail(r.line, "invalid option value (EPANET error 213): UNBALANCED " + t[1] +
                       " (STOP or CONTINUE [n])");
  } else if (is("PATT")) {
    if (t.size() > 1) o.default_pattern_id = t[1];
  } else if (is("DEMAND") && t.size() > 2 && starts_with_keyword(t[1], "MODEL")) {
    read_demand_model(r);
  } else if (is("BACK")) {  // BACKFLOW ALLOWED YES|NO (emitters)
    if (t.size() > 2) o.emitter_backflow = starts_with_keyword(t[2], "YES");
  } else if (read_numeric_option(r, key)) {
    return;
  } else if (t.size() < 2 || !is_number(t[1])) {
    // optionvalue reads the value first: a word there is error 202, a number 201 (syntax).
    fail(r.line, "illegal numeric value (EPANET error 202): unknown option " + t[0]);
  } else {
    fail(r.line, "syntax error (EPANET error 201): unknown option " + t[0]);
  }
}

// optionvalue's keywords (after optionchoice's, in read_option): false where `key` is none.
bool InpReader::read_numeric_option(const Record& r, const std::string& key) {
  const auto& t = r.tokens;
  auto& o = net_.options;
  auto is = [&](const char* prefix) { return starts_with_keyword(key, prefix); };
  auto value = [&](std::size_t i) { return option_value(r, i); };
  auto count = [&](std::size_t i, int min, const char* what) {
    return option_count(r, i, min, what);
  };
  auto word = [&](std::size_t i) { return option_word(r, i); };
  // optionvalue's rule for all but a few: the value must be > 0, else its error 213.
  auto positive = [&](std::size_t i) {
    const double y = value(i);
    if (!(y > 0))
      fail(r.line, "invalid option value (EPANET error 213): " + key + " " + t[i] + " (must be > 0)");
    return y;
  };
  auto not_negative = [&](std::size_t i) {  // FLOWCHANGE, HEADERROR: < 0 is error 213
    const double y = value(i);
    if (y < 0)
      fail(r.line, "invalid option value (EPANET error 213): " + key + " " + t[i] + " (must be >= 0)");
    return y;
  };
  if (is("DAMPLIMIT")) {
    o.damp_limit = value(1);
  } else if (is("FLOWCHANGE")) {
    o.flow_change_limit = not_negative(1);
  } else if (is("HEADERROR")) {
    o.head_error_limit = not_negative(1);
  } else if (is("MINI")) {
    pda_value(r, set_minimum_pressure);
  } else if (is("REQ")) {
    pda_value(r, set_required_pressure);
  } else if (is("VISC")) {
    viscosity_input_ = positive(1);
  } else if (is("SPEC")) {
    o.specific_gravity = positive(2);
  } else if (is("TRIAL")) {
    o.max_trials = count(1, 1, "TRIALS");
  } else if (is("ACCU")) {
    // As EPANET's optionvalue: > 0, then held within [1e-5, 0.1] (a tighter one cannot be met in
    // double: the trials would stall at the limit and stop unbalanced).
    o.accuracy = std::clamp(positive(1), 1e-5, 1e-1);
  } else if (is("HTOL")) {
    o.head_tolerance = positive(1);  // as EPANET: internal units (ft), not converted
  } else if (is("QTOL")) {
    o.flow_tolerance = positive(1);  // cfs
  } else if (is("RQTOL")) {
    o.rq_tolerance = positive(1);
    if (o.rq_tolerance >= 1)
      fail(r.line, "invalid option value (EPANET error 213): RQTOL " + t[1] + " (must be < 1)");
  } else if (is("CHECKFREQ")) {
    o.check_frequency = count(1, 0, "CHECKFREQ");
  } else if (is("MAXCHECK")) {
    o.max_check = count(1, 0, "MAXCHECK");
  } else if (is("EMIT")) {
    if (t.size() > 1 && starts_with_keyword(t[1], "BACK"))  // EMITTER BACKFLOW YES|NO
      o.emitter_backflow = word(2) == "YES";
    else
      emitter_exponent_input_ = positive(2);
  } else if (is("DEMAND")) {  // DEMAND MULTIPLIER
    o.demand_multiplier = positive(2);
  } else {
    return false;
  }
  return true;
}

// DEMAND MODEL DDA|PDA, matched by prefix as EPANET's findmatch.
void InpReader::read_demand_model(const Record& r) {
  need(r, 3, "DEMAND MODEL DDA or PDA");
  DemandModelOptions& d = net_.options.demand;
  if (starts_with_keyword(r.tokens[2], "DDA"))
    d.model = DemandModel::dda;
  else if (starts_with_keyword(r.tokens[2], "PDA"))
    d.model = DemandModel::pda;
  else
    fail(r.line,
         "invalid option value (EPANET error 213): DEMAND MODEL " + r.tokens[2] + " (DDA or PDA)");
}

void InpReader::pda_value(const Record& r, PdaSetter set) {
  // The option's name from the tokens there are: a bare "MINIMUM" has no second one (its
  // message once read past the record, found by fuzz_eps).
  const std::string name =
      r.tokens.size() > 1 ? upper(r.tokens[0]) + " " + upper(r.tokens[1]) : upper(r.tokens[0]);
  need(r, 3, name + " value");
  const std::string error = set(net_.options.demand, number(r, 2, "option " + upper(r.tokens[0])));
  if (!error.empty()) fail(r.line, error);
}

// [ENERGY] as EPANET's energydata reads it (GLOBAL|PUMP id PRICE|PATTERN|EFFIC value, DEMAND
// CHARGE value), with its errors 201, 202, 205, 206, 213, 216, 217; a later line overrides an
// earlier one. The values feed network/energy.hpp's meter.
void InpReader::read_energy(const Record& r) {
  const auto& t = r.tokens;
  const std::size_t n = t.size();
  auto error = [&](int code, const std::string& what) {
    fail(r.line, what + " (EPANET error " + std::to_string(code) + ") in [ENERGY]");
  };
  auto value = [&](std::size_t i, int code) {
    double y = 0;
    if (!parse_number(t[i], y)) error(202, "illegal numeric value " + t[i]);
    if (code == 217 ? !(y > 0) : y < 0) error(code, "invalid value " + t[i]);
    return y;
  };
  if (n < 3) error(201, "syntax error");
  if (starts_with_keyword(t[0], "DEMAN")) {
    net_.energy.demand_charge = value(2, 213);
    return;
  }
  const bool global = starts_with_keyword(t[0], "GLOBAL");
  if (!global && !starts_with_keyword(t[0], "PUMP")) error(213, "invalid keyword " + t[0]);
  Pump* pump = nullptr;
  if (!global) {
    if (n < 4) error(201, "syntax error");
    const int k = net_.find_link(t[1]);
    if (k < 0 || net_.links[k].type != LinkType::pump) error(216, "undefined pump " + t[1]);
    pump = &net_.pumps[net_.links[k].pump];
  }
  const std::string& what = t[n - 2];
  if (starts_with_keyword(what, "PRICE")) {
    double y = 0;
    if (!parse_number(t[n - 1], y)) error(202, "illegal numeric value " + t[n - 1]);
    if (y < 0) error(217, "invalid value " + t[n - 1]);
    (pump ? pump->price : net_.energy.price) = y;
  } else if (starts_with_keyword(what, "PATT")) {
    (pump ? pump->price_pattern : net_.energy.price_pattern) =
        pattern_or(r, n - 1, 205, "[ENERGY]");
  } else if (starts_with_keyword(what, "EFFI")) {
    if (pump)
      pump->efficiency_curve = curve_or(r, n - 1, 206, "[ENERGY]");
    else
      net_.energy.efficiency = value(n - 1, 217);
  } else {
    error(201, "syntax error");
  }
}

// [TIMES] as EPANET's timedata: the value is the last token when it is a number or a time
// (h:mm[:ss]), else the token before it with the last as its unit; rounded to the second.
void InpReader::read_time(const Record& r) {
  const auto& t = r.tokens;
  if (t.size() < 2) fail(r.line, "missing value in [TIMES]");
  if (starts_with_keyword(t[0], "STAT")) return read_statistic(r);
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
  else if (starts_with_keyword(t[0], "QUAL"))
    quality_step_ = seconds;
  else if (starts_with_keyword(t[0], "MINI"))
    return;  // MINIMUM TRAVELTIME: not used by EPANET 2.3 either
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

// STATISTIC NONE|NO|AVERAGE|MINIMUM|MAXIMUM|RANGE (the last token, by prefix as EPANET's
// timedata matches it; another word is its error 213).
void InpReader::read_statistic(const Record& r) {
  using S = TimeOptions::Statistic;
  static const std::pair<const char*, S> words[] = {{"NONE", S::series},    {"NO", S::series},
                                                    {"AVERAGE", S::average}, {"MINIMUM", S::minimum},
                                                    {"MAXIMUM", S::maximum}, {"RANGE", S::range}};
  const std::string& word = r.tokens.back();
  for (const auto& [keyword, statistic] : words)
    if (starts_with_keyword(word, keyword)) {
      net_.times.statistic = statistic;
      return;
    }
  fail(r.line, "invalid option value (EPANET error 213): STATISTIC " + word +
                   " (NONE, AVERAGE, MINIMUM, MAXIMUM or RANGE)");
}

// EPANET's adjustdata for the time steps.
void InpReader::adjust_times() {
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

}  // namespace cgs::net::inp
