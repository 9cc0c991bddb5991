#include "network/link_gather.hpp"

#include <algorithm>

namespace cgs::net {

void LinkGather::build(const gga::NetworkView& v, const CsrMatrix<double>& A) {
  const int nodes = v.o.nodes, links = v.o.links;
  ptr_.assign(nodes + 1, 0);
  for (int k = 0; k < links; ++k) ++ptr_[v.from[k] + 1], ++ptr_[v.to[k] + 1];
  for (int i = 0; i < nodes; ++i) ptr_[i + 1] += ptr_[i];
  end_.assign(ptr_[nodes], 0);
  std::vector<int> next(ptr_.begin(), ptr_.end() - 1);
  for (int k = 0; k < links; ++k) {  // ascending k: each node's list in link order
    end_[next[v.from[k]]++] = 2 * k;
    end_[next[v.to[k]]++] = 2 * k + 1;
  }
  slot_.assign(end_.size(), -1);
  fixed_.assign(end_.size(), -1);
  for (std::size_t t = 0; t < end_.size(); ++t) {
    const int k = end_[t] >> 1;
    const bool start = (end_[t] & 1) == 0;
    slot_[t] = start ? v.slot_ij[k] : v.slot_ji[k];
    const int other = start ? v.to[k] : v.from[k];
    if (other >= v.o.nj) fixed_[t] = other;
  }
  row_ptr_ = A.row_ptr;
}

void LinkGather::share(int member, int members, int& begin, int& end) const {
  const int nodes = static_cast<int>(ptr_.size()) - 1;
  auto first_at = [&](int m) {  // the first node whose links start at or past m/members of all
    if (m >= members) return nodes;
    const long target = static_cast<long>(ptr_[nodes]) * m / members;
    return static_cast<int>(std::lower_bound(ptr_.begin(), ptr_.end() - 1, target) - ptr_.begin());
  };
  begin = first_at(member);
  end = first_at(member + 1);
}

// Node i's terms in link_contributions' order: per link, at its start node xflow -= q, A(i, j)
// += -P, diagonal += P, b += Y, then b += P H_to where the end is a fixed head; at its end node
// xflow += q, A(i, j) += -P, b += P H_from where the start is a fixed head, diagonal += P,
// b += -Y. Links with P = 0 (control valves with a setting) add nothing.
void LinkGather::gather(const gga::NetworkView& v, const gga::State& s, int begin, int end) const {
  const int nj = v.o.nj;
  for (int i = begin; i < end; ++i) {
    double xflow = 0.0, diagonal = 0.0, b = 0.0;
    if (i < nj)
      for (index_t e = row_ptr_[i]; e < row_ptr_[i + 1]; ++e) s.A[e] = 0.0;
    for (int t = ptr_[i]; t < ptr_[i + 1]; ++t) {
      const int k = end_[t] >> 1;
      const double P = s.P[k];
      if (P == 0.0) continue;
      if ((end_[t] & 1) == 0) {  // i is the link's start node
        xflow -= s.flow[k];
        if (i >= nj) continue;
        if (slot_[t] >= 0) s.A[slot_[t]] += -P;
        diagonal += P;
        b += s.Y[k];
        if (fixed_[t] >= 0) b += P * s.head[fixed_[t]];
      } else {
        xflow += s.flow[k];
        if (i >= nj) continue;
        if (slot_[t] >= 0) s.A[slot_[t]] += -P;
        if (fixed_[t] >= 0) b += P * s.head[fixed_[t]];
        diagonal += P;
        b += -s.Y[k];
      }
    }
    s.xflow[i] = xflow;
    if (i >= nj) continue;
    s.A[v.diag_slot[i]] = diagonal;
    s.b[i] = b;
  }
}

}  // namespace cgs::net
