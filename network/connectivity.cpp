// Which junctions reach a reservoir or tank (hydraulics.hpp's NetworkGraph): a junction that
// none reaches has an undetermined head and makes the junction system singular.
#include <string>

#include "network/hydraulics.hpp"

namespace cgs::net {

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
