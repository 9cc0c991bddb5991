#include "network/energy.hpp"

#include "network/epanet_report.hpp"

#include <algorithm>
#include <cmath>

namespace cgs::net {
namespace {

constexpr double kZeroFlow = 1.0e-6;     // EPANET's QZERO (cfs)
constexpr double kKwPerHp = 0.7457;      // EPANET's KWperHP
constexpr double kLpsPerCfs = 28.317;    // EPANET's LPSperCFS
constexpr double kGpmPerCfs = 448.831;   // EPANET's GPMperCFS

}  // namespace

EnergyMeter::EnergyMeter(const Network& net, long duration) : net_(net), duration_(duration) {
  for (std::size_t k = 0; k < net.links.size(); ++k)
    if (net.links[k].type == LinkType::pump) pumps_.push_back(Pump{static_cast<int>(k)});
}

// EPANET's getenergy for a pump: kW = head gain x flow x specific gravity / 8.814 / efficiency x
// KWperHP, the efficiency held within [1, 100] percent.
void EnergyMeter::measure(const GradientAlgorithm& state) {
  for (Pump& p : pumps_) {
    p.flow = state.flow(p.link);
    if (is_closed(state.status(p.link))) {
      p.power = p.efficiency = 0;
      continue;
    }
    const Link& link = net_.links[p.link];
    const net::Pump& pump = net_.pumps[link.pump];
    const double q = std::abs(p.flow);
    const double dh = std::abs(state.head(link.from) - state.head(link.to));
    double e = net_.energy.efficiency;
    if (pump.efficiency_curve >= 0) {
      const double speed = state.setting(p.link);
      const Curve& curve = net_.curves[pump.efficiency_curve];
      e = interpolate(curve.x, curve.y, q / speed * net_.units.flow);
      e = 100.0 - ((100.0 - e) * std::pow(1.0 / speed, 0.1));  // Sarbu and Borza
    }
    e = std::max(std::min(e, 100.0), 1.0) / 100.0;
    p.power = dh * q * net_.options.specific_gravity / 8.814 / e * kKwPerHp;
    p.efficiency = e;
  }
}

double EnergyMeter::factor(int pattern, long period) const {
  const std::vector<double>& f = net_.patterns[pattern].factors;
  return f.empty() ? 1.0 : f[period % static_cast<long>(f.size())];
}

// EPANET's addenergy: the step in hours (a run of duration 0 counts its one period as an hour),
// the price of the step's pattern period, each pump on line adding to its sums.
void EnergyMeter::accumulate(long time, long length) {
  double dt = 0;
  if (duration_ == 0)
    dt = 1.0;
  else if (time < duration_)
    dt = static_cast<double>(length) / 3600.0;
  if (dt == 0.0) return;
  const long period = (time + net_.times.pattern_start) / net_.times.pattern_step;
  const double c0 = net_.energy.price;
  const double f0 =
      net_.energy.price_pattern >= 0 ? factor(net_.energy.price_pattern, period) : 1.0;
  double total_kw = 0;
  for (Pump& p : pumps_) {
    if (p.efficiency == 0.0) continue;
    const net::Pump& pump = net_.pumps[net_.links[p.link].pump];
    const double q = std::max(kZeroFlow, std::abs(p.flow));
    double c = pump.price > 0.0 ? pump.price : c0;
    c *= pump.price_pattern >= 0 ? factor(pump.price_pattern, period) : f0;
    total_kw += p.power;
    p.hours += dt;
    p.efficiency_hours += p.efficiency * dt;
    p.kwh_per_cfs += p.power / q * dt;
    p.kwh += p.power * dt;
    p.peak_kw = std::max(p.peak_kw, p.power);
    p.cost += c * p.power * dt;
  }
  peak_total_kw_ = std::max(peak_total_kw_, total_kw);
}

// EPANET's saveenergy: time on line as a share of the duration, the sums over it as averages,
// the cost per day, energy per million gallons or per cubic metre.
EnergyReport EnergyMeter::report() const {
  EnergyReport r;
  r.si = net_.units.si();
  const double hdur = static_cast<double>(duration_) / 3600.0;
  for (const Pump& p : pumps_) {
    PumpEnergy e;
    e.link = p.link;
    double online = p.hours, efficiency = p.efficiency_hours, per_cfs = p.kwh_per_cfs;
    double kw = p.kwh, cost = p.cost;
    if (hdur == 0.0) {
      cost *= 24.0;
    } else {
      online = p.hours / hdur;
      if (p.hours > 0.0) {
        efficiency /= p.hours;
        per_cfs /= p.hours;
        kw /= p.hours;
      }
      cost *= 24.0 / hdur;
    }
    e.utilization = online * 100.0;
    e.efficiency = efficiency * 100.0;
    e.kwh_per_volume =
        per_cfs * (r.si ? 1000.0 / kLpsPerCfs / 3600.0 : 1.0e6 / kGpmPerCfs / 60.0);
    e.average_kw = kw;
    e.peak_kw = p.peak_kw;
    e.cost_per_day = cost;
    r.pump_cost += cost;
    r.pumps.push_back(e);
  }
  r.peak_kw = peak_total_kw_;
  r.charge_per_kw = net_.energy.demand_charge;
  r.demand_charge = peak_total_kw_ * net_.energy.demand_charge;
  r.total_cost = r.pump_cost + r.demand_charge;
  return r;
}

EnergyTable energy_table(const Network& net, const EnergyReport& energy) {
  EnergyTable table;
  for (const PumpEnergy& p : energy.pumps)
    table.pumps.push_back({net.links[static_cast<std::size_t>(p.link)].id, p.utilization,
                           p.efficiency, p.kwh_per_volume, p.average_kw, p.peak_kw,
                           p.cost_per_day});
  table.demand_charge = energy.report_demand_charge();
  return table;
}

}  // namespace cgs::net
