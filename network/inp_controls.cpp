// The .inp reader (inp_reader_impl.hpp): [PATTERNS], [CURVES], [CONTROLS] and [RULES].
#include <algorithm>
#include <cmath>

#include "network/epanet_time.hpp"
#include "network/inp_reader_impl.hpp"

namespace cgs::net::inp {

void InpReader::read_pattern(const Record& r) {
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

void InpReader::read_curve(const Record& r) {
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

void InpReader::read_control(const Record& r) {
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

// EPANET's findmatch: the first keyword the word begins with, or -1.
int InpReader::find_keyword(const std::string& word, const std::vector<const char*>& keywords) {
  for (std::size_t i = 0; i < keywords.size(); ++i)
    if (starts_with_keyword(word, keywords[i])) return static_cast<int>(i);
  return -1;
}

void InpReader::read_rules() {
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

std::string InpReader::rule_label() const {
  return net_.rules.empty() ? std::string("(none)") : net_.rules.back().label;
}

// IF/AND/OR <object> <id> <variable> <relation> <value>, or SYSTEM <variable> <relation>
// <value> [unit].
void InpReader::add_premise(const Record& r, bool or_) {
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

void InpReader::read_premise_value(const Record& r, RulePremise& p, const std::string& where) {
  const auto& t = r.tokens;
  if (p.variable == RuleVariable::time || p.variable == RuleVariable::clocktime) {
    const double hours = epanet_hours(t[4], t.size() == 6 ? t[5] : "");
    if (!(hours >= 0)) fail(r.line, "invalid time '" + t[4] + "'" + where + " (EPANET error 202)");
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
void InpReader::add_action(const Record& r, bool then_branch) {
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

}  // namespace cgs::net::inp
