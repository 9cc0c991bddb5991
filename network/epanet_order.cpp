#include "network/epanet_order.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>

namespace cgs::net {
namespace {

// The quotient graph of the elimination and the degree lists, in the representation whose
// traversal order decides every tie. Nodes are numbered from 1: in the adjacency storage 0 ends
// a list and -e continues it in the storage of element e (an eliminated node's slots are reused
// for the lists of the elements formed from it). Per node:
//   forward_  > 0: next node in its degree list; for an eliminated node -(its number); for a node
//             merged into a supernode -(the supernode's representative); while a node waits for
//             a degree update: its count of quotient neighbours + 1
//   backward_ > 0: previous node in its degree list; -d: first of list d; 0: waits for a degree
//             update; -kNever: merged or outmatched, never in a degree list again
//   size_     nodes the supernode stands for (0 once merged into another)
class MinimumDegree {
 public:
  explicit MinimumDegree(const std::vector<std::vector<int>>& neighbours);
  std::vector<int> order();

 private:
  static constexpr int kNever = INT_MAX;

  void start_degree_lists();
  void take_isolated_nodes();
  void unlink_from_degree_list(int node);
  void put_in_degree_list(int node, int degree);
  void next_tag();
  void eliminate(int mdnode);
  void gather_reachable_set(int mdnode);
  void update_reachable_nodes(int mdnode);
  void update_degrees(int ehead);
  void update_element(int element, int mtag);
  int degree_of_two_neighbour_node(int enode, int element, int deg0);
  int degree_of_node(int enode, int deg0);
  std::vector<int> number();

