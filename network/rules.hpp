// Rule-based controls ([RULES]) as EPANET's rules.c evaluates them during the time stepping: at
// each rule time step the premises are checked on the current state (junction heads of the last
// solution, tank levels of the step so far), and the actions of every rule whose premises hold
// (THEN) or fail (ELSE, when it has one) are taken; a link named by several rules takes the action
// of the highest PRIORITY (the first rule among equals).
#pragma once

#include "network/hydraulics.hpp"
#include "network/network.hpp"

namespace cgs::net {

class RuleEngine {
 public:
  explicit RuleEngine(const Network& net) : net_(net) {}
  bool empty() const { return net_.rules.empty(); }
  // EPANET's checkrules at `time`, closing an interval of `dt` seconds (TIME and CLOCKTIME
  // premises with = or <> hold when their time falls in it). Returns how many links changed.
  // on_action: each link changed, with the index of the rule that changed it.
  using ActionObserver = std::function<void(int link, int rule)>;
  int check(GradientAlgorithm& state, long time, long dt,
            const ActionObserver* on_action = nullptr) const;

 private:
  const Network& net_;
  bool premises_hold(const GradientAlgorithm& state, const Rule& rule, long time, long dt) const;
  bool premise_holds(const GradientAlgorithm& state, const RulePremise& p, long time,
                     long dt) const;
  bool time_holds(const RulePremise& p, long time, long dt) const;
  bool value_holds(const GradientAlgorithm& state, const RulePremise& p) const;
  bool take(GradientAlgorithm& state, const RuleAction& a) const;
};

}  // namespace cgs::net
