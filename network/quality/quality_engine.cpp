// The quality engine (quality_engine.hpp): initial state, flow directions and the topological
// order of the nodes, and the routing of one quality step (EPANET 2.3.5's quality.c and
// qualroute.c). Reactions and tank mixing: quality_react.cpp.
#include "network/quality/quality_engine.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace cgs::net {
namespace {

constexpr double kStagnantFlow = 0.005 / 448.831;  // EPANET's Q_STAGNANT: 0.005 gpm in cfs
constexpr double kLitresPerFt3 = 28.317;

// EPANET's getucf: bulk coefficients from per-litre to per-ft^3 for reaction order n.
double order_factor(double order) {
  if (order < 0.0) order = 0.0;
  if (order == 1.0) return 1.0;
  return 1.0 / std::pow(kLitresPerFt3, order - 1.0);
}

}  // namespace

QualityEngine::QualityEngine(const Network& net, QualityHydraulics mode)
    : net_(net),
      in_(net.quality),
      nj_(net.junction_count),
      nl_(static_cast<int>(net.links.size())),
      float_hydraulics_(mode == QualityHydraulics::file) {
  const int nn = static_cast<int>(net.nodes.size());
  adj_start_.assign(nn + 1, 0);
  for (const Link& l : net.links) ++adj_start_[l.from + 1], ++adj_start_[l.to + 1];
  for (int n = 0; n < nn; ++n) adj_start_[n + 1] += adj_start_[n];
  adj_link_.resize(adj_start_[nn]);
  adj_to_.resize(adj_start_[nn]);
  std::vector<int> fill(adj_start_.begin(), adj_start_.end() - 1);
  for (int k = nl_ - 1; k >= 0; --k) {  // EPANET prepends: the last link comes first
    adj_link_[fill[net.links[k].from]++] = k;
    adj_to_[fill[net.links[k].to]] = 1;
    adj_link_[fill[net.links[k].to]++] = k;
  }
  for (const Node& n : net.nodes) node_type_.push_back(n.type);
  for (int k = 0; k < nl_; ++k) {
    diameter_.push_back(net.links[k].diameter);
    if (net.links[k].type == LinkType::pipe) pipes_.push_back(k);
  }
  for (int n = nj_; n < nn; ++n)
    if (net.nodes[n].type == NodeType::tank) tanks_.push_back(n);
  const int chains = nl_ + nn - nj_;
  first_.assign(chains, -1);
  last_.assign(chains, -1);
  dir_.assign(nl_, 0);
  sorted_.resize(nn);
  node_qual_.assign(nn, 0.0);
  tank_c_.assign(nn, 0.0);
  wall_rate_.assign(nl_, 0.0);
  rate_coeff_.assign(nl_, 0.0);
  flow_.assign(nl_, 0.0);
  demand_.assign(nn, 0.0);
  volume_.assign(nn, 0.0);
  indegree_.resize(nn);
  stack_.resize(nn);
}

void QualityEngine::add_segment(int k, double v, double c) {
  int s;
  if (free_ >= 0) {
    s = free_;
    free_ = seg_[s].prev;
  } else {
    s = static_cast<int>(seg_.size());
    seg_.push_back({});
  }
  seg_[s] = {v, c, -1};
  if (first_[k] < 0) first_[k] = s;
  if (last_[k] >= 0) seg_[last_[k]].prev = s;
  last_[k] = s;
  ++balance_.segments;
}

void QualityEngine::free_segment(int k) {
  const int s = first_[k];
  first_[k] = seg_[s].prev;
  if (first_[k] < 0) last_[k] = -1;
  seg_[s].prev = free_;
  free_ = s;
}

void QualityEngine::reverse(int k) {
  int s = first_[k], p = -1;
  first_[k] = last_[k];
  last_[k] = s;
  while (s >= 0) {
    const int next = seg_[s].prev;
    seg_[s].prev = p;
    p = s;
    s = next;
  }
}

double QualityEngine::stored_mass() const {
  double mass = 0.0;
  for (int k = 0; k < nl_; ++k)
    for (int s = first_[k]; s >= 0; s = seg_[s].prev) mass += seg_[s].c * seg_[s].v;
  for (const int n : tanks_)
    for (int s = first_[chain(n)]; s >= 0; s = seg_[s].prev) mass += seg_[s].c * seg_[s].v;
  return mass;
}