  int n_;
  std::vector<int> start_, adj_;  // node v's storage: adj_[start_[v] .. start_[v+1]-1]
  std::vector<int> head_, forward_, backward_, size_, list_, marker_;
  int tag_ = 1, mdeg_ = 0, num_ = 1;
};

MinimumDegree::MinimumDegree(const std::vector<std::vector<int>>& neighbours)
    : n_(static_cast<int>(neighbours.size())) {
  start_.assign(n_ + 2, 0);
  adj_.assign(1, 0);  // slot 0 unused: positions count from 1
  start_[1] = 1;
  for (int v = 0; v < n_; ++v) {
    for (int u : neighbours[v]) adj_.push_back(u + 1);
    start_[v + 2] = static_cast<int>(adj_.size());
  }
  head_.assign(n_ + 2, 0);
  forward_.assign(n_ + 1, 0);
  backward_.assign(n_ + 1, 0);
  size_.assign(n_ + 1, 1);
  list_.assign(n_ + 1, 0);
  marker_.assign(n_ + 1, 0);
}

// Every node in the list of its degree + 1, a node going to the front of its list.
void MinimumDegree::start_degree_lists() {
  for (int v = 1; v <= n_; ++v) put_in_degree_list(v, start_[v + 1] - start_[v] + 1);
}

void MinimumDegree::put_in_degree_list(int node, int degree) {
  const int first = head_[degree];
  forward_[node] = first;
  backward_[node] = -degree;
  if (first > 0) backward_[first] = node;
  head_[degree] = node;
}

void MinimumDegree::unlink_from_degree_list(int node) {
  const int previous = backward_[node];
  if (previous == 0 || previous == -kNever) return;
  const int next = forward_[node];
  if (next > 0) backward_[next] = previous;
  if (previous > 0)
    forward_[previous] = next;
  else
    head_[-previous] = next;
}

// Nodes without neighbours (list 1) are numbered first, in their list's order.
void MinimumDegree::take_isolated_nodes() {
  for (int node = head_[1]; node > 0;) {
    const int next = forward_[node];
    marker_[node] = kNever;
    forward_[node] = -num_++;
    node = next;
  }
}

void MinimumDegree::next_tag() {
  if (++tag_ < kNever) return;
  tag_ = 1;
  for (int v = 1; v <= n_; ++v)
    if (marker_[v] < kNever) marker_[v] = 0;
}

std::vector<int> MinimumDegree::order() {
  if (n_ == 0) return {};
  start_degree_lists();
  take_isolated_nodes();
  if (num_ > n_) return number();
  tag_ = 1;
  head_[1] = 0;
  mdeg_ = 2;
  for (;;) {
    while (head_[mdeg_] <= 0) ++mdeg_;
    // One node of minimum degree is eliminated, then the degrees are updated (EPANET's
    // delta = -1: no multiple elimination).
    const int mdnode = head_[mdeg_];
    const int next = forward_[mdnode];
    head_[mdeg_] = next;
    if (next > 0) backward_[next] = -mdeg_;
    forward_[mdnode] = -num_;
    if (num_ + size_[mdnode] > n_) break;
    next_tag();
    eliminate(mdnode);
    num_ += size_[mdnode];
    list_[mdnode] = 0;  // the list of elements formed in this step: mdnode alone
    if (num_ > n_) break;
    update_degrees(mdnode);
  }
  return number();
}

// mdnode becomes an element: its reachable set (uneliminated neighbours, and those of the
// elements it touches, which it absorbs) is stored in its slots, continued in the absorbed
// elements' slots; every node of the set is taken out of the degree lists for an update.
void MinimumDegree::eliminate(int mdnode) {
  gather_reachable_set(mdnode);
  update_reachable_nodes(mdnode);
}

void MinimumDegree::gather_reachable_set(int mdnode) {
  marker_[mdnode] = tag_;
  const int first = start_[mdnode], last = start_[mdnode + 1] - 1;
  int elements = 0;  // the absorbed elements, linked through list_
  int write = first, limit = last;
  for (int i = first; i <= last; ++i) {
    const int nabor = adj_[i];
    if (nabor == 0) break;
    if (marker_[nabor] >= tag_) continue;
    marker_[nabor] = tag_;
    if (forward_[nabor] < 0) {
      list_[nabor] = elements;
      elements = nabor;
    } else {
      adj_[write++] = nabor;
    }
  }
  for (; elements > 0; elements = list_[elements]) {
    adj_[limit] = -elements;
    int block = elements;
    bool done = false;
    while (!done) {
      const int from = start_[block], to = start_[block + 1] - 1;
      done = true;
      for (int j = from; j <= to; ++j) {
        const int node = adj_[j];
        if (node < 0) {  // the element's list goes on elsewhere
          block = -node;
          done = false;
          break;
        }
        if (node == 0) break;
        if (marker_[node] >= tag_ || forward_[node] < 0) continue;
        marker_[node] = tag_;
        while (write >= limit) {  // this block is full: go on in the next linked one
          const int next_block = -adj_[limit];
          write = start_[next_block];
          limit = start_[next_block + 1] - 1;
        }
        adj_[write++] = node;
      }
    }
  }
  if (write <= limit) adj_[write] = 0;
}

void MinimumDegree::update_reachable_nodes(int mdnode) {
  int block = mdnode;
  for (;;) {
    const int from = start_[block], to = start_[block + 1] - 1;
    bool next_block = false;
    for (int i = from; i <= to; ++i) {
      const int rnode = adj_[i];
      if (rnode < 0) {
        block = -rnode;
        next_block = true;
        break;
      }
      if (rnode == 0) return;
      unlink_from_degree_list(rnode);
      // Keep the quotient neighbours not in this elimination, then add mdnode (now an element).
      const int jfirst = start_[rnode], jlast = start_[rnode + 1] - 1;
      int keep = jfirst;
      for (int j = jfirst; j <= jlast; ++j) {
        const int nabor = adj_[j];
        if (nabor == 0) break;
        if (marker_[nabor] >= tag_) continue;
        adj_[keep++] = nabor;
      }
      const int kept = keep - jfirst;
      if (kept <= 0) {  // nothing but mdnode around it: merged into mdnode's supernode
        size_[mdnode] += size_[rnode];
        size_[rnode] = 0;
        marker_[rnode] = kNever;
        forward_[rnode] = -mdnode;
        backward_[rnode] = -kNever;
      } else {  // waits for a degree update
        forward_[rnode] = kept + 1;
        backward_[rnode] = 0;
        adj_[keep++] = mdnode;
        if (keep <= jlast) adj_[keep] = 0;
      }
    }
    if (!next_block) return;
  }
}

// The external degrees of the nodes around the new elements (the list from ehead through list_).
void MinimumDegree::update_degrees(int ehead) {
  const int mdeg0 = mdeg_ - 1;  // mdeg + delta
  for (int element = ehead; element > 0; element = list_[element]) {
    int mtag = tag_ + mdeg0;
    if (mtag >= kNever) {
      tag_ = 1;
      for (int v = 1; v <= n_; ++v)
        if (marker_[v] < kNever) marker_[v] = 0;
      mtag = tag_ + mdeg0;
    }
    update_element(element, mtag);
    tag_ = mtag;
  }
}

void MinimumDegree::update_element(int element, int mtag) {
  // The element's nodes that wait for an update, in two lists: those with two quotient
  // neighbours (this element and one other) and the rest; deg0 counts the element's nodes.
  int q2head = 0, qxhead = 0, deg0 = 0;
  int block = element;
  for (bool more = true; more;) {
    more = false;
    const int from = start_[block], to = start_[block + 1] - 1;
    for (int i = from; i <= to; ++i) {
      const int enode = adj_[i];
      if (enode < 0) {
        block = -enode;
        more = true;
        break;
      }
      if (enode == 0) break;
      if (size_[enode] == 0) continue;
      deg0 += size_[enode];
      marker_[enode] = mtag;
      if (backward_[enode] != 0) continue;
      if (forward_[enode] == 2) {
        list_[enode] = q2head;
        q2head = enode;
      } else {
        list_[enode] = qxhead;
        qxhead = enode;
      }
    }
  }
  for (int enode = q2head; enode > 0; enode = list_[enode]) {
    if (backward_[enode] != 0) continue;
    ++tag_;
    const int deg = degree_of_two_neighbour_node(enode, element, deg0);
    put_in_degree_list(enode, deg - size_[enode] + 1);
    if (deg - size_[enode] + 1 < mdeg_) mdeg_ = deg - size_[enode] + 1;
  }
  for (int enode = qxhead; enode > 0; enode = list_[enode]) {
    if (backward_[enode] != 0) continue;
    ++tag_;
    const int deg = degree_of_node(enode, deg0);
    put_in_degree_list(enode, deg - size_[enode] + 1);
    if (deg - size_[enode] + 1 < mdeg_) mdeg_ = deg - size_[enode] + 1;
  }
}

// A node whose quotient neighbours are this element and one other: its degree is the element's
// nodes and the other's. A node of the other element that is also this element's and waits with
// two neighbours is indistinguishable from enode: merged into it; one with more is outmatched.
int MinimumDegree::degree_of_two_neighbour_node(int enode, int element, int deg0) {
  int deg = deg0;
  const int first = start_[enode];
  int nabor = adj_[first];
  if (nabor == element) nabor = adj_[first + 1];
  if (forward_[nabor] >= 0) return deg + size_[nabor];
  int block = nabor;
  for (;;) {
    const int from = start_[block], to = start_[block + 1] - 1;
    bool next_block = false;
    for (int i = from; i <= to; ++i) {
      const int node = adj_[i];
      if (node == enode) continue;
      if (node < 0) {
        block = -node;
        next_block = true;
        break;
      }
      if (node == 0) return deg;
      if (size_[node] == 0) continue;
      if (marker_[node] < tag_) {
        marker_[node] = tag_;
        deg += size_[node];
        continue;
      }
      if (backward_[node] != 0) continue;
      if (forward_[node] == 2) {
        size_[enode] += size_[node];
        size_[node] = 0;
        marker_[node] = kNever;
        forward_[node] = -enode;
        backward_[node] = -kNever;
      } else {
        backward_[node] = -kNever;
      }
    }
    if (!next_block) return deg;
  }
}

// Any other node: its degree counts its uneliminated neighbours and the nodes of its elements.
int MinimumDegree::degree_of_node(int enode, int deg0) {
  int deg = deg0;
  const int first = start_[enode], last = start_[enode + 1] - 1;
  for (int i = first; i <= last; ++i) {
    const int nabor = adj_[i];
    if (nabor == 0) return deg;
    if (marker_[nabor] >= tag_) continue;
    marker_[nabor] = tag_;
    if (forward_[nabor] >= 0) {
      deg += size_[nabor];
      continue;
    }
    int block = nabor;
    for (bool more = true; more;) {
      more = false;
      const int from = start_[block], to = start_[block + 1] - 1;
      for (int j = from; j <= to; ++j) {
        const int node = adj_[j];
        if (node < 0) {
          block = -node;
          more = true;
          break;
        }
        if (node == 0) break;
        if (marker_[node] < tag_) {
          marker_[node] = tag_;
          deg += size_[node];
        }
      }
    }
  }
  return deg;
}

// Numbers from the elimination: a supernode's representative has -(its number) in forward_, a
// merged node -(the node it was merged into); merged nodes follow their representative.
std::vector<int> MinimumDegree::number() {
  std::vector<int> perm(n_ + 1), invp(n_ + 1);
  for (int v = 1; v <= n_; ++v) perm[v] = size_[v] <= 0 ? forward_[v] : -forward_[v];
  for (int v = 1; v <= n_; ++v) {
    if (perm[v] > 0) continue;
    int root = v;
    while (perm[root] <= 0) root = -perm[root];
    const int num = perm[root] + 1;
    invp[v] = -num;
    perm[root] = num;
    for (int father = v, next; (next = -perm[father]) > 0; father = next) perm[father] = -root;
  }
  for (int v = 1; v <= n_; ++v)
    if (size_[v] > 0) invp[v] = forward_[v];  // -(its number)
  std::vector<int> order(n_);
  for (int v = 1; v <= n_; ++v) order[-invp[v] - 1] = v - 1;
  return order;
}

}  // namespace

std::vector<int> multiple_minimum_degree(const std::vector<std::vector<int>>& neighbours) {
  return MinimumDegree(neighbours).order();
}

std::vector<std::vector<int>> epanet_junction_graph(const Network& net) {
  // Every link to the front of its end nodes' lists, parallel links marked and dropped: a pair
  // keeps the entry of its first link, at the place that link put it. Flat arrays and one sort
  // (a set per node made this 12% of a 25,000-junction network's steady-state run).
  const int nodes = static_cast<int>(net.nodes.size());
  const std::size_t links = net.links.size();
  std::vector<std::pair<std::uint64_t, std::size_t>> pairs(links);  // (node pair, link)
  for (std::size_t k = 0; k < links; ++k) {
    const auto a = static_cast<std::uint32_t>(std::min(net.links[k].from, net.links[k].to));
    const auto b = static_cast<std::uint32_t>(std::max(net.links[k].from, net.links[k].to));
    pairs[k] = {(std::uint64_t(a) << 32) | b, k};
  }
  std::sort(pairs.begin(), pairs.end());
  std::vector<char> parallel(links, 0);
  for (std::size_t t = 1; t < links; ++t)
    parallel[pairs[t].second] = pairs[t].first == pairs[t - 1].first;
  // Each node's entries in link order (EPANET's list is them read backwards).
  std::vector<int> start(nodes + 1, 0);
  for (const Link& link : net.links) ++start[link.from + 1], ++start[link.to + 1];
  for (int v = 0; v < nodes; ++v) start[v + 1] += start[v];
  std::vector<int> entry(2 * links), fill(start.begin(), start.end() - 1);
  for (std::size_t k = 0; k < links; ++k) {
    const int i = net.links[k].from, j = net.links[k].to;
    entry[fill[i]++] = parallel[k] ? -1 : j;
    entry[fill[j]++] = parallel[k] ? -1 : i;
  }
  std::vector<std::vector<int>> graph(net.junction_count);
  for (int v = 0; v < net.junction_count; ++v) {
    graph[v].reserve(start[v + 1] - start[v]);
    for (int e = start[v + 1] - 1; e >= start[v]; --e)
      if (entry[e] >= 0 && net.is_junction(entry[e])) graph[v].push_back(entry[e]);
  }
  return graph;
}

std::vector<int> epanet_elimination_order(const Network& net) {
  return multiple_minimum_degree(epanet_junction_graph(net));
}

}  // namespace cgs::net
