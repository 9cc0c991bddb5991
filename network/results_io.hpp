// Hydraulic results in the network's own units: CSV files shaped like EPANET's reference results
// (time-0: node,type,head,pressure,demand / link,type,flow,headloss,status; series:
// time_s,node,head,pressure,demand,cut_off / time_s,link,flow,headloss,status), and the
// comparisons with EPANET's results that the tests and `netsolve --reference` use.
#pragma once

#include <string>
#include <vector>

#include "network/hydraulics.hpp"
#include "network/simulation.hpp"

namespace cgs::net {

// A CSV field as RFC 4180 has it: as it is, or in double quotes (quotes doubled) where it holds
// a comma, a quote or a line break (an EPANET ID may hold a comma).
std::string csv_field(const std::string& s);

void write_nodes_csv(const std::string& path, const Network& net, const HydraulicResults& r);
void write_links_csv(const std::string& path, const Network& net, const HydraulicResults& r);

// Results in the file's units (head ft or m, pressure psi/m/kPa, flow in the UNITS given).
double user_head(const Network& net, double head_ft);
double user_pressure(const Network& net, int node, double head_ft);
double user_flow(const Network& net, double flow_cfs);
double link_headloss(const Network& net, const HydraulicResults& r, int link);  // user units

struct ReferenceComparison {
  int nodes_compared = 0, links_compared = 0, cut_off_skipped = 0;
  double max_head_error = 0;  // network units
  double max_flow_error = 0;  // min(absolute, relative) error, the quantity held to 1e-3
  std::string worst_node, worst_link;
  std::vector<std::string> failures;  // "node X: head 1.0 vs 2.0", at most 20
  int failure_count = 0;
  bool ok() const { return failure_count == 0; }
};

// Heads within head_tolerance and flows within flow_tolerance (relative or absolute) at every node
// and link joined to a fixed head through open links; cut-off nodes are counted, not compared.
ReferenceComparison compare_with_reference(const Network& net, const HydraulicResults& r,
                                           const std::string& nodes_csv,
                                           const std::string& links_csv,
                                           double head_tolerance = 1e-3,
                                           double flow_tolerance = 1e-3,
                                           double flow_noise_floor = 0);

// The flow below which a link's flow is rounding noise: in the low-flow linearisation a link's
// flow follows its head difference with a gradient up to 1/RQtol = 1e7, so heads known to
// 1e-16 relative (1e-13 ft) fix such flows only to about 1e-6..1e-5 cfs. In the network's units.
double flow_noise_floor(const Network& net);

// ---- extended-period series ------------------------------------------------------------------

// The reporting times of a run as CSV, whole or not at all: nodes
// (time_s,node,head,pressure,demand,cut_off,required_demand,delivered_demand,deficit,deficit_pct,
// leakage; demand as EPANET's: delivered plus emitter flow and leakage; cut_off 1 for a junction
// joined to no reservoir or tank through open links at that time; required and delivered
// consumer demand, deficit = required - delivered (EPANET's EN_DEMANDDEFICIT, 0 where nothing is
// required) and its percentage of the required: pressure-driven demand, 0 under DDA; leakage:
// the pipes' leakage out of a junction, EPANET's EN_LEAKAGEFLOW), links
// (time_s,link,flow,headloss,status), tanks (time_s,tank,level,head,volume; level above the
// tank's bottom, volume in ft3 or m3).
void write_node_series_csv(const std::string& path, const Network& net, const SimulationResults& s);
void write_link_series_csv(const std::string& path, const Network& net, const SimulationResults& s);
void write_tank_series_csv(const std::string& path, const Network& net, const SimulationResults& s);

// DIR/<name>_<what>.csv, else DIR/<name>_<what>.csv.gz; empty when neither exists.
std::string find_reference_file(const std::string& dir, const std::string& name,
                                const std::string& what);

struct SeriesComparison {
  int times_compared = 0;           // reporting times found in both
  std::vector<long> times_missing;  // in the reference, not computed (the run stopped before)
  long values_compared = 0, cut_off_skipped = 0;
  double max_head_error = 0, max_flow_error = 0, max_level_error = 0;  // network units
  double max_demand_error = 0;  // junction demands, min(absolute, relative) as flows
  std::string worst_head, worst_flow, worst_level, worst_demand;  // "id at t s"
  int status_mismatches = 0;
  std::vector<std::string> failures;  // the first 20
  int failure_count = 0;
  bool ok() const { return failure_count == 0 && times_missing.empty(); }
};

// The whole series against EPANET's (reference-eps layout, plain or gzipped, or the time-0 layout
// node,type,head,... read as time 0): heads within head_tolerance at every node joined to a
// reservoir or tank at that time (tank levels are tank heads), junction demands (delivered,
// emitters included: EPANET's demand column) and flows within flow_tolerance
// (min of absolute and relative, or absolute below flow_noise_floor) and equal statuses at every
// link not between two cut-off nodes.
SeriesComparison compare_series_with_reference(const Network& net, const SimulationResults& s,
                                               const std::string& nodes_csv,
                                               const std::string& links_csv,
                                               double head_tolerance = 1e-3,
                                               double flow_tolerance = 1e-3,
                                               double flow_noise_floor = 0);

}  // namespace cgs::net
