// gga::link_contributions gathered node by node, so that the nodes can be shared among threads
// (hydsolver.cpp runs it on a trial's host team).
//
// link_contributions adds each link's terms to its two end nodes' entries, link after link. A
// node's entries (its row of A, its b, its flow balance xflow) thus receive the terms of its
// links in increasing link order, each link's in a fixed order: gathered from the node's links
// listed in that order, every entry is the same sum, term by term, and the same bits. Rows are
// owned by one node each (an off-diagonal pair's two slots by the two ends), so no two threads
// write the same entry.
#pragma once

#include <vector>

#include "formats/csr.hpp"
#include "network/gga_state.hpp"

namespace cgs::net {

class LinkGather {
 public:
  // Each node's links (ascending) and A's rows, for this network's view and junction matrix.
  void build(const gga::NetworkView& v, const CsrMatrix<double>& A);
  bool built() const { return !ptr_.empty(); }
  // The nodes [begin, end) of member `member` of `members`: about as many links each.
  void share(int member, int members, int& begin, int& end) const;
  // For the nodes [begin, end): what zeroing the system and link_contributions leave in their
  // entries of A, b and xflow.
  void gather(const gga::NetworkView& v, const gga::State& s, int begin, int end) const;

 private:
  // Node i's links at [ptr_[i], ptr_[i + 1]) of the lists below, each with what the gather
  // reads of it besides its state (in one pass, not through the view's link arrays).
  std::vector<int> ptr_;
  std::vector<int> end_;          // 2 k for link k's start node, 2 k + 1 for its end node
  std::vector<int> slot_;         // its A(i, j) slot (-1: the other end is a fixed head)
  std::vector<int> fixed_;        // the other end where it is a fixed head, else -1
  std::vector<index_t> row_ptr_;  // A's rows (the junctions)
};

}  // namespace cgs::net
