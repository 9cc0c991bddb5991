#include "network/results_io.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "formats/atomic_file.hpp"
#include "formats/types.hpp"

namespace cgs::net {

double user_head(const Network& net, double head_ft) { return head_ft * net.units.length; }

double user_pressure(const Network& net, int node, double head_ft) {
  return (head_ft - net.nodes[node].elevation) * net.units.pressure;
}

double user_flow(const Network& net, double flow_cfs) { return flow_cfs * net.units.flow; }

// As EPANET reports it: the head difference across the link (signed for pumps), 0 when closed.
double link_headloss(const Network& net, const HydraulicResults& r, int link) {
  if (is_closed(r.status[link])) return 0.0;
  const Link& l = net.links[link];
  const double dh = r.head[l.from] - r.head[l.to];
  return user_head(net, l.type == LinkType::pump ? dh : std::abs(dh));
}

namespace {

std::string format(double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.10g", v);
  return buffer;
}

std::vector<std::vector<std::string>> read_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path, 0, "cannot open reference results");
  std::vector<std::vector<std::string>> rows;
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    std::vector<std::string> fields;
    std::stringstream ss(line);
    std::string field;
    while (std::getline(ss, field, ',')) fields.push_back(field);
    rows.push_back(fields);
  }
  return rows;
}

}  // namespace

void write_nodes_csv(const std::string& path, const Network& net, const HydraulicResults& r) {
  std::ostringstream out;
  out << "node,type,head,pressure,demand\n";
  for (std::size_t i = 0; i < net.nodes.size(); ++i) {
    const int n = static_cast<int>(i);
    out << net.nodes[i].id << ',' << to_string(net.nodes[i].type) << ','
        << format(user_head(net, r.head[i])) << ',' << format(user_pressure(net, n, r.head[i]))
        << ',' << format(user_flow(net, r.demand[i])) << '\n';
  }
  write_file_atomically(path, out.str());  // whole or not at all
}

void write_links_csv(const std::string& path, const Network& net, const HydraulicResults& r) {
  std::ostringstream out;
  out << "link,type,flow,headloss,status\n";
  for (std::size_t k = 0; k < net.links.size(); ++k) {
    out << net.links[k].id << ',' << to_string(net.links[k].type) << ','
        << format(user_flow(net, r.flow[k])) << ','
        << format(link_headloss(net, r, static_cast<int>(k))) << ','
        << (is_closed(r.status[k]) ? "closed" : "open") << '\n';
  }
  write_file_atomically(path, out.str());
}

double flow_noise_floor(const Network& net) { return 1e-5 * net.units.flow; }

ReferenceComparison compare_with_reference(const Network& net, const HydraulicResults& r,
                                           const std::string& nodes_csv,
                                           const std::string& links_csv, double head_tolerance,
                                           double flow_tolerance, double flow_noise_floor) {
  ReferenceComparison c;
  std::vector<bool> cut(net.nodes.size(), false);
  for (int n : r.cut_off_nodes) cut[n] = true;
  auto fail = [&](const std::string& what) {
    if (c.failures.size() < 20) c.failures.push_back(what);
    ++c.failure_count;
  };
  for (const auto& row : read_csv(nodes_csv)) {
    const int n = net.find_node(row.at(0));
    if (n < 0) {
      fail("node " + row[0] + " is in the reference but not in the network");
      continue;
    }
    if (cut[n]) {
      ++c.cut_off_skipped;
      continue;
    }
    const double expected = std::stod(row.at(2)), ours = user_head(net, r.head[n]);
    const double error = std::abs(ours - expected);
    ++c.nodes_compared;
    if (error > c.max_head_error) c.max_head_error = error, c.worst_node = row[0];
    if (!(error <= head_tolerance))
      fail("node " + row[0] + ": head " + format(ours) + " vs EPANET " + format(expected));
  }
  for (const auto& row : read_csv(links_csv)) {
    const int k = net.find_link(row.at(0));
    if (k < 0) {
      fail("link " + row[0] + " is in the reference but not in the network");
      continue;
    }
    if (cut[net.links[k].from] && cut[net.links[k].to]) continue;
    const double expected = std::stod(row.at(2)), ours = user_flow(net, r.flow[k]);
    const double absolute = std::abs(ours - expected);
    const double error = std::min(absolute, absolute / std::max(std::abs(expected), 1e-300));
    ++c.links_compared;
    if (error > c.max_flow_error) c.max_flow_error = error, c.worst_link = row[0];
    if (!(error <= flow_tolerance) && !(absolute <= flow_noise_floor))
      fail("link " + row[0] + ": flow " + format(ours) + " vs EPANET " + format(expected));
  }
  return c;
}

}  // namespace cgs::net
