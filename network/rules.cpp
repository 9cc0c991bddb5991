#include "network/rules.hpp"

#include <cmath>
#include <vector>

namespace cgs::net {
namespace {

constexpr double kTolerance = 1e-3;  // EPANET compares rule values to within 0.001
constexpr double kTiny = 1e-6;

// EPANET's view of a link's status in rules: closed, active, or else open.
RuleState state_of(LinkStatus s) {
  if (is_closed(s)) return RuleState::closed;
  return s == LinkStatus::active ? RuleState::active : RuleState::open;
}

bool compare(double x, RuleRelation relation, double value) {
  switch (relation) {
    case RuleRelation::eq: return !(std::abs(x - value) > kTolerance);
    case RuleRelation::ne: return !(std::abs(x - value) < kTolerance);
    case RuleRelation::lt: return !(x > value + kTolerance);
    case RuleRelation::le: return !(x > value - kTolerance);
    case RuleRelation::gt: return !(x < value - kTolerance);
    case RuleRelation::ge: return !(x < value + kTolerance);
  }
  return false;
}

}  // namespace

int RuleEngine::check(GradientAlgorithm& state, long time, long dt,
                      const ActionObserver* on_action) const {
  // The action list: one action per link, from the highest-priority rule naming it.
  struct Item {
    const RuleAction* action;
    const Rule* rule;
  };
  std::vector<Item> actions;
  auto add = [&](const Rule& rule, const std::vector<RuleAction>& list) {
    for (const RuleAction& a : list) {
      bool listed = false;
      for (Item& item : actions) {
        if (item.action->link != a.link) continue;
        listed = true;
        if (rule.priority > item.rule->priority) item = {&a, &rule};
        break;
      }
      if (!listed) actions.push_back({&a, &rule});
    }
  };
  for (const Rule& rule : net_.rules) {
    if (premises_hold(state, rule, time, dt))
      add(rule, rule.then_actions);
    else if (!rule.else_actions.empty())
      add(rule, rule.else_actions);
  }
  // EPANET pushes each action to the front of its list and takes them from the front: the last
  // listed first (one action per link, so the order shows only in the report's lines).
  int changed = 0;
  for (auto it = actions.rbegin(); it != actions.rend(); ++it) {
    const Item& item = *it;
    if (!take(state, *item.action)) continue;
    ++changed;
    if (on_action) (*on_action)(item.action->link, static_cast<int>(item.rule - net_.rules.data()));
  }
  return changed;
}

// EPANET's evalpremises: AND binds to the result so far (a false one ends the rule), OR can only
// turn a false result true.
bool RuleEngine::premises_hold(const GradientAlgorithm& state, const Rule& rule, long time,
                               long dt) const {
  bool result = true;
  for (const RulePremise& p : rule.premises) {
    if (p.or_) {
      if (!result) result = premise_holds(state, p, time, dt);
    } else {
      if (!result) return false;
      result = premise_holds(state, p, time, dt);
    }
  }
  return result;
}

bool RuleEngine::premise_holds(const GradientAlgorithm& state, const RulePremise& p, long time,
                               long dt) const {
  if (p.variable == RuleVariable::time || p.variable == RuleVariable::clocktime)
    return time_holds(p, time, dt);
  if (p.state != RuleState::none) {
    const RuleState s = state_of(state.status(p.index));
    if (p.relation == RuleRelation::eq) return s == p.state;
    if (p.relation == RuleRelation::ne) return s != p.state;
    return false;
  }
  return value_holds(state, p);
}

// EPANET's checktime: inequalities against the time now; = and <> against the interval
// (time - dt, time] just stepped over (wrapping at midnight for clock times).
bool RuleEngine::time_holds(const RulePremise& p, long time, long dt) const {
  const long first = time - dt + 1;
  long t1 = first, t2 = time;
  if (p.variable == RuleVariable::clocktime) {
    t1 = (first + net_.times.start_clocktime) % 86400;
    t2 = (time + net_.times.start_clocktime) % 86400;
  }
  const long x = static_cast<long>(p.value);
  switch (p.relation) {
    case RuleRelation::lt: return t2 < x;
    case RuleRelation::le: return t2 <= x;
    case RuleRelation::gt: return t2 > x;
    case RuleRelation::ge: return t2 >= x;
    case RuleRelation::eq:
    case RuleRelation::ne: {
      const bool inside = t2 < t1 ? (x >= t1 || x <= t2) : (x >= t1 && x <= t2);
      return p.relation == RuleRelation::eq ? inside : !inside;
    }
  }
  return false;
}

// EPANET's checkvalue: the variable in the file's units, against the premise's value.
bool RuleEngine::value_holds(const GradientAlgorithm& state, const RulePremise& p) const {
  const UnitSystem& u = net_.units;
  const int i = p.index;
  double x = 0;
  switch (p.variable) {
    case RuleVariable::demand:
      x = (p.object == RuleObject::system ? state.system_demand() : state.node_demand(i)) * u.flow;
      break;
    case RuleVariable::head:
    case RuleVariable::grade: x = state.head(i) * u.length; break;
    case RuleVariable::pressure: x = (state.head(i) - net_.nodes[i].elevation) * u.pressure; break;
    case RuleVariable::level: x = (state.head(i) - net_.nodes[i].elevation) * u.length; break;
    case RuleVariable::flow: x = std::abs(state.flow(i)) * u.flow; break;
    case RuleVariable::setting: {
      x = state.setting(i);
      if (x == kMissing) return false;
      const LinkType type = net_.links[i].type;
      if (type == LinkType::prv || type == LinkType::psv || type == LinkType::pbv) x *= u.pressure;
      if (type == LinkType::fcv) x *= u.flow;
      break;
    }
    case RuleVariable::filltime:
    case RuleVariable::draintime: {
      const Node& tank = net_.nodes[i];
      const double q = state.node_demand(i);
      if (tank.type != NodeType::tank) return false;
      if (p.variable == RuleVariable::filltime) {
        if (q <= kTiny) return false;
        x = (tank.max_volume - state.volume(i)) / q;
      } else {
        if (q >= -kTiny) return false;
        x = (tank.min_volume - state.volume(i)) / q;
      }
      break;
    }
    default: return false;  // STATUS compared with a number, POWER: never true in EPANET
  }
  return compare(x, p.relation, p.value);
}

// EPANET's takeactions for one action: open or close, or a new setting when it differs by more
// than 0.001 (in the file's units). True when the link changed.
bool RuleEngine::take(GradientAlgorithm& state, const RuleAction& a) const {
  const int k = a.link;
  const LinkStatus s = state.status(k);
  if (a.state == RuleState::open && is_closed(s)) {
    state.set_link_open(k, true);
    return true;
  }
  if (a.state == RuleState::closed && !is_closed(s)) {
    state.set_link_open(k, false);
    return true;
  }
  if (a.setting == kMissing) return false;
  double x = a.setting;
  const LinkType type = net_.links[k].type;
  if (type == LinkType::prv || type == LinkType::psv || type == LinkType::pbv)
    x /= net_.units.pressure;
  if (type == LinkType::fcv) x /= net_.units.flow;
  if (std::abs(x - state.setting(k)) <= kTolerance) return false;
  state.set_link_setting(k, x);
  return true;
}

}  // namespace cgs::net
