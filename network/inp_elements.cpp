// The .inp reader (inp_reader_impl.hpp): junctions, reservoirs, tanks, pipes, pumps, valves,
// [DEMANDS], [EMITTERS] and [STATUS].
#include <algorithm>
#include <cmath>
#include <optional>

#include "network/inp_reader_impl.hpp"

namespace cgs::net::inp {

int InpReader::add_node(const Record& r, NodeType type) {
  return append(new_element(r, type, "node", net_.node_index, net_.nodes), net_.node_index,
                net_.nodes);
}

void InpReader::read_junction(const Record& r) {
  need(r, 2, "ID and elevation");
  int n = add_node(r, NodeType::junction);
  Node& node = net_.nodes[n];
  node.elevation = number(r, 1, "elevation");
  Demand d;
  if (r.tokens.size() > 2) d.base = number(r, 2, "demand");
  if (r.tokens.size() > 3) d.pattern = pattern_ref(r, 3);
  node.demands.push_back(d);
}

void InpReader::read_fixed_head_node(const Record& r) {
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

int InpReader::add_link(const Record& r, LinkType type) {
  need(r, 3, "ID, start node and end node");
  Link link = new_element(r, type, "link", net_.link_index, net_.links);
  link.from = node_ref(r, 1);
  link.to = node_ref(r, 2);
  if (link.from == link.to) fail(r.line, "link '" + link.id + "' starts and ends at the same node");
  return append(std::move(link), net_.link_index, net_.links);
}

void InpReader::read_link(const Record& r) {
  if (r.section == Section::pipes)
    read_pipe(r);
  else if (r.section == Section::pumps)
    read_pump(r);
  else
    read_valve(r);
}

void InpReader::read_pipe(const Record& r) {
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

void InpReader::read_pump(const Record& r) {
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

void InpReader::read_valve(const Record& r) {
  need(r, 6, "ID, nodes, diameter, type and setting");
  const std::string type = upper(r.tokens[4]);
  static const std::map<std::string, LinkType> types = {
      {"PRV", LinkType::prv}, {"PSV", LinkType::psv}, {"PBV", LinkType::pbv},
      {"FCV", LinkType::fcv}, {"TCV", LinkType::tcv}, {"GPV", LinkType::gpv},
      {"PCV", LinkType::pcv}};
  auto it = types.find(type);
  if (it == types.end()) {
    fail(r.line, "illegal option value (EPANET error 213): valve type '" + r.tokens[4] +
                     "' (PRV, PSV, PBV, FCV, TCV, GPV, PCV)");
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
  if (valve.type == LinkType::pcv && r.tokens.size() > 7) {
    // As EPANET's valvedata: the curve of Kv (as % of the fully open Kv) against % open, and a
    // setting held to 100% open (only where a curve is given).
    valve.valve_curve = curve_ref(r, 7);
    valve.setting = std::min(valve.setting, 100.0);
  }
  valve.pcv_setting = valve.setting;
  valve.status = LinkStatus::active;
  const bool pressure_or_flow_valve =
      valve.type == LinkType::prv || valve.type == LinkType::psv || valve.type == LinkType::fcv;
  if (pressure_or_flow_valve && (!net_.is_junction(valve.from) || !net_.is_junction(valve.to)))
    fail(r.line, "valve '" + valve.id + "' connects a tank or reservoir (EPANET error 219)");
  net_.valves.push_back(k);
}

// EPANET 2.3's leakagedata: `pipe area expansion`; a link that is not a pipe is ignored.
void InpReader::read_leakage(const Record& r) {
  if (r.tokens.size() < 3) fail(r.line, "syntax error (EPANET error 201): pipe, area and expansion");
  Link& link = net_.links[link_ref(r, 0)];
  if (link.type != LinkType::pipe && link.type != LinkType::cv_pipe) return;
  const double area = number(r, 1, "leak area"), expansion = number(r, 2, "leak expansion");
  if (area < 0 || expansion < 0)
    fail(r.line, "illegal leakage value (EPANET error 209): must not be negative");
  link.leak_area = area;
  link.leak_expansion = expansion;
}

void InpReader::read_demand(const Record& r) {
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

void InpReader::read_emitter(const Record& r) {
  need(r, 2, "junction ID and coefficient");
  int n = node_ref(r, 0);
  double k = number(r, 1, "emitter coefficient");
  if (k < 0) fail(r.line, "emitter coefficient must not be negative");
  if (net_.is_junction(n)) net_.nodes[n].emitter = k;
}

void InpReader::read_status(const Record& r) {
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
      link.pcv_setting = value;
      link.status = LinkStatus::active;
    } else if (*status != LinkStatus::active) {
      link.setting = kMissing;
      link.status = *status;
    }
  }
}

}  // namespace cgs::net::inp
