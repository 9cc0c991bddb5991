// Hydraulic results in the network's own units: CSV files shaped like EPANET's reference results
// (node,type,head,pressure,demand / link,type,flow,headloss,status), and the comparison with
// EPANET's results that the tests and `netsolve --reference` use.
#pragma once

#include <string>
#include <vector>

#include "network/hydraulics.hpp"

namespace cgs::net {

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

}  // namespace cgs::net
