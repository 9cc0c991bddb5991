#include "network/network.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace cgs::net {

int Network::find_node(std::string_view id) const { return node_index.find(id); }

int Network::find_link(std::string_view id) const { return link_index.find(id); }

// EPANET gives demands without a pattern the default pattern (option PATTERN, "1" unless set)
// when a pattern of that name exists, and a constant factor of 1 otherwise.
int Network::default_pattern() const {
  for (std::size_t p = 0; p < patterns.size(); ++p) {
    if (patterns[p].id == options.default_pattern_id) return static_cast<int>(p);
  }
  return -1;
}

ReportOptions::ReportOptions() {
  field(ReportField::friction).precision = 3;
  for (auto f :
       {ReportField::demand, ReportField::head, ReportField::pressure, ReportField::quality,
        ReportField::flow, ReportField::velocity, ReportField::headloss})
    field(f).enabled = true;
}

double interpolate(const std::vector<double>& x, const std::vector<double>& y, double at) {
  const std::size_t n = x.size();
  if (n == 0) return 0;
  if (at <= x.front()) return y.front();
  for (std::size_t k = 1; k < n; ++k) {
    if (x[k] >= at) {
      const double dx = x[k] - x[k - 1];
      if (std::abs(dx) < 1e-6) return y[k];  // EPANET's TINY
      return y[k] - (x[k] - at) * (y[k] - y[k - 1]) / dx;
    }
  }
  return y.back();
}

namespace {

std::string number_text(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", v);
  return buffer;
}

std::string illegal_limits(const std::string& why) {
  return "illegal PDA pressure limits (EPANET error 208): " + why;
}

// The gap EPANET requires between the two pressures (it compares required - minimum with
// MINPDIFF, so an exact 0.1 gap is allowed).
bool too_close(double minimum, double required) {
  return !(required - minimum >= kMinPressureDifference);
}

std::string closeness(double minimum, double required) {
  return "the required pressure (" + number_text(required) +
         ") must be at least 0.1 above the minimum pressure (" + number_text(minimum) + ")";
}

// EPANET's error 213 for an option that must not be negative.
std::string negative_option(const char* option, double value) {
  return std::string("invalid option value (EPANET error 213): ") + option + " " +
         number_text(value) + " is negative";
}

}  // namespace

std::string set_minimum_pressure(DemandModelOptions& d, double value) {
  if (value < 0.0) return negative_option("MINIMUM PRESSURE", value);
  if (d.required_pressure == kMinPressureDifference)
    d.required_pressure = value + kMinPressureDifference;
  else if (too_close(value, d.required_pressure))
    return illegal_limits(closeness(value, d.required_pressure));
  d.minimum_pressure = value;
  return "";
}

std::string set_required_pressure(DemandModelOptions& d, double value) {
  if (value < 0.0) return negative_option("REQUIRED PRESSURE", value);
  if (too_close(d.minimum_pressure, value))
    return illegal_limits(closeness(d.minimum_pressure, value));
  d.required_pressure = value;
  return "";
}

std::string set_pressure_exponent(DemandModelOptions& d, double value) {
  if (value < 0.0) return negative_option("PRESSURE EXPONENT", value);
  d.exponent = value;
  return "";
}

std::string pda_limits_error(const DemandModelOptions& d) {
  if (d.model != DemandModel::pda) return "";
  if (!std::isfinite(d.minimum_pressure) || !std::isfinite(d.required_pressure) ||
      !std::isfinite(d.exponent))
    return illegal_limits("the pressures and the exponent must be finite numbers");
  if (!(d.exponent > 0.0))
    return illegal_limits("the pressure exponent (" + number_text(d.exponent) +
                          ") must be positive");
  if (d.minimum_pressure < 0.0)
    return illegal_limits("the minimum pressure (" + number_text(d.minimum_pressure) +
                          ") must not be negative");
  if (too_close(d.minimum_pressure, d.required_pressure))
    return illegal_limits(closeness(d.minimum_pressure, d.required_pressure));
  return "";
}

std::string to_string(DemandModel model) { return model == DemandModel::pda ? "PDA" : "DDA"; }

double pcv_loss_coefficient(const Network& net, const Link& valve, double setting) {
  constexpr double kBig = 1.0e8, kSmall = 1.0e-6;  // EPANET's CBIG, CSMALL
  if (setting == kMissing) return 0.0;
  const double open = valve.minor_loss;
  if (setting >= 100.0) return open;
  if (setting <= 0.0) return kBig;
  double kv = setting;  // Kv as % of the fully open Kv: linear without a curve
  if (valve.valve_curve >= 0) {
    const std::vector<double>& x = net.curves[valve.valve_curve].x;
    const std::vector<double>& y = net.curves[valve.valve_curve].y;
    const int n = static_cast<int>(x.size());
    if (setting < x[0]) {
      kv = setting / x[0] * y[0];
    } else if (setting > x[n - 1]) {  // as EPANET: towards (1, 1), the curve's units taken as %
      kv = (setting - x[n - 1]) / (1. - x[n - 1]) * (1. - y[n - 1]) + y[n - 1];
    } else {
      int k2 = 0;
      while (k2 < n && x[k2] < setting) ++k2;
      if (k2 == 0)
        ++k2;
      else if (k2 == n)
        --k2;
      const int k1 = k2 - 1;
      const double slope = (y[k2] - y[k1]) / (x[k2] - x[k1]);
      kv = y[k1] + slope * (setting - x[k1]);
    }
  }
  kv /= 100.;
  kv = std::min(kv, 1.0);
  kv = std::max(kv, kSmall);
  return std::min(open / (kv * kv), kBig);
}

std::string to_string(LinkType type) {
  switch (type) {
    case LinkType::cv_pipe: return "cvpipe";
    case LinkType::pipe: return "pipe";
    case LinkType::pump: return "pump";
    case LinkType::prv: return "prv";
    case LinkType::psv: return "psv";
    case LinkType::pbv: return "pbv";
    case LinkType::fcv: return "fcv";
    case LinkType::tcv: return "tcv";
    case LinkType::gpv: return "gpv";
    case LinkType::pcv: return "pcv";
  }
  return "?";
}

std::string to_string(NodeType type) {
  switch (type) {
    case NodeType::junction: return "junction";
    case NodeType::reservoir: return "reservoir";
    case NodeType::tank: return "tank";
  }
  return "?";
}

const char* to_string(PressureUnits units) {
  static const char* const names[] = {"psi", "m", "kPa", "bar", "ft"};
  return names[static_cast<int>(units)];
}

std::string to_string(FlowUnits units) {
  static const char* names[] = {"CFS", "GPM", "MGD", "IMGD", "AFD", "LPS",
                                "LPM", "MLD", "CMH", "CMD",  "CMS"};
  return names[static_cast<int>(units)];
}

}  // namespace cgs::net