double QualityEngine::link_quality(int k) const {
  double vsum = 0.0, msum = 0.0;
  for (int s = first_[k]; s >= 0; s = seg_[s].prev) {
    vsum += seg_[s].v;
    msum += seg_[s].c * seg_[s].v;
  }
  if (vsum > 0.0) return msum / vsum * in_.to_user;
  const Link& l = net_.links[k];
  return (node_qual_[l.from] + node_qual_[l.to]) / 2. * in_.to_user;
}

void QualityEngine::initialise() {
  const int nn = static_cast<int>(net_.nodes.size());
  const bool trace = in_.type == QualityType::trace;
  for (int n = 0; n < nn; ++n) node_qual_[n] = trace ? 0.0 : in_.initial[n];
  for (int n = nj_; n < nn; ++n) tank_c_[n] = node_qual_[n];
  if (trace) node_qual_[in_.trace_node] = 100.0;
  schmidt_ = in_.diffusivity > 0.0 ? net_.options.viscosity / in_.diffusivity : 0.0;
  bulk_ucf_ = order_factor(in_.bulk_order);
  tank_ucf_ = order_factor(in_.tank_order);
  // EPANET's setreactflag.
  reactive_ = in_.type == QualityType::age;
  if (in_.type == QualityType::chemical) {
    for (int k = 0; k < nl_; ++k)
      if (net_.links[k].type <= LinkType::pipe && (in_.bulk[k] != 0.0 || in_.wall[k] != 0.0))
        reactive_ = true;
    for (int n = nj_; n < nn; ++n) reactive_ = reactive_ || in_.tank_bulk[n] != 0.0;
  }
  seg_.clear();
  free_ = -1;
  balance_ = {};
  reactions_ = {};
  init_segments();
  std::fill(dir_.begin(), dir_.end(), 0);
  source_time_ = 0;
  balance_.initial = stored_mass();
  balance_.segments = 0;  // as EPANET's initqual: the count starts after the initial segments
}

// EPANET's initsegs: a pipe (not a CV pipe) holds one segment of its volume at its end node's
// quality; a tank one of its initial volume at its initial quality (2COMP: the mixing zone last,
// the rest before it).
void QualityEngine::init_segments() {
  std::fill(first_.begin(), first_.end(), -1);
  std::fill(last_.begin(), last_.end(), -1);
  for (int k = 0; k < nl_; ++k) {
    const Link& l = net_.links[k];
    if (l.type != LinkType::pipe) continue;
    add_segment(k, 0.785398 * l.length * (l.diameter * l.diameter), node_qual_[l.to]);
  }
  for (int n = nj_; n < static_cast<int>(net_.nodes.size()); ++n) {
    const Node& tank = net_.nodes[n];
    if (tank.type != NodeType::tank) continue;
    const int k = chain(n);
    const double c = in_.initial[n];
    double v = tank.initial_volume;
    add_segment(k, v, c);
    if (in_.mixing[n] != MixModel::two_compartment) continue;
    const double v1 = emax(0.0, v - in_.mixing_fraction[n] * tank.max_volume);
    seg_[first_[k]].v = v1;
    add_segment(k, v - v1, c);
  }
}

void QualityEngine::start_period(const GradientAlgorithm& h, bool last) {
  for (int k = 0; k < nl_; ++k) flow_[k] = is_closed(h.status(k)) ? 0.0 : hydraulic(h.flow(k));
  if (last) return;
  if (reactive_ && in_.type != QualityType::age) rate_coefficients();
  if (flow_direction_changed()) sort_nodes();
}

// EPANET's flowdirchanged: each link's direction (0 below Q_STAGNANT), its segments reversed
// where the flow turned; true where any direction changed.
bool QualityEngine::flow_direction_changed() {
  bool changed = false;
  for (int k = 0; k < nl_; ++k) {
    const double q = flow_[k];
    signed char d = q < 0 ? -1 : 1;
    if (std::abs(q) < kStagnantFlow) d = 0;
    if (d * dir_[k] < 0) reverse(k);
    if (d != dir_[k]) changed = true;
    dir_[k] = d;
  }
  return changed;
}

