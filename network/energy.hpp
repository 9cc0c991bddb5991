// Pump energy and cost over a run, as EPANET 2.3.5 computes them (hydraul.c getenergy and
// addenergy, output.c saveenergy) and reports them (report.c writeenergy; the .out's energy
// section, network/epanet_out.hpp; netsolve's JSON report, "energy").
//
// After each solved period the meter takes every pump's power and efficiency (EPANET's
// getallpumpsenergy: head gain x flow x specific gravity / efficiency, the efficiency from the
// pump's [ENERGY] EFFIC curve at the flow scaled to speed 1, with Sarbu and Borza's speed
// correction, else the GLOBAL EFFIC); over the step that follows it adds the pump's time on
// line, efficiency x time, energy, energy per volume and cost (PRICE x PATTERN factor of the
// step's pattern period: the pump's own, else the global ones), and keeps the peak of the total
// power for the DEMAND CHARGE. A pump counts as on line while it is not closed.
#pragma once

#include <vector>

#include "network/hydraulics.hpp"
#include "network/network.hpp"

namespace cgs::net {

// One pump's row of EPANET's "Energy Usage" table, in its units.
struct PumpEnergy {
  int link = -1;               // the pump's link index
  double utilization = 0;      // percent of the duration on line ("% Utilization")
  double efficiency = 0;       // average efficiency while on line, percent ("Avg. Efficiency")
  double kwh_per_volume = 0;   // kWh per million gallons (US units) or per m3 (SI flow units)
  double average_kw = 0;       // average power while on line ("Avg. Kwatts")
  double peak_kw = 0;          // the largest power of any period ("Peak Kwatts")
  double cost_per_day = 0;     // cost over the run scaled to 24 h ("Cost/day")
};

struct EnergyReport {
  std::vector<PumpEnergy> pumps;  // EPANET's pump order: the pumps' link order
  double peak_kw = 0;             // the largest total power of all pumps in a period (Emax)
  double charge_per_kw = 0;       // [ENERGY] DEMAND CHARGE
  double demand_charge = 0;       // peak_kw x charge_per_kw: the .out's demand charge
  double pump_cost = 0;           // the pumps' costs per day summed in pump order
  double total_cost = 0;          // pump_cost + demand_charge
  bool si = false;                // kwh_per_volume per m3 (true) or per million gallons
  const char* volume_unit() const { return si ? "m3" : "Mgal"; }
  // EPANET 2.3.5's .rpt prints "Demand Charge" as demand_charge x charge_per_kw (its saveenergy
  // has already multiplied Emax by the charge when writeenergy multiplies it again) and "Total
  // Cost" with that: a report written to match runepanet's line by line uses these two.
  double report_demand_charge() const { return demand_charge * charge_per_kw; }
  double report_total_cost() const { return pump_cost + report_demand_charge(); }
};

class EnergyMeter {
 public:
  // duration: of the run in seconds (0: a single period counted as one hour, as EPANET's).
  EnergyMeter(const Network& net, long duration);
  // After a period's trials, before the tanks move (EPANET's getallpumpsenergy in nexthyd).
  void measure(const GradientAlgorithm& state);
  // Over the step of `length` seconds from the period at `time` just measured (EPANET's
  // addenergy): nothing for the period at the end of the run (or where the run halted).
  void accumulate(long time, long length);
  // The averages, percentages and cost per day (EPANET's saveenergy).
  EnergyReport report() const;

 private:
  struct Pump {
    int link = -1;
    double power = 0, efficiency = 0, flow = 0;  // this period's (kW, fraction, cfs)
    double hours = 0, efficiency_hours = 0, kwh_per_cfs = 0, kwh = 0, peak_kw = 0, cost = 0;
  };
  const Network& net_;
  long duration_;
  std::vector<Pump> pumps_;
  double peak_total_kw_ = 0;  // EPANET's Emax
  double factor(int pattern, long period) const;
};

}  // namespace cgs::net
