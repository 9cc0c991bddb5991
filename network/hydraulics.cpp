#include "network/hydraulics.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "formats/convert.hpp"
#include "formats/types.hpp"
#include "network/epanet_order.hpp"
#include "network/trial_kernels.hpp"

namespace cgs::net {
namespace {

// EPANET's constants (hydcoeffs.c, hydraul.c), one copy with the trials engine's
// (trial_kernels.hpp): big and small coefficients for closed/open links and active valves, the
// Re = 2000 boundary of the friction factor; and the flow that stands for zero.
using trials::kA2;
using trials::kBig;
using trials::kPi;
using trials::kSmall;
using trials::kTiny;
constexpr double kZeroFlow = 1.0e-6;
using trials::sign;  // EPANET's SGN: +1 at 0

// EPANET's barrier functions and the Darcy-Weisbach friction factor: one copy, shared with the
// trials engine (trial_kernels.hpp).
using trials::add_lower_barrier;
using trials::add_upper_barrier;
using trials::friction_factor;

// pdaconverged's tolerance on delivered demands (cfs).
using trials::kPdaFlowTolerance;

bool is_pipe(LinkType t) { return t == LinkType::pipe || t == LinkType::cv_pipe; }

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

}  // namespace

GradientAlgorithm::GradientAlgorithm(const Network& net)
    : net_(net), opt_(net.options), nj_(net.junction_count) {
  const std::size_t n = net.nodes.size(), m = net.links.size();
  head_.assign(n, 0.0);
  demand_.assign(n, 0.0);
  delivered_.assign(n, 0.0);
  fixed_inflow_.assign(n, 0.0);
  emitter_flow_.assign(n, 0.0);
  volume_.assign(n, 0.0);
  xflow_.assign(n, 0.0);
  flow_.assign(m, 0.0);
  setting_.assign(m, 0.0);
  P_.assign(m, 0.0);
  Y_.assign(m, 0.0);
  R_.assign(m, 0.0);
  status_.assign(m, LinkStatus::open);
  copy_link_data();
  build_structure();
  compute_resistances();
  const DemandModelOptions& d = opt_.demand;
  pda_ = d.model == DemandModel::pda;
  pmin_ = d.minimum_pressure / net.units.pressure;  // EPANET's convertunits: Pmin /= Ucf[PRESSURE]
  preq_ = d.required_pressure / net.units.pressure;
  pexp_ = d.exponent;
}

// One diagonal per junction and one off-diagonal pair per pair of junctions joined by links
// (parallel links share it), as EPANET's sparse matrix; slots are found once.
void GradientAlgorithm::build_structure() {
  std::vector<index_t> rows, cols;
  for (int i = 0; i < nj_; ++i) rows.push_back(i), cols.push_back(i);
  for (const Link& link : net_.links) {
    if (!net_.is_junction(link.from) || !net_.is_junction(link.to)) continue;
    rows.push_back(link.from), cols.push_back(link.to);
    rows.push_back(link.to), cols.push_back(link.from);
  }
  std::vector<double> zeros(rows.size(), 0.0);
  system_.A = csr_from_triplets<double>(nj_, nj_, rows, cols, zeros);
  system_.b.assign(nj_, 0.0);
  system_.elimination_order = epanet_elimination_order(net_);
  const CsrMatrix<double>& A = system_.A;
  auto slot = [&](int r, int c) {
    auto first = A.col_idx.begin() + A.row_ptr[r], last = A.col_idx.begin() + A.row_ptr[r + 1];
    return static_cast<int>(std::lower_bound(first, last, c) - A.col_idx.begin());
  };
  diag_slot_.resize(nj_);
  for (int i = 0; i < nj_; ++i) diag_slot_[i] = slot(i, i);
  link_slot_ij_.assign(net_.links.size(), -1);
  link_slot_ji_.assign(net_.links.size(), -1);
  for (std::size_t k = 0; k < net_.links.size(); ++k) {
    const Link& link = net_.links[k];
    if (!net_.is_junction(link.from) || !net_.is_junction(link.to)) continue;
    link_slot_ij_[k] = slot(link.from, link.to);
    link_slot_ji_[k] = slot(link.to, link.from);
  }
}

// Resistance coefficients (EPANET's resistcoeff): h = R q^n for H-W and C-M, h = f R q^2 for D-W.
void GradientAlgorithm::compute_resistances() {
  for (std::size_t k = 0; k < net_.links.size(); ++k) {
    const Link& link = net_.links[k];
    if (!is_pipe(link.type)) {
      R_[k] = link.type == LinkType::pump ? kBig : kSmall;
      continue;
    }
    const double e = link.roughness, d = link.diameter, L = link.length;
    switch (opt_.formula) {
      case HeadlossFormula::hazen_williams:
        R_[k] = 4.727 * L / std::pow(e, 1.852) / std::pow(d, 4.871);
        break;
      case HeadlossFormula::darcy_weisbach: {
        const double area = kPi * d * d / 4.0;
        R_[k] = L / 2.0 / 32.2 / d / (area * area);
        break;
      }
      case HeadlossFormula::chezy_manning: {
        const double c = 4.0 * e / (1.49 * kPi * d * d);
        R_[k] = c * c * std::pow(d / 4.0, -1.333) * L;
        break;
      }
    }
  }
}

void GradientAlgorithm::copy_link_data() {
  const std::size_t m = net_.links.size();
  link_from_.resize(m);
  link_to_.resize(m);
  link_type_.resize(m);
  minor_loss_.resize(m);
  for (std::size_t k = 0; k < m; ++k) {
    const Link& link = net_.links[k];
    link_from_[k] = link.from;
    link_to_[k] = link.to;
    link_type_[k] = link.type;
    minor_loss_[k] = link.minor_loss;
  }
  emitters_.clear();
  for (int i = 0; i < nj_; ++i)
    if (net_.nodes[i].emitter != 0.0) emitters_.push_back(i);
}

static double hexp(HeadlossFormula f) { return f == HeadlossFormula::hazen_williams ? 1.852 : 2.0; }

void GradientAlgorithm::initialise() {
  emitters_.clear();  // refreshed below with minor_loss_, in the loops that read the records
  for (std::size_t i = nj_; i < net_.nodes.size(); ++i) {
    const Node& node = net_.nodes[i];
    head_[i] = node.initial_head;
    volume_[i] = node.initial_volume;
    fixed_inflow_[i] = 0.0;
  }
  for (int i = 0; i < nj_; ++i) {
    head_[i] = net_.nodes[i].elevation;
    emitter_flow_[i] = net_.nodes[i].emitter > 0 ? 1.0 : 0.0;
    delivered_[i] = 0.0;
    if (net_.nodes[i].emitter != 0.0) emitters_.push_back(i);
  }
  for (std::size_t k = 0; k < net_.links.size(); ++k) {
    const Link& link = net_.links[k];
    minor_loss_[k] = link.minor_loss;
    status_[k] = link.status;
    setting_[k] = link.setting;
    // Pressure and flow control valves with a setting start ACTIVE.
    const bool control_valve =
        link.type == LinkType::prv || link.type == LinkType::psv || link.type == LinkType::fcv;
    if (control_valve && link.setting != kMissing) status_[k] = LinkStatus::active;
    if (is_closed(status_[k]))
      flow_[k] = kZeroFlow;
    else if (link.type == LinkType::pump)
      flow_[k] = setting_[k] * net_.pumps[link.pump].q0;
    else
      flow_[k] = kPi * (link.diameter * link.diameter) / 4.0;  // 1 ft/s
  }
}

void GradientAlgorithm::warm_start(const std::vector<double>& flows) {
  for (std::size_t k = 0; k < net_.links.size() && k < flows.size(); ++k)
    if (!is_closed(status_[k])) flow_[k] = flows[k];
}

void GradientAlgorithm::start_period(long time) {
  demands(time);
  controls(time);
}

// EPANET's demands(): the pattern period that contains `time` (counted from PATTERN START) sets
// junction demands, reservoir heads and pump speeds.
void GradientAlgorithm::demands(long time) {
  const long period = (time + net_.times.pattern_start) / net_.times.pattern_step;
  auto factor = [&](int p) {
    if (p < 0) return 1.0;
    const auto& f = net_.patterns[p].factors;
    return f.empty() ? 1.0 : f[period % static_cast<long>(f.size())];
  };
  const int default_pattern = net_.default_pattern();
  system_demand_ = 0;
  for (int i = 0; i < nj_; ++i) {
    double sum = 0;
    for (const Demand& d : net_.nodes[i].demands) {
      const double q =
          d.base * factor(d.pattern >= 0 ? d.pattern : default_pattern) * opt_.demand_multiplier;
      if (q > 0.0) system_demand_ += q;
      sum += q;
    }
    demand_[i] = sum;
    delivered_[i] = sum;  // as EPANET: every period starts from full delivery
  }
  for (std::size_t i = nj_; i < net_.nodes.size(); ++i) {
    const Node& node = net_.nodes[i];
    if (node.type == NodeType::reservoir && node.head_pattern >= 0)
      head_[i] = node.elevation * factor(node.head_pattern);
  }
  for (std::size_t k = 0; k < net_.links.size(); ++k) {
    const Link& link = net_.links[k];
    if (link.type != LinkType::pump || net_.pumps[link.pump].speed_pattern < 0) continue;
    set_link_setting(static_cast<int>(k), factor(net_.pumps[link.pump].speed_pattern));
  }
}

// EPANET's controls(): simple controls on tank levels (with a tolerance of one second's inflow),
// elapsed time and time of day act at the start of a period; controls on junction pressures act
// after convergence (apply_pressure_controls).
int GradientAlgorithm::controls(long time) {
  int changes = 0;
  for (const Control& c : net_.controls) {
    bool fire = false;
    if (c.node >= 0 && !net_.is_junction(c.node)) {
      const double margin = std::abs(fixed_inflow_[c.node]);
      const double v_now = tank_volume(c.node, head_[c.node]);
      const double v_set = tank_volume(c.node, c.grade);
      if (c.type == ControlType::low_level && v_now <= v_set + margin) fire = true;
      if (c.type == ControlType::high_level && v_now >= v_set - margin) fire = true;
    }
    if (c.type == ControlType::timer && c.time == time) fire = true;
    if (c.type == ControlType::time_of_day && (time + net_.times.start_clocktime) % 86400 == c.time)
      fire = true;
    if (!fire) continue;
    const Link& link = net_.links[c.link];
    const LinkStatus s1 = is_closed(status_[c.link]) ? LinkStatus::closed : LinkStatus::open;
    const double k1 = setting_[c.link];
    const double k2 = link.type > LinkType::pipe ? c.setting : k1;
    if (link.type == LinkType::pump && s1 == LinkStatus::closed && c.status == LinkStatus::open)
      reset_pump_flow(c.link);
    if (s1 != c.status || k1 != k2) {
      status_[c.link] = c.status;
      setting_[c.link] = k2;
      ++changes;
    }
  }
  return changes;
}

// A constant-power pump switched on starts again from its initial flow: at zero flow its curve is
// infinite (EPANET's resetpumpflow).
void GradientAlgorithm::reset_pump_flow(int k) {
  const Pump& pump = net_.pumps[net_.links[k].pump];
  if (pump.type == PumpCurveType::constant_power) flow_[k] = pump.q0;
}

void GradientAlgorithm::set_link_open(int k, bool open) {
  const Link& link = net_.links[k];
  const bool valve = link.type > LinkType::pump && link.type != LinkType::gpv;
  if (open) {
    if (link.type == LinkType::pump) {
      setting_[k] = 1.0;
      if (status_[k] == LinkStatus::closed) reset_pump_flow(k);
    }
    if (valve) setting_[k] = kMissing;
    status_[k] = LinkStatus::open;
  } else {
    if (link.type == LinkType::pump) setting_[k] = 0.0;
    if (valve) setting_[k] = kMissing;
    status_[k] = LinkStatus::closed;
  }
}

void GradientAlgorithm::set_link_setting(int k, double value) {
  const Link& link = net_.links[k];
  if (link.type == LinkType::pump) {
    setting_[k] = value;
    if (value > 0 && is_closed(status_[k])) {
      reset_pump_flow(k);
      status_[k] = LinkStatus::open;
    }
    if (value == 0 && !is_closed(status_[k])) status_[k] = LinkStatus::closed;
  } else if (link.type == LinkType::fcv) {
    setting_[k] = value;
    status_[k] = LinkStatus::active;
  } else {
    if (setting_[k] == kMissing && is_closed(status_[k])) status_[k] = LinkStatus::open;
    setting_[k] = value;
  }
}

double GradientAlgorithm::node_demand(int node) const {
  return net_.is_junction(node) ? delivered_[node] + emitter_flow_[node] : fixed_inflow_[node];
}

// EPANET 2.3's tanklevels(): each tank's volume after dt seconds of its current net inflow, set to
// its limit when within one second's inflow of it, and the head of that volume. As EPANET: a tank
// whose inflow is within QZERO of zero is left as it is, and the test for empty does not look at
// the sign of the inflow (a tank at its minimum that takes in less than a second's worth of water
// over the step stays empty): both decide which step a level control fires at.
void GradientAlgorithm::tank_levels(long dt) {
  for (std::size_t i = nj_; i < net_.nodes.size(); ++i) {
    const Node& tank = net_.nodes[i];
    if (tank.type != NodeType::tank) continue;
    const double q = fixed_inflow_[i];
    if (std::abs(q) <= kZeroFlow) continue;
    volume_[i] += q * static_cast<double>(dt);
    if (volume_[i] + q >= tank.max_volume)
      volume_[i] = tank.max_volume;
    else if (volume_[i] - q <= tank.min_volume)
      volume_[i] = tank.min_volume;
    head_[i] = tank_grade(static_cast<int>(i), volume_[i]);
  }
}

// EPANET's tankvolume() and tankgrade(): volume and head of a tank, through its volume curve
// (stored in the file's units) or its area.
double GradientAlgorithm::tank_volume(int node, double head) const {
  const Node& tank = net_.nodes[node];
  if (tank.type != NodeType::tank) return 0.0;  // reservoirs: no volume
  if (tank.volume_curve >= 0) {
    const Curve& c = net_.curves[tank.volume_curve];
    const double depth = (head - tank.elevation) * net_.units.length;
    return interpolate(c.x, c.y, depth) / net_.units.volume;
  }
  return tank.min_volume + (head - tank.min_head) * tank.area;
}

double GradientAlgorithm::tank_grade(int node, double volume) const {
  const Node& tank = net_.nodes[node];
  if (tank.volume_curve >= 0) {
    const Curve& c = net_.curves[tank.volume_curve];
    return tank.elevation + interpolate(c.y, c.x, volume * net_.units.volume) / net_.units.length;
  }
  return tank.min_head + (volume - tank.min_volume) / tank.area;
}

// ---- head loss coefficients: P = 1 / (dh/dq), Y = h / (dh/dq) ----------------------------------
void GradientAlgorithm::headloss_coefficients() {
  for (std::size_t k = 0; k < net_.links.size(); ++k) {
    const int i = static_cast<int>(k);
    switch (link_type_[k]) {
      case LinkType::pipe:
      case LinkType::cv_pipe: pipe_coefficients(i); break;
      case LinkType::pump: pump_coefficients(i); break;
      case LinkType::pbv: pbv_coefficients(i); break;
      case LinkType::tcv: tcv_coefficients(i); break;
      case LinkType::gpv: gpv_coefficients(i); break;
      case LinkType::prv:
      case LinkType::psv:
      case LinkType::fcv:
        if (setting_[k] == kMissing)
          valve_coefficients(i, net_.links[k].minor_loss);
        else
          P_[k] = 0.0;  // handled with the matrix (control_valve_contributions)
        break;
    }
  }
}

void GradientAlgorithm::pipe_coefficients(int k) {
  if (is_closed(status_[k])) {
    P_[k] = 1.0 / kBig;
    Y_[k] = flow_[k];
    return;
  }
  if (opt_.formula == HeadlossFormula::darcy_weisbach) {
    darcy_weisbach_coefficients(k);
    return;
  }
  set_coefficients(
      k, trials::power_law(flow_[k], R_[k], hexp(opt_.formula), minor_loss_[k], opt_.rq_tolerance));
}

void GradientAlgorithm::darcy_weisbach_coefficients(int k) {
  const Link& link = net_.links[k];
  set_coefficients(k, trials::darcy_weisbach(flow_[k], R_[k], link.minor_loss, link.roughness,
                                             link.diameter, opt_.viscosity));
}

void GradientAlgorithm::set_coefficients(int k, trials::Linearised c) {
  P_[k] = c.P;
  Y_[k] = c.Y;
}

void GradientAlgorithm::curve_segment(int curve, double q, double& h0, double& r) const {
  const Curve& c = net_.curves[curve];
  const UnitSystem& u = net_.units;
  q *= u.flow;  // curves are stored in the file's units
  const std::size_t n = c.x.size();
  std::size_t k2 = 0;
  while (k2 < n && c.x[k2] < q) ++k2;
  if (k2 == 0)
    ++k2;
  else if (k2 == n)
    --k2;
  const std::size_t k1 = k2 - 1;
  r = (c.y[k2] - c.y[k1]) / (c.x[k2] - c.x[k1]);
  h0 = c.y[k1] - r * c.x[k1];
  // As curvecoeff: (r Ucf_Q) / Ucf_H, not r (Ucf_Q / Ucf_H): the two round differently.
  h0 /= u.length;
  r = r * u.flow / u.length;
}

void GradientAlgorithm::pump_coefficients(int k) {
  const double speed = setting_[k];
  if (is_closed(status_[k]) || speed == 0.0) {
    P_[k] = 1.0 / kBig;
    Y_[k] = flow_[k];
    return;
  }
  const Pump& pump = net_.pumps[net_.links[k].pump];
  const double q = std::abs(flow_[k]);
  double hloss, hgrad;
  if (pump.type == PumpCurveType::custom) {
    double h0, r;
    curve_segment(pump.head_curve, q / speed, h0, r);
    hgrad = -r * speed;
    hloss = -h0 * (speed * speed) + hgrad * flow_[k];  // pumpcoeff: H0 * SQR(setting)
  } else {
    const double h0 = speed * speed * pump.h0;
    double n = pump.n;
    if (std::abs(n - 1.0) < kTiny) n = 1.0;
    const double r = pump.r * std::pow(speed, 2.0 - n);
    if (pump.type == PumpCurveType::constant_power) {
      hgrad = -r / q / q;
      if (hgrad > kBig) {  // cannot deliver: closed
        P_[k] = 1.0 / kBig;
        Y_[k] = flow_[k];
        return;
      }
      if (hgrad < kSmall) {  // no resistance: an open valve
        P_[k] = 1.0 / kSmall;
        Y_[k] = flow_[k];
        return;
      }
      hloss = r / flow_[k];
    } else if (n != 1.0) {
      hgrad = n * r * std::pow(q, n - 1.0);
      if (hgrad < opt_.rq_tolerance) {
        hgrad = opt_.rq_tolerance;
        hloss = h0 + hgrad * flow_[k];
      } else {
        hloss = h0 + hgrad * flow_[k] / n;
      }
    } else {
      hgrad = r;
      hloss = h0 + hgrad * flow_[k];
    }
  }
  P_[k] = 1.0 / hgrad;
  Y_[k] = hloss / hgrad;
}

// Open, closed or throttled valve: minor loss h = km q^2, linearised at low flow like pipes.
void GradientAlgorithm::valve_coefficients(int k, double km) {
  if (is_closed(status_[k])) {
    P_[k] = 1.0 / kBig;
    Y_[k] = flow_[k];
    return;
  }
  set_coefficients(k, trials::open_valve(flow_[k], km, opt_.rq_tolerance));
}

void GradientAlgorithm::pbv_coefficients(int k) {
  const double km = net_.links[k].minor_loss;
  const double s = setting_[k];
  if (s == kMissing || s == 0.0 || km * (flow_[k] * flow_[k]) > s) {  // pbvcoeff: Km * SQR(q)
    valve_coefficients(k, km);
    return;
  }
  P_[k] = kBig;  // forces the head loss to equal the setting
  Y_[k] = s * kBig;
}

void GradientAlgorithm::tcv_coefficients(int k) {
  const Link& link = net_.links[k];
  valve_coefficients(
      k, setting_[k] != kMissing ? trials::tcv_loss(setting_[k], link.diameter) : link.minor_loss);
}

void GradientAlgorithm::gpv_coefficients(int k) {
  if (status_[k] == LinkStatus::closed) {
    valve_coefficients(k, net_.links[k].minor_loss);
    return;
  }
  const double q = std::max(std::abs(flow_[k]), kTiny);
  double h0, r;
  curve_segment(static_cast<int>(std::lround(setting_[k])), q, h0, r);
  r = std::max(r, kTiny);
  P_[k] = 1.0 / r;
  Y_[k] = (h0 / r + q) * sign(flow_[k]);
}

void GradientAlgorithm::emitter_headloss(int i, double& hloss, double& hgrad) const {
  trials::emitter_loss(emitter_flow_[i], net_.nodes[i].emitter, opt_.emitter_exponent,
                       opt_.rq_tolerance, opt_.emitter_backflow, hloss, hgrad);
}

// EPANET's demandheadloss: pressure-driven demand as a virtual emitter. The delivered demand d
// flows from the junction to a reservoir at its elevation + the minimum pressure through a head
// loss that inverts the demand function, dp (d / full)^n with n = 1 / exponent; barriers keep d
// between 0 and the full demand.
void GradientAlgorithm::pda_headloss(int i, double dp, double n, double& hloss,
                                     double& hgrad) const {
  trials::demand_loss(delivered_[i], demand_[i], dp, n, hloss, hgrad);
}

// ---- matrix assembly --------------------------------------------------------------------------
void GradientAlgorithm::add_diag(int node, double v) {
  if (node < nj_) system_.A.values[diag_slot_[node]] += v;
}
void GradientAlgorithm::add_rhs(int node, double v) {
  if (node < nj_) system_.b[node] += v;
}
void GradientAlgorithm::add_offdiag(int link, double v) {
  if (link_slot_ij_[link] < 0) return;
  system_.A.values[link_slot_ij_[link]] += v;
  system_.A.values[link_slot_ji_[link]] += v;
}

void GradientAlgorithm::link_contributions() {
  for (std::size_t k = 0; k < net_.links.size(); ++k) {
    if (P_[k] == 0.0) continue;
    const int n1 = link_from_[k], n2 = link_to_[k];
    const int i = static_cast<int>(k);
    xflow_[n1] -= flow_[k];
    xflow_[n2] += flow_[k];
    add_offdiag(i, -P_[k]);
    if (n1 < nj_) {
      add_diag(n1, P_[k]);
      add_rhs(n1, Y_[k]);
    } else {
      add_rhs(n2, P_[k] * head_[n1]);
    }
    if (n2 < nj_) {
      add_diag(n2, P_[k]);
      add_rhs(n2, -Y_[k]);
    } else {
      add_rhs(n1, P_[k] * head_[n2]);
    }
  }
}

// An emitter is a pipe from the junction to a reservoir at the junction's elevation.
void GradientAlgorithm::emitter_contributions() {
  for (int i : emitters_) {
    double hloss, hgrad;
    emitter_headloss(i, hloss, hgrad);
    add_diag(i, 1.0 / hgrad);
    add_rhs(i, (hloss + net_.nodes[i].elevation) / hgrad);
    xflow_[i] -= emitter_flow_[i];
  }
}

// EPANET's demandcoeffs: each junction with a positive demand gets its virtual emitter's
// conductance on the diagonal (the delivered demand itself enters the flow balance below).
void GradientAlgorithm::pda_contributions() {
  if (!pda_) return;
  const double dp = preq_ - pmin_, n = 1.0 / pexp_;
  for (int i = 0; i < nj_; ++i) {
    if (demand_[i] <= 0.0) continue;
    double hloss, hgrad;
    pda_headloss(i, dp, n, hloss, hgrad);
    if (hgrad > 0.0) {
      add_diag(i, 1.0 / hgrad);
      add_rhs(i, (hloss + net_.nodes[i].elevation + pmin_) / hgrad);
    }
  }
}

// EPANET's nodecoeffs: the delivered demand leaves each junction's flow balance.
void GradientAlgorithm::demand_contributions() {
  for (int i = 0; i < nj_; ++i) {
    xflow_[i] -= delivered_[i];
    add_rhs(i, xflow_[i]);
  }
}

// PRV, PSV and FCV with a setting (EPANET's valvecoeffs): an ACTIVE PRV (PSV) pins the head
// downstream (upstream) with a 1e8 diagonal and passes the flow the other side needs; an active
// FCV splits the network and moves its setting as a demand and a supply.
void GradientAlgorithm::control_valve_contributions() {
  for (int k : net_.valves) {
    const Link& link = net_.links[k];
    if (setting_[k] == kMissing) continue;
    const int n1 = link.from, n2 = link.to;
    const LinkType t = link.type;
    if (t != LinkType::prv && t != LinkType::psv && t != LinkType::fcv) continue;
    const bool active = status_[k] == LinkStatus::active;
    if (t == LinkType::prv && active) {
      const double hset = net_.nodes[n2].elevation + setting_[k];
      P_[k] = 0.0;
      Y_[k] = flow_[k] + xflow_[n2];
      add_rhs(n2, hset * kBig);
      add_diag(n2, kBig);
      if (xflow_[n2] < 0.0) add_rhs(n1, xflow_[n2]);
      continue;
    }
    if (t == LinkType::psv && active) {
      const double hset = net_.nodes[n1].elevation + setting_[k];
      P_[k] = 0.0;
      Y_[k] = flow_[k] - xflow_[n1];
      add_rhs(n1, hset * kBig);
      add_diag(n1, kBig);
      if (xflow_[n1] > 0.0) add_rhs(n2, xflow_[n1]);
      add_offdiag(k, -1.0 / kBig);  // keeps the two sides connected
      add_diag(n2, 1.0 / kBig);
      continue;
    }
    if (t == LinkType::fcv && active) {
      const double q = setting_[k];
      xflow_[n1] -= q;
      xflow_[n2] += q;
      Y_[k] = flow_[k] - q;
      add_rhs(n1, -q);
      add_rhs(n2, q);
      P_[k] = 1.0 / kBig;
      add_offdiag(k, -P_[k]);
      add_diag(n1, P_[k]);
      add_diag(n2, P_[k]);
      continue;
    }
    valve_coefficients(k, link.minor_loss);  // open, closed, or pressure-limited
    add_offdiag(k, -P_[k]);
    add_diag(n1, P_[k]);
    add_diag(n2, P_[k]);
    add_rhs(n1, Y_[k] - flow_[k]);
    add_rhs(n2, -(Y_[k] - flow_[k]));
  }
}

const JunctionSystem& GradientAlgorithm::assemble() {
  headloss_coefficients();
  std::fill(system_.A.values.begin(), system_.A.values.end(), 0.0);
  std::fill(system_.b.begin(), system_.b.end(), 0.0);
  std::fill(xflow_.begin(), xflow_.end(), 0.0);
  link_contributions();
  emitter_contributions();
  pda_contributions();
  demand_contributions();
  control_valve_contributions();
  return system_;
}

// ---- flow update (EPANET's newflows) -----------------------------------------------------------
double GradientAlgorithm::update(const std::vector<double>& junction_heads, TrialReport& report) {
  report.max_head_change = 0;
  for (int i = 0; i < nj_; ++i) {
    report.max_head_change =
        std::max(report.max_head_change, std::abs(junction_heads[i] - head_[i]));
    head_[i] = junction_heads[i];
  }
  double qsum = 0, dqsum = 0, max_dq = 0;
  for (std::size_t i = nj_; i < net_.nodes.size(); ++i) fixed_inflow_[i] = 0.0;
  for (std::size_t k = 0; k < link_from_.size(); ++k) {
    const int from = link_from_[k], to = link_to_[k];
    const double dh = head_[from] - head_[to];
    double dq = (Y_[k] - P_[k] * dh) * relax_;
    if (link_type_[k] == LinkType::pump &&
        net_.pumps[net_.links[k].pump].type == PumpCurveType::constant_power && dq > flow_[k])
      dq = flow_[k] / 2.0;  // keeps constant-power pump flow positive
    flow_[k] -= dq;
    qsum += std::abs(flow_[k]);
    dqsum += std::abs(dq);
    max_dq = std::max(max_dq, std::abs(dq));
    if (!is_closed(status_[k])) {
      if (from >= nj_) fixed_inflow_[from] -= flow_[k];
      if (to >= nj_) fixed_inflow_[to] += flow_[k];
    }
  }
  for (int i : emitters_) {
    double hloss, hgrad;
    emitter_headloss(i, hloss, hgrad);
    const double dh = head_[i] - net_.nodes[i].elevation;
    const double dq = (hloss - dh) / hgrad * relax_;
    emitter_flow_[i] -= dq;
    qsum += std::abs(emitter_flow_[i]);
    dqsum += std::abs(dq);
    max_dq = std::max(max_dq, std::abs(dq));
  }
  update_pda_demands(qsum, dqsum, max_dq);
  report.max_flow_change = max_dq;
  return qsum > opt_.accuracy ? dqsum / qsum : dqsum;
}

// EPANET's newdemandflows: each delivered demand moves by its virtual emitter's flow change, at
// most 40% of the full demand per trial. Unlike demandcoeffs, EPANET holds the pressure range here
// to at least MINPDIFF (0.1, compared with the range in ft): kept, for the same trials.
void GradientAlgorithm::update_pda_demands(double& qsum, double& dqsum, double& max_dq) {
  if (!pda_) return;
  const double dp = std::max(preq_ - pmin_, kMinPressureDifference), n = 1.0 / pexp_;
  for (int i = 0; i < nj_; ++i) {
    if (demand_[i] <= 0.0) continue;
    double hloss, hgrad;
    pda_headloss(i, dp, n, hloss, hgrad);
    const double dh = head_[i] - net_.nodes[i].elevation - pmin_;
    double dq = (hloss - dh) / hgrad * relax_;
    if (std::abs(dq) > 0.4 * demand_[i]) dq = 0.4 * sign(dq) * demand_[i];
    delivered_[i] -= dq;
    qsum += std::abs(delivered_[i]);
    dqsum += std::abs(dq);
    max_dq = std::max(max_dq, std::abs(dq));
  }
}

// EPANET's DAMPLIMIT: with a limit > 0, control valves are checked only once the relative flow
// change is at or below it, and from then on the next trial's flow changes are damped to 60%;
// without one, valves are checked every trial and flows move the full Newton step.
bool GradientAlgorithm::damp_and_check_valves(double relative_change) {
  relax_ = 1.0;
  if (opt_.damp_limit <= 0.0) return update_valve_status();
  if (relative_change > opt_.damp_limit) return false;
  relax_ = 0.6;
  return update_valve_status();
}

bool GradientAlgorithm::has_converged(double relative_change) {
  if (relative_change > opt_.accuracy) return false;
  if (opt_.head_error_limit > 0 || opt_.flow_change_limit > 0) {
    // EPANET's optional extra criteria need the head loss error of every link; they are rarely
    // used and not implemented: refuse rather than approximate.
    throw InputError(net_.source, 0, "HEADERROR / FLOWCHANGE convergence limits are not supported");
  }
  return !pda_ || pda_converged();
}

// EPANET's pdaconverged: the demand function at each junction's pressure, against the delivered
// demand the trials have reached.
bool GradientAlgorithm::pda_converged() const {
  const double dp = preq_ - pmin_;
  for (int i = 0; i < nj_; ++i) {
    const double full = demand_[i];
    if (full <= 0.0) continue;
    const double p = head_[i] - net_.nodes[i].elevation;
    double q = full;
    if (p <= pmin_)
      q = 0.0;
    else if (p < preq_)
      q = full * std::pow((p - pmin_) / dp, pexp_);
    if (std::abs(q - delivered_[i]) > kPdaFlowTolerance) return false;
  }
  return true;
}

// pdaconverged's other output: the junctions short of their demand and the shortfall in %.
void GradientAlgorithm::demand_deficit(PeriodSolve& out) const {
  out.deficient_nodes = 0;
  out.demand_reduction = 0;
  if (!pda_) return;
  double total = 0, reduction = 0;
  for (int i = 0; i < nj_; ++i) {
    if (demand_[i] <= 0.0 || delivered_[i] + kPdaFlowTolerance >= demand_[i]) continue;
    ++out.deficient_nodes;
    total += demand_[i];
    reduction += demand_[i] - delivered_[i];
  }
  if (total > 0.0) out.demand_reduction = reduction / total * 100.0;
}

// ---- status rules (EPANET's hydstatus.c) -------------------------------------------------------
LinkStatus GradientAlgorithm::check_valve_status(LinkStatus s, double dh, double q) const {
  return trials::check_valve_status(s, dh, q, opt_.head_tolerance, opt_.flow_tolerance);
}

bool GradientAlgorithm::update_valve_status() {
  bool change = false;
  const double htol = opt_.head_tolerance, qtol = opt_.flow_tolerance;
  for (int k : net_.valves) {
    const Link& link = net_.links[k];
    if (setting_[k] == kMissing) continue;
    if (link.type != LinkType::prv && link.type != LinkType::psv) continue;
    const LinkStatus s = status_[k];
    const double h1 = head_[link.from], h2 = head_[link.to];
    const double q = flow_[k];
    const double hml = link.minor_loss * q * q;  // head loss when fully open
    const LinkStatus next =
        link.type == LinkType::prv
            ? trials::prv_status(s, h1, h2, net_.nodes[link.to].elevation + setting_[k], hml, q,
                                 htol, qtol)
            : trials::psv_status(s, h1, h2, net_.nodes[link.from].elevation + setting_[k], hml, q,
                                 htol, qtol);
    status_[k] = next;
    change = change || next != s;
  }
  return change;
}

// EPANET 2.3's tankstatus: a link is closed (TEMPCLOSED) when it would add water to a full tank
// (one that cannot overflow) or take water from an empty one. q is the flow out of the tank; a
// flow within EPANET's TINY of zero counts as moving the wrong way.
void GradientAlgorithm::tank_link_status(int k, int node, double q) {
  if (is_closed(status_[k])) return;
  const Node& tank = net_.nodes[node];
  if (tank.type != NodeType::tank) return;  // reservoirs
  // A pump discharging into a full tank (drawing from an empty one) is closed whatever its flow,
  // as in EPANET (a closed pump's flow is ~1e-8 of its head difference and would reopen it);
  // any other link when water flows in (out).
  const Link& link = net_.links[k];
  const bool pump = link.type == LinkType::pump;
  if (head_[node] >= tank.max_head && !tank.can_overflow) {
    if (pump ? link.to == node : q < 0.0) status_[k] = LinkStatus::temp_closed;
  } else if (head_[node] <= tank.min_head) {
    if (pump ? link.from == node : q > 0.0) status_[k] = LinkStatus::temp_closed;
  }
}

// EPANET 2.3's pumpstatus for an open pump: a constant-power pump with (almost) no flow is closed
// for the trial (TEMPCLOSED); any other pump is closed (XHEAD) when the head it must add exceeds
// its shutoff head at its speed.
LinkStatus GradientAlgorithm::pump_status(int k, double head_gain) const {
  const Pump& pump = net_.pumps[net_.links[k].pump];
  double hmax = 1e10;  // EPANET's BIG for constant power
  if (pump.type == PumpCurveType::constant_power) {
    if (flow_[k] < kTiny) return LinkStatus::temp_closed;
  } else {
    hmax = setting_[k] * setting_[k] * pump.max_head;
  }
  return head_gain > hmax + opt_.head_tolerance ? LinkStatus::xhead : LinkStatus::open;
}

// EPANET 2.3's fcvstatus: reverse head or flow makes the valve XFCV (an open valve); XFCV becomes
// active again once the flow reaches the setting; an active valve whose loss coefficient would
// have to be below the fully open one's cannot deliver its flow (XFCV).
LinkStatus GradientAlgorithm::fcv_status(int k, LinkStatus s) const {
  const Link& link = net_.links[k];
  const double h1 = head_[link.from], h2 = head_[link.to], q = flow_[k];
  if (h1 - h2 < -opt_.head_tolerance) return LinkStatus::xfcv;
  if (q < -opt_.flow_tolerance) return LinkStatus::xfcv;
  if (s == LinkStatus::xfcv && q >= setting_[k]) return LinkStatus::active;
  if (s == LinkStatus::active && (h1 - h2) / (q * q) < link.minor_loss) return LinkStatus::xfcv;
  return s;
}

// EPANET's linkstatus: check valves, pumps, flow control valves and links to tanks, every
// CHECKFREQ trials up to MAXCHECK and once the flows have converged.
bool GradientAlgorithm::update_link_status() {
  bool change = false;
  for (std::size_t kk = 0; kk < link_from_.size(); ++kk) {
    const int k = static_cast<int>(kk);
    const int from = link_from_[k], to = link_to_[k];
    const LinkType type = link_type_[k];
    const double dh = head_[from] - head_[to];
    const LinkStatus s = status_[k];
    if (s == LinkStatus::xhead || s == LinkStatus::temp_closed) status_[k] = LinkStatus::open;
    if (type == LinkType::cv_pipe) status_[k] = check_valve_status(status_[k], dh, flow_[k]);
    if (type == LinkType::pump && status_[k] >= LinkStatus::open && setting_[k] > 0.0)
      status_[k] = pump_status(k, -dh);
    if (type == LinkType::fcv && setting_[k] != kMissing) status_[k] = fcv_status(k, s);
    if (from >= nj_) tank_link_status(k, from, flow_[k]);
    if (to >= nj_) tank_link_status(k, to, -flow_[k]);
    change = change || status_[k] != s;
  }
  return change;
}

int GradientAlgorithm::fix_bad_valve(int node) {
  for (int k : net_.valves) {
    const Link& link = net_.links[k];
    if (link.from != node && link.to != node) continue;
    const bool control_valve =
        link.type == LinkType::prv || link.type == LinkType::psv || link.type == LinkType::fcv;
    if (!control_valve || status_[k] != LinkStatus::active) return -1;
    status_[k] = link.type == LinkType::fcv ? LinkStatus::xfcv : LinkStatus::xpressure;
    return k;
  }
  return -1;
}

// Controls on junction pressure, checked once a solution has converged (EPANET's pswitch).
bool GradientAlgorithm::apply_pressure_controls() {
  bool any = false;
  for (const Control& c : net_.controls) {
    if (c.node < 0 || !net_.is_junction(c.node)) continue;
    const double h = head_[c.node], htol = opt_.head_tolerance;
    const bool fire = (c.type == ControlType::low_level && h <= c.grade + htol) ||
                      (c.type == ControlType::high_level && h >= c.grade - htol);
    if (!fire) continue;
    const Link& link = net_.links[c.link];
    const int k = c.link;
    bool change = false;
    if (link.type == LinkType::pipe && status_[k] != c.status) change = true;
    if (link.type == LinkType::pump && setting_[k] != c.setting) change = true;
    if (link.type >= LinkType::prv) {
      if (setting_[k] != c.setting)
        change = true;
      else if (setting_[k] == kMissing && status_[k] != c.status)
        change = true;
    }
    if (!change) continue;
    status_[k] = c.status;
    if (link.type != LinkType::pipe) setting_[k] = c.setting;
    any = true;
  }
  return any;
}

void GradientAlgorithm::export_trial_start(double* start, signed char* status) const {
  for (const std::vector<double>* v :
       {&head_, &demand_, &delivered_, &emitter_flow_, &flow_, &setting_})
    start = std::copy(v->begin(), v->end(), start);
  for (std::size_t k = 0; k < status_.size(); ++k) status[k] = static_cast<signed char>(status_[k]);
}

HydraulicResults GradientAlgorithm::results() const {
  HydraulicResults r;
  r.head = head_;
  r.demand.assign(net_.nodes.size(), 0.0);
  r.required_demand.assign(net_.nodes.size(), 0.0);
  r.delivered_demand.assign(net_.nodes.size(), 0.0);
  for (int i = 0; i < nj_; ++i) {
    r.demand[i] = delivered_[i] + emitter_flow_[i];
    r.required_demand[i] = demand_[i];
    r.delivered_demand[i] = delivered_[i];
  }
  for (std::size_t i = nj_; i < net_.nodes.size(); ++i) r.demand[i] = fixed_inflow_[i];
  r.flow = flow_;
  r.status = status_;
  // As EPANET reports them: a closed link carries no flow (its 1e-8 coupling is numerical only).
  for (std::size_t k = 0; k < flow_.size(); ++k)
    if (is_closed(status_[k])) r.flow[k] = 0.0;
  return r;
}

// ---- the trial loop (EPANET's hydsolve) --------------------------------------------------------
PeriodSolve GradientAlgorithm::solve_period(LinearSolver& solver, std::vector<double>& x, long time,
                                            const RunOptions& run) {
  const auto start = Clock::now();
  const int max_trials = opt_.max_trials + std::max(0, opt_.extra_trials);
  int next_check = opt_.check_frequency;
  PeriodSolve out;
  relax_ = 1.0;
  double relerr = 1e10;
  bool converged = false;
  int trial = 1;
  std::vector<LinkStatus> statuses_before;
  while (trial <= max_trials) {
    TrialReport report;
    report.trial = trial;
    if (run.trace) statuses_before = status_;
    auto t0 = Clock::now();
    const JunctionSystem& system = assemble();
    report.assemble_seconds = since(t0);
    if (run.on_system) run.on_system(time, trial, system);
    if (trial == 1) solver.suggest_elimination_order(system.elimination_order);
    LinearSolveStats stats = solver.solve(system.A, system.b, x);
    // As EPANET's hydsolve: a pivot <= 0 at the junction of an active control valve fixes that
    // valve and repeats the trial (its count does not advance); anything else is error 110,
    // unless the factorisation goes through in another elimination order (linear_solver.hpp).
    int failed_junction = -1, fixed_valve = -1;
    if (stats.failed_row >= 0) {
      failed_junction = stats.failed_row;
      fixed_valve = fix_bad_valve(failed_junction);
      if (fixed_valve < 0 && solver.solve_in_file_order(system.A, system.b, x, stats))
        report.file_order = true;
    }
    report.solve_seconds = stats.seconds;
    report.cg_iterations = stats.iterations;
    report.residual = stats.true_relative_residual;
    report.scaled_residual = stats.relative_residual;
    report.backward_error = stats.backward_error;
    report.refinement_steps = stats.refinement_steps;
    report.linear_converged = stats.converged;
    out.linear_seconds += stats.seconds;
    out.linear_iterations += stats.iterations;
    ++out.linear_solves;
    if (!report.file_order && failed_junction >= 0) {
      report.failed_junction = failed_junction;
      report.fixed_valve = fixed_valve;
      out.trial_reports.push_back(report);
      if (report.fixed_valve >= 0) continue;
      out.error =
          "cannot solve the hydraulic equations (EPANET error 110): the matrix is not "
          "positive definite at junction '" +
          net_.nodes[stats.failed_row].id + "' (trial " + std::to_string(trial) + ")";
      break;
    }
    out.linear_converged = out.linear_converged && stats.converged;
    t0 = Clock::now();
    relerr = update(x, report);
    report.relative_flow_change = relerr;
    const bool valve_change = damp_and_check_valves(relerr);
    bool stop = false;
    if (has_converged(relerr) && (!run.settled || run.settled(*this))) {
      if (trial > opt_.max_trials) {
        stop = converged = true;
      } else {
        bool status_change = valve_change;
        if (update_link_status()) status_change = true;
        if (apply_pressure_controls()) status_change = true;
        if (!status_change)
          stop = converged = true;
        else
          next_check = trial + opt_.check_frequency;
      }
    } else if (trial <= opt_.max_check && trial == next_check) {
      update_link_status();
      next_check += opt_.check_frequency;
    }
    report.assemble_seconds += since(t0);
    if (run.trace)
      for (std::size_t k = 0; k < status_.size(); ++k)
        if (status_[k] != statuses_before[k])
          report.status_changes.emplace_back(static_cast<int>(k), status_[k]);
    out.trial_reports.push_back(report);
    if (run.on_trial) run.on_trial(report);
    if (stop) break;
    ++trial;
  }
  out.converged = converged && out.error.empty();
  out.trials = std::min(trial, max_trials);
  demand_deficit(out);
  out.relative_flow_change = relerr;
  out.seconds = since(start);
  return out;
}

HydraulicResults solve_hydraulics(const Network& net, LinearSolver& solver, const RunOptions& run) {
  const auto start = Clock::now();
  check_connectivity(net);
  GradientAlgorithm gga(net);
  gga.initialise();
  gga.start_period(0);
  std::vector<double> x(gga.heads().begin(), gga.heads().begin() + net.junction_count);
  PeriodSolve period = gga.solve_period(solver, x, 0, run);
  HydraulicResults results = gga.results();
  results.converged = period.converged;
  results.trials = period.trials;
  results.relative_flow_change = period.relative_flow_change;
  results.trial_reports = std::move(period.trial_reports);
  results.linear_seconds = period.linear_seconds;
  results.cut_off_nodes = cut_off_nodes(net, results.status);
  results.error = std::move(period.error);
  results.total_seconds = since(start);
  return results;
}

// ---- connectivity -------------------------------------------------------------------------------
NetworkGraph::NetworkGraph(const Network& net) : net_(net) {
  const std::size_t n = net.nodes.size();
  first_.assign(n + 1, 0);
  for (const Link& link : net.links) ++first_[link.from + 1], ++first_[link.to + 1];
  for (std::size_t i = 0; i < n; ++i) first_[i + 1] += first_[i];
  neighbour_.resize(first_[n]);
  link_.resize(first_[n]);
  std::vector<int> next(first_.begin(), first_.end() - 1);
  for (std::size_t k = 0; k < net.links.size(); ++k) {
    const Link& link = net.links[k];
    neighbour_[next[link.from]] = link.to, link_[next[link.from]++] = static_cast<int>(k);
    neighbour_[next[link.to]] = link.from, link_[next[link.to]++] = static_cast<int>(k);
  }
}

// Nodes reached from the fixed-head nodes, through every link or (status given) the open ones.
std::vector<int> NetworkGraph::reached(const std::vector<LinkStatus>* status) const {
  const int n = static_cast<int>(net_.nodes.size());
  std::vector<int> seen(n, 0), queue;
  queue.reserve(n);
  for (int i = net_.junction_count; i < n; ++i) seen[i] = 1, queue.push_back(i);
  for (std::size_t head = 0; head < queue.size(); ++head) {
    const int node = queue[head];
    for (int e = first_[node]; e < first_[node + 1]; ++e) {
      if (status && is_closed((*status)[link_[e]])) continue;
      if (!seen[neighbour_[e]]) seen[neighbour_[e]] = 1, queue.push_back(neighbour_[e]);
    }
  }
  std::vector<int> missing;
  for (int i = 0; i < net_.junction_count; ++i)
    if (!seen[i]) missing.push_back(i);
  return missing;
}

std::vector<int> NetworkGraph::cut_off(const std::vector<LinkStatus>& status) const {
  return reached(&status);
}

std::vector<int> NetworkGraph::unreachable() const { return reached(nullptr); }

void check_connectivity(const Network& net) {
  const std::vector<int> lost = NetworkGraph(net).unreachable();
  if (lost.empty()) return;
  std::string names;
  for (std::size_t i = 0; i < lost.size() && i < 20; ++i)
    names += (i ? ", " : "") + net.nodes[lost[i]].id;
  if (lost.size() > 20) names += ", ... (" + std::to_string(lost.size()) + " in all)";
  throw InputError(net.source, 0,
                   "junctions not connected to any reservoir or tank (their heads are "
                   "undetermined): " +
                       names);
}

std::vector<int> cut_off_nodes(const Network& net, const std::vector<LinkStatus>& status) {
  return NetworkGraph(net).cut_off(status);
}

}  // namespace cgs::net