// EPANET's sortnodes: nodes with no inflow first, each node after the links flowing into it; where
// flows make a cycle, a node next to one sorted last (selectnonstacknode) breaks it.
void QualityEngine::sort_nodes() {
  const int nn = static_cast<int>(net_.nodes.size());
  std::fill(indegree_.begin(), indegree_.end(), 0);
  for (int k = 0; k < nl_; ++k) {
    if (dir_[k] > 0) ++indegree_[net_.links[k].to];
    if (dir_[k] < 0) ++indegree_[net_.links[k].from];
  }
  int stacked = 0, sorted = 0;
  for (int i = 0; i < nn; ++i)
    if (indegree_[i] == 0) stack_[stacked++] = i;
  while (sorted < nn) {
    if (stacked == 0) {
      const int j = select_non_stack_node(sorted);
      if (j < 0) break;
      indegree_[j] = 0;
      stack_[stacked++] = j;
    }
    const int i = stack_[--stacked];
    sorted_[sorted++] = i;
    for (int a = adj_start_[i]; a < adj_start_[i + 1]; ++a) {
      const int k = adj_link_[a];
      if (dir_[k] == 0) continue;
      const int n = dir_[k] < 0 ? net_.links[k].from : net_.links[k].to;
      if (n != i && indegree_[n] > 0 && --indegree_[n] == 0) stack_[stacked++] = n;
    }
  }
  if (sorted < nn)  // EPANET's error 120 ("this shouldn't happen")
    throw std::runtime_error("water quality: the nodes could not be sorted (EPANET error 120)");
}

int QualityEngine::select_non_stack_node(int sorted) const {
  for (int i = sorted - 1; i >= 0; --i) {
    const int m = sorted_[i];
    for (int a = adj_start_[m]; a < adj_start_[m + 1]; ++a) {
      const Link& l = net_.links[adj_link_[a]];
      const int n = l.from == m ? l.to : l.from;
      if (indegree_[n] > 0) return n;
    }
  }
  for (int i = 0; i < static_cast<int>(net_.nodes.size()); ++i)
    if (indegree_[i] > 0) return i;
  return -1;
}

void QualityEngine::advance(const GradientAlgorithm& h, long time, long length) {
  if (length > 0) {
    for (int k = 0; k < nl_; ++k) flow_[k] = is_closed(h.status(k)) ? 0.0 : hydraulic(h.flow(k));
    for (int n = 0; n < nj_; ++n) demand_[n] = hydraulic(h.node_demand(n));
    for (int n = nj_; n < static_cast<int>(net_.nodes.size()); ++n) volume_[n] = h.volume(n);
    source_time_ = time;
    count_reactions_ = time + length >= net_.times.report_start;  // EPANET's Htime >= Rstart
    for (long done = 0; done < length;) {
      const long dt = std::min(in_.step, length - done);
      done += dt;
      transport(dt);
    }
  }
  // EPANET's evalmassbalance.
  QualityMassBalance& b = balance_;
  b.final = stored_mass();
  double in = b.initial + b.inflow, out = b.outflow + b.final;
  if (b.reacted > 0.0)
    out += b.reacted;
  else
    in -= b.reacted;
  b.ratio = in == 0.0 ? 1.0 : out / in;
}

// EPANET's transport: reactions over dt, then each node in topological order takes in what its
// inflowing links deliver, mixes it, and sends its quality into its outflowing links.
void QualityEngine::transport(long dt) {
  if (reactive_) {
    react_pipes(dt);
    react_tanks(dt);
  }
  for (const int n : sorted_) {
    double volin = 0.0, massin = 0.0, volout = 0.0;
    const int begin = adj_start_[n], end = adj_start_[n + 1];
    for (int a = begin; a < end; ++a) {  // inflow: the node is the link's downstream end
      const int k = adj_link_[a];
      if ((dir_[k] < 0) != static_cast<bool>(adj_to_[a]))
        node_inflow(k, dt, volin, massin);
      else
        volout += std::abs(flow_[k]);
    }
    if (node_type_[n] == NodeType::junction) volout += emax(0.0, demand_[n]);
    volout *= dt;
    const double c = node_quality_after(n, volin, massin, volout, dt);
    for (int a = begin; a < end; ++a) {
      const int k = adj_link_[a];
      if ((dir_[k] < 0) == static_cast<bool>(adj_to_[a])) node_outflow(k, c, dt);
    }
    update_mass_balance(n, massin, volout, dt);
  }
}

// EPANET's evalnodeinflow: the link's flow volume over dt taken from its leading segments.
void QualityEngine::node_inflow(int k, long dt, double& volin, double& massin) {
  double v = std::abs(flow_[k]) * dt;
  while (v > 0.0) {
    const int s = first_[k];
    if (s < 0) break;
    const double vseg = emin(seg_[s].v, v);
    volin += vseg;
    massin += vseg * seg_[s].c;
    v -= vseg;
    if (v >= 0.0 && vseg >= seg_[s].v) {
      free_segment(k);
      --balance_.segments;
    } else {
      seg_[s].v -= vseg;
    }
  }
}

