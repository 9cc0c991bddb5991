#include "network/network.hpp"

#include <cmath>

namespace cgs::net {

int Network::find_node(const std::string& id) const {
  auto it = node_index.find(id);
  return it == node_index.end() ? -1 : it->second;
}

int Network::find_link(const std::string& id) const {
  auto it = link_index.find(id);
  return it == link_index.end() ? -1 : it->second;
}

// EPANET gives demands without a pattern the default pattern (option PATTERN, "1" unless set)
// when a pattern of that name exists, and a constant factor of 1 otherwise.
int Network::default_pattern() const {
  for (std::size_t p = 0; p < patterns.size(); ++p) {
    if (patterns[p].id == options.default_pattern_id) return static_cast<int>(p);
  }
  return -1;
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

std::string to_string(FlowUnits units) {
  static const char* names[] = {"CFS", "GPM", "MGD", "IMGD", "AFD",
                                "LPS", "LPM", "MLD", "CMH",  "CMD"};
  return names[static_cast<int>(units)];
}

}  // namespace cgs::net
