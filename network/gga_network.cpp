#include "network/gga_network.hpp"

#include <cmath>

namespace cgs::net {

gga::Options gga_options(const Network& net) {
  const HydraulicOptions& opt = net.options;
  gga::Options o;
  o.nj = net.junction_count;
  o.nodes = static_cast<int>(net.nodes.size());
  o.links = static_cast<int>(net.links.size());
  o.formula = static_cast<int>(opt.formula);
  o.viscosity = opt.viscosity, o.rq_tolerance = opt.rq_tolerance, o.accuracy = opt.accuracy;
  o.head_tolerance = opt.head_tolerance, o.flow_tolerance = opt.flow_tolerance;
  o.damp_limit = opt.damp_limit, o.emitter_exponent = opt.emitter_exponent;
  o.head_error_limit = opt.head_error_limit / net.units.length;  // as EPANET: / Ucf[HEAD]
  o.flow_change_limit = opt.flow_change_limit / net.units.flow;
  o.max_trials = opt.max_trials, o.extra_trials = opt.extra_trials;
  o.check_frequency = opt.check_frequency, o.max_check = opt.max_check;
  o.emitter_backflow = opt.emitter_backflow;
  o.pda = opt.demand.model == DemandModel::pda;
  o.pmin = opt.demand.minimum_pressure / net.units.pressure;
  o.preq = opt.demand.required_pressure / net.units.pressure;
  o.pexp = opt.demand.exponent;
  o.unit_flow = net.units.flow, o.unit_length = net.units.length;
  o.unit_pressure = net.units.pressure;
  return o;
}

namespace {

template <typename T, typename Records, typename F>
void fill(std::vector<T>& out, const Records& records, F f) {
  out.resize(records.size());
  for (std::size_t i = 0; i < records.size(); ++i) out[i] = f(records[i]);
}

}  // namespace

void GgaNetwork::load(const Network& net) {
  options = gga_options(net);
  fill(from, net.links, [](const Link& l) { return l.from; });
  fill(to, net.links, [](const Link& l) { return l.to; });
  fill(type, net.links, [](const Link& l) { return static_cast<int>(l.type); });
  fill(pump, net.links, [](const Link& l) { return l.pump; });
  fill(minor_loss, net.links, [](const Link& l) { return l.minor_loss; });
  fill(roughness, net.links, [](const Link& l) { return l.roughness; });
  fill(diameter, net.links, [](const Link& l) { return l.diameter; });
  fill(pump_type, net.pumps, [](const Pump& p) { return static_cast<int>(p.type); });
  fill(pump_curve, net.pumps, [](const Pump& p) { return p.head_curve; });
  fill(pump_h0, net.pumps, [](const Pump& p) { return p.h0; });
  fill(pump_r, net.pumps, [](const Pump& p) { return p.r; });
  fill(pump_n, net.pumps, [](const Pump& p) { return p.n; });
  fill(pump_max_head, net.pumps, [](const Pump& p) { return p.max_head; });
  curve_ptr.assign(1, 0), curve_x.clear(), curve_y.clear();
  for (const Curve& c : net.curves) {
    curve_x.insert(curve_x.end(), c.x.begin(), c.x.end());
    curve_y.insert(curve_y.end(), c.y.begin(), c.y.end());
    curve_ptr.push_back(static_cast<int>(curve_x.size()));
  }
  valves.assign(net.valves.begin(), net.valves.end());
  emitters.clear();
  for (int i = 0; i < net.junction_count; ++i)
    if (net.nodes[i].emitter != 0.0) emitters.push_back(i);
  load_leakage(net);
  fill(elevation, net.nodes, [](const Node& n) { return n.elevation; });
  fill(emitter, net.nodes, [](const Node& n) { return n.emitter; });
  fill(tank, net.nodes, [](const Node& n) { return n.type == NodeType::tank ? 1 : 0; });
  fill(can_overflow, net.nodes, [](const Node& n) { return n.can_overflow ? 1 : 0; });
  fill(max_head, net.nodes, [](const Node& n) { return n.max_head; });
  fill(min_head, net.nodes, [](const Node& n) { return n.min_head; });
  std::vector<Control> pressure;  // the controls on junction pressures: the ones trials apply
  for (const Control& c : net.controls)
    if (c.node >= 0 && net.is_junction(c.node)) pressure.push_back(c);
  fill(control_node, pressure, [](const Control& c) { return c.node; });
  fill(control_link, pressure, [](const Control& c) { return c.link; });
  fill(control_type, pressure, [](const Control& c) { return static_cast<int>(c.type); });
  fill(control_status, pressure, [](const Control& c) { return static_cast<int>(c.status); });
  fill(control_grade, pressure, [](const Control& c) { return c.grade; });
  fill(control_setting, pressure, [](const Control& c) { return c.setting; });
}

void GgaNetwork::load_leakage(const Network& net) {
  constexpr double kOrifice = 4.8149766 * 1.e-6;  // 0.6 sqrt(2 g), m^2 per mm^2
  constexpr double kMetresPerFoot = 0.3048;
  std::vector<double> area(net.nodes.size(), 0.0), expansion(net.nodes.size(), 0.0);
  for (const Link& link : net.links) {
    if (link.type != LinkType::pipe && link.type != LinkType::cv_pipe) continue;
    const bool j1 = net.is_junction(link.from), j2 = net.is_junction(link.to);
    if (!j1 && !j2) continue;
    if (link.leak_area == 0.0 && link.leak_expansion == 0.0) continue;
    double c_area = kOrifice * link.leak_area / (kMetresPerFoot * kMetresPerFoot);
    double c_expansion = kOrifice * link.leak_expansion / kMetresPerFoot;
    double sections = link.length / 100.;  // 100 ft sections, half to each junction end
    if (j1 && j2) sections *= 0.5;
    c_area *= sections;
    c_expansion *= sections;
    for (const auto& [node, is_junction] : {std::pair{link.from, j1}, {link.to, j2}})
      if (is_junction) area[node] += c_area, expansion[node] += c_expansion;
  }
  leaks.clear(), leak_fixed.clear(), leak_variable.clear();
  for (int i = 0; i < net.junction_count; ++i) {
    if (!(area[i] > 0.0) && !(expansion[i] > 0.0)) continue;
    leaks.push_back(i);
    leak_fixed.push_back(area[i] > 0.0 ? 1.0 / (area[i] * area[i]) : 0.0);
    leak_variable.push_back(expansion[i] > 0.0 ? 1.0 / std::pow(expansion[i], 2. / 3.) : 0.0);
  }
}

void GgaNetwork::compute_resistances(const Network& net) {
  resistance.assign(net.links.size(), 0.0);
  for (std::size_t k = 0; k < net.links.size(); ++k) {
    const Link& link = net.links[k];
    if (link.type != LinkType::pipe && link.type != LinkType::cv_pipe) {
      resistance[k] = link.type == LinkType::pump ? gga::kBig : gga::kSmall;
      continue;
    }
    const double e = link.roughness, d = link.diameter, L = link.length;
    switch (net.options.formula) {
      case HeadlossFormula::hazen_williams:
        resistance[k] = 4.727 * L / std::pow(e, 1.852) / std::pow(d, 4.871);
        break;
      case HeadlossFormula::darcy_weisbach: {
        const double area = gga::kPi * d * d / 4.0;
        resistance[k] = L / 2.0 / 32.2 / d / (area * area);
        break;
      }
      case HeadlossFormula::chezy_manning: {
        const double c = 4.0 * e / (1.49 * gga::kPi * d * d);
        resistance[k] = c * c * std::pow(d / 4.0, -1.333) * L;
        break;
      }
    }
  }
}

gga::NetworkView GgaNetwork::view() const {
  gga::NetworkView v;
  v.o = options;
  v.from = from.data(), v.to = to.data(), v.type = type.data(), v.pump = pump.data();
  v.minor_loss = minor_loss.data(), v.resistance = resistance.data();
  v.roughness = roughness.data(), v.diameter = diameter.data();
  v.pump_count = static_cast<int>(pump_type.size());
  v.pump_type = pump_type.data(), v.pump_curve = pump_curve.data(), v.pump_h0 = pump_h0.data();
  v.pump_r = pump_r.data(), v.pump_n = pump_n.data(), v.pump_max_head = pump_max_head.data();
  v.curve_count = static_cast<int>(curve_ptr.size()) - 1;
  v.curve_ptr = curve_ptr.data(), v.curve_x = curve_x.data(), v.curve_y = curve_y.data();
  v.valve_count = static_cast<int>(valves.size());
  v.emitter_count = static_cast<int>(emitters.size());
  v.valves = valves.data(), v.emitters = emitters.data();
  v.leak_count = static_cast<int>(leaks.size());
  v.leaks = leaks.data(), v.leak_fixed = leak_fixed.data(), v.leak_variable = leak_variable.data();
  v.elevation = elevation.data(), v.emitter = emitter.data(), v.tank = tank.data();
  v.can_overflow = can_overflow.data(), v.max_head = max_head.data(), v.min_head = min_head.data();
  v.control_count = static_cast<int>(control_node.size());
  v.control_node = control_node.data(), v.control_link = control_link.data();
  v.control_type = control_type.data(), v.control_status = control_status.data();
  v.control_grade = control_grade.data(), v.control_setting = control_setting.data();
  v.a_nnz = a_nnz;
  v.diag_slot = diag_slot.data(), v.slot_ij = slot_ij.data(), v.slot_ji = slot_ji.data();
  return v;
}

}  // namespace cgs::net