// EPANET's findnodequal: a junction's inflow mixed (diluted by a negative demand), a tank's
// mixing model, then the trace node's 100 % or a chemical source added.
double QualityEngine::node_quality_after(int n, double volin, double massin, double volout,
                                         long dt) {
  const NodeType type = node_type_[n];
  if (type == NodeType::junction) {
    volin -= emin(0.0, demand_[n]) * dt;
    if (volin > 0.0)
      node_qual_[n] = massin / volin;
    else if (reactive_)
      node_qual_[n] = no_flow_quality(n);
  } else if (type == NodeType::tank) {
    node_qual_[n] = mix_tank(n, volin, massin, volout);
  }
  source_qual_ = 0.0;
  if (in_.type == QualityType::trace) {
    if (n == in_.trace_node) {
      source_qual_ = type == NodeType::reservoir ? 100.0 : emax(100.0 - node_qual_[n], 0.0);
      node_qual_[n] = 100.0;
    }
    return node_qual_[n];
  }
  source_qual_ = source_quality(n, volout, dt);
  if (source_qual_ == 0.0) return node_qual_[n];
  switch (type) {
    case NodeType::junction: node_qual_[n] += source_qual_; return node_qual_[n];
    case NodeType::tank: return node_qual_[n] + source_qual_;
    case NodeType::reservoir: node_qual_[n] = source_qual_; return source_qual_;
  }
  return node_qual_[n];
}

// EPANET's noflowqual: the mean of the nearest segments of the node's links.
double QualityEngine::no_flow_quality(int n) const {
  double c = 0.0;
  int count = 0;
  for (int a = adj_start_[n]; a < adj_start_[n + 1]; ++a) {
    const int k = adj_link_[a];
    const Link& l = net_.links[k];
    const bool inflow = (l.to == n && dir_[k] >= 0) || (l.from == n && dir_[k] < 0);
    if (inflow && first_[k] >= 0) {
      c += seg_[first_[k]].c;
      ++count;
    } else if (!inflow && last_[k] >= 0) {
      c += seg_[last_[k]].c;
      ++count;
    }
  }
  return count > 0 ? c / count : c;
}

// EPANET's evalnodeoutflow: the link's flow volume over dt at quality c joins its upstream
// segment where their qualities are within the tolerance, else becomes a new one.
void QualityEngine::node_outflow(int k, double c, long dt) {
  const double v = std::abs(flow_[k]) * dt;
  if (v == 0.0) return;
  const int s = last_[k];
  if (s >= 0 && std::abs(seg_[s].c - c) < in_.tolerance) {
    seg_[s].c = (seg_[s].c * seg_[s].v + c * v) / (seg_[s].v + v);
    seg_[s].v += v;
  } else {
    add_segment(k, v, c);
  }
}

void QualityEngine::update_mass_balance(int n, double massin, double volout, long dt) {
  double lost = 0.0, added = 0.0;
  switch (node_type_[n]) {
    case NodeType::junction:
      lost = emax(0.0, demand_[n]) * dt * node_qual_[n];
      added = source_qual_ * volout;
      break;
    case NodeType::reservoir:
      lost = massin;
      added = (source_qual_ > 0.0 ? source_qual_ : node_qual_[n]) * volout;
      break;
    case NodeType::tank: added = source_qual_ * volout; break;
  }
  balance_.outflow += lost;
  balance_.inflow += added;
}

// EPANET's findsourcequal and sourcequal: the concentration a chemical source adds to the node's
// outflow over dt (its pattern's factor at the start of the hydraulic step).
double QualityEngine::source_quality(int n, double volout, long dt) {
  if (in_.type != QualityType::chemical || in_.source[n] < 0) return 0.0;
  const QualitySource& s = in_.sources[in_.source[n]];
  if (s.strength == 0.0 || volout / dt <= kStagnantFlow) return 0.0;
  double c = s.type == SourceType::mass ? s.strength / 60.0 : s.strength / in_.to_user;
  if (s.pattern >= 0) {
    const auto& f = net_.patterns[s.pattern].factors;
    const long period = (source_time_ + net_.times.pattern_start) / net_.times.pattern_step;
    if (!f.empty()) c *= f[period % static_cast<long>(f.size())];
  }
  switch (s.type) {
    case SourceType::concen:
      if (net_.is_junction(n)) c = demand_[n] < 0.0 ? -c * demand_[n] * dt / volout : 0.0;
      break;
    case SourceType::mass: c = c * dt / volout; break;
    case SourceType::setpoint: c = emax(c - node_qual_[n], 0.0); break;
    case SourceType::flowpaced: break;
  }
  if (count_reactions_) reactions_.source += c * volout;  // EPANET's massadded
  return c;
}

}  // namespace cgs::net
