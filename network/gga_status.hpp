// The gradient algorithm's status rules (EPANET's hydstatus.c), for the host and the device:
// gga.hpp says which function decides what.
#pragma once

#include "network/gga_state.hpp"

namespace cgs::net::gga {

// ---- status rules (EPANET's hydstatus.c) -------------------------------------------------------
// EPANET's prvstatus and psvstatus: the next status of a pressure-reducing (sustaining) valve from
// its heads h1 (upstream) and h2, its target head hset, its fully open loss hml and its flow q.
CGS_HD LinkStatus prv_status(LinkStatus s, double h1, double h2, double hset, double hml, double q,
                             double htol, double qtol) {
  switch (s) {
    case LinkStatus::active:
      if (q < -qtol) return LinkStatus::closed;
      if (h1 - hml < hset - htol) return LinkStatus::open;
      return s;
    case LinkStatus::open:
      if (q < -qtol) return LinkStatus::closed;
      if (h2 >= hset + htol) return LinkStatus::active;
      return s;
    case LinkStatus::closed:
      if (h1 >= hset + htol && h2 < hset - htol) return LinkStatus::active;
      if (h1 < hset - htol && h1 > h2 + htol) return LinkStatus::open;
      return s;
    case LinkStatus::xpressure: return q < -qtol ? LinkStatus::closed : s;
    default: return s;
  }
}

CGS_HD LinkStatus psv_status(LinkStatus s, double h1, double h2, double hset, double hml, double q,
                             double htol, double qtol) {
  switch (s) {
    case LinkStatus::active:
      if (q < -qtol) return LinkStatus::closed;
      if (h2 + hml > hset + htol) return LinkStatus::open;
      return s;
    case LinkStatus::open:
      if (q < -qtol) return LinkStatus::closed;
      if (h1 < hset - htol) return LinkStatus::active;
      return s;
    case LinkStatus::closed:
      if (h2 > hset + htol && h1 > h2 + htol) return LinkStatus::open;
      if (h1 >= hset + htol && h1 > h2 + htol) return LinkStatus::active;
      return s;
    case LinkStatus::xpressure: return q < -qtol ? LinkStatus::closed : s;
    default: return s;
  }
}

// EPANET's valvestatus: the PRVs and PSVs with a setting; true where a status changed.
CGS_HD bool update_valve_status(const NetworkView& v, const State& s) {
  bool change = false;
  const double htol = v.o.head_tolerance, qtol = v.o.flow_tolerance;
  for (int j = 0; j < v.valve_count; ++j) {
    const int k = v.valves[j];
    if (s.setting[k] == kMissing) continue;
    const LinkType t = link_type(v, k);
    if (t != LinkType::prv && t != LinkType::psv) continue;
    const LinkStatus st = s.status(k);
    const double h1 = s.head[v.from[k]], h2 = s.head[v.to[k]];
    const double q = s.flow[k];
    const double hml = v.minor_loss[k] * q * q;  // head loss when fully open
    const LinkStatus next =
        t == LinkType::prv
            ? prv_status(st, h1, h2, v.elevation[v.to[k]] + s.setting[k], hml, q, htol, qtol)
            : psv_status(st, h1, h2, v.elevation[v.from[k]] + s.setting[k], hml, q, htol, qtol);
    s.status.set(k, next);
    change = change || next != st;
  }
  return change;
}

// EPANET's DAMPLIMIT: with a limit > 0, control valves are checked only once the relative flow
// change is at or below it, and from then on the next trial's flow changes are damped to 60%;
// EPANET's cvstatus: a check valve's next status from its head difference and flow.
CGS_HD LinkStatus check_valve_status(LinkStatus st, double dh, double q, double htol, double qtol) {
  if (fabs(dh) > htol) {
    if (dh < -htol) return LinkStatus::closed;
    if (q < -qtol) return LinkStatus::closed;
    return LinkStatus::open;
  }
  if (q < -qtol) return LinkStatus::closed;
  return st;
}

// EPANET 2.3's pumpstatus for an open pump: a constant-power pump with (almost) no flow is closed
// for the trial (TEMPCLOSED); any other pump is closed (XHEAD) when the head it must add exceeds
// its shutoff head at its speed.
CGS_HD LinkStatus pump_status(const NetworkView& v, const State& s, int k, double head_gain) {
  const int p = v.pump[k];
  double hmax = 1e10;  // EPANET's BIG for constant power
  if (static_cast<PumpCurveType>(v.pump_type[p]) == PumpCurveType::constant_power) {
    if (s.flow[k] < kTiny) return LinkStatus::temp_closed;
  } else {
    hmax = s.setting[k] * s.setting[k] * v.pump_max_head[p];
  }
  return head_gain > hmax + v.o.head_tolerance ? LinkStatus::xhead : LinkStatus::open;
}

// EPANET 2.3's fcvstatus: reverse head or flow makes the valve XFCV (an open valve); XFCV becomes
// active again once the flow reaches the setting; an active valve whose loss coefficient would
// have to be below the fully open one's cannot deliver its flow (XFCV).
CGS_HD LinkStatus fcv_status(const NetworkView& v, const State& s, int k, LinkStatus st) {
  const double h1 = s.head[v.from[k]], h2 = s.head[v.to[k]], q = s.flow[k];
  const double htol = v.o.head_tolerance, qtol = v.o.flow_tolerance;
  if (h1 - h2 < -htol) return LinkStatus::xfcv;
  if (q < -qtol) return LinkStatus::xfcv;
  if (st == LinkStatus::xfcv && q >= s.setting[k]) return LinkStatus::active;
  if (st == LinkStatus::active && (h1 - h2) / (q * q) < v.minor_loss[k]) return LinkStatus::xfcv;
  return st;
}

// EPANET 2.3's tankstatus: a link is closed (TEMPCLOSED) when it would add water to a full tank
// (one that cannot overflow) or take water from an empty one. q is the flow out of the tank; a
// flow within EPANET's TINY of zero counts as moving the wrong way. A pump discharging into a
// full tank (drawing from an empty one) is closed whatever its flow, as in EPANET (a closed
// pump's flow is ~1e-8 of its head difference and would reopen it); any other link when water
// flows in (out).
CGS_HD void tank_link_status(const NetworkView& v, const State& s, int k, int node, double q) {
  if (closed(s.status(k))) return;
  if (!v.tank[node]) return;  // reservoirs
  const bool is_pump = link_type(v, k) == LinkType::pump;
  if (s.head[node] >= v.max_head[node] && !v.can_overflow[node]) {
    if (is_pump ? v.to[k] == node : q < 0.0) s.status.set(k, LinkStatus::temp_closed);
  } else if (s.head[node] <= v.min_head[node]) {
    if (is_pump ? v.from[k] == node : q > 0.0) s.status.set(k, LinkStatus::temp_closed);
  }
}

// EPANET's linkstatus: check valves, pumps, flow control valves and links to tanks, every
// CHECKFREQ trials up to MAXCHECK and once the flows have converged; true where a status changed.
CGS_HD bool update_link_status(const NetworkView& v, const State& s) {
  const Options& o = v.o;
  bool change = false;
  for (int k = 0; k < o.links; ++k) {
    const int from = v.from[k], to = v.to[k];
    const LinkType type = link_type(v, k);
    const double dh = s.head[from] - s.head[to];
    const LinkStatus st = s.status(k);
    if (st == LinkStatus::xhead || st == LinkStatus::temp_closed) s.status.set(k, LinkStatus::open);
    if (type == LinkType::cv_pipe)
      s.status.set(
          k, check_valve_status(s.status(k), dh, s.flow[k], o.head_tolerance, o.flow_tolerance));
    if (type == LinkType::pump && s.status(k) >= LinkStatus::open && s.setting[k] > 0.0)
      s.status.set(k, pump_status(v, s, k, -dh));
    if (type == LinkType::fcv && s.setting[k] != kMissing) s.status.set(k, fcv_status(v, s, k, st));
    if (from >= o.nj) tank_link_status(v, s, k, from, s.flow[k]);
    if (to >= o.nj) tank_link_status(v, s, k, to, -s.flow[k]);
    change = change || s.status(k) != st;
  }
  return change;
}

// EPANET's badvalve: the factorisation failed at this node; if the first valve joined to it is an
// active PRV, PSV or FCV, that valve becomes XPRESSURE (XFCV) and its index is returned (the trial
// is repeated), else -1 (the equations cannot be solved).
CGS_HD int fix_bad_valve(const NetworkView& v, const State& s, int node) {
  for (int j = 0; j < v.valve_count; ++j) {
    const int k = v.valves[j];
    if (v.from[k] != node && v.to[k] != node) continue;
    const LinkType t = link_type(v, k);
    const bool control_valve = t == LinkType::prv || t == LinkType::psv || t == LinkType::fcv;
    if (!control_valve || s.status(k) != LinkStatus::active) return -1;
    s.status.set(k, t == LinkType::fcv ? LinkStatus::xfcv : LinkStatus::xpressure);
    return k;
  }
  return -1;
}

// Controls on junction pressure, checked once a solution has converged (EPANET's pswitch); true
// where one changed a link.
CGS_HD bool apply_pressure_controls(const NetworkView& v, const State& s) {
  bool any = false;
  const double htol = v.o.head_tolerance;
  for (int c = 0; c < v.control_count; ++c) {
    const double h = s.head[v.control_node[c]];
    const auto type = static_cast<ControlType>(v.control_type[c]);
    const bool fire = (type == ControlType::low_level && h <= v.control_grade[c] + htol) ||
                      (type == ControlType::high_level && h >= v.control_grade[c] - htol);
    if (!fire) continue;
    const int k = v.control_link[c];
    const LinkType t = link_type(v, k);
    const auto target = static_cast<LinkStatus>(v.control_status[c]);
    const double setting = v.control_setting[c];
    bool change = false;
    if (t == LinkType::pipe && s.status(k) != target) change = true;
    if (t == LinkType::pump && s.setting[k] != setting) change = true;
    if (t >= LinkType::prv) {
      if (s.setting[k] != setting)
        change = true;
      else if (s.setting[k] == kMissing && s.status(k) != target)
        change = true;
    }
    if (!change) continue;
    s.status.set(k, target);
    if (t != LinkType::pipe) s.setting[k] = setting;
    any = true;
  }
  return any;
}

}  // namespace cgs::net::gga
