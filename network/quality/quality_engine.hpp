// Water quality as EPANET 2.3.5 computes it (its quality.c, qualroute.c, qualreact.c): every
// pipe a chain of Lagrangian segments (volume, concentration), moved each quality step by the
// hydraulic flows; nodes mixed, flow-weighted, in the topological order of the flows; tanks by
// their mixing model (MIXED, 2COMP, FIFO, LIFO); bulk reactions of order n (limiting potential),
// wall reactions of order 0 or 1 limited by mass transfer, water age, source tracing, chemical
// sources (CONCEN, MASS, SETPOINT, FLOWPACED) and EPANET's mass balance.
//
// It runs beside the hydraulics (network/simulation.cpp), as EPANET's EN_runQ and EN_nextQ do
// beside EN_runH and EN_nextH: start_period() at each period once its flows are solved,
// advance() over the step to the next period once that step is known (the tanks and rules moved
// over it), in quality steps cut at the step's end.
#pragma once

#include <vector>

#include "network/hydraulics.hpp"
#include "network/network.hpp"

namespace cgs::net {

// EPANET's MAX and MIN macros: with a NaN they give what EPANET's give (MAX(0, NaN) is NaN, where
// std::max(0.0, NaN) is 0), so that a NaN EPANET computes (a bulk order below 1 at a zero
// concentration: 0 x inf) is netsolve's too, never a different number.
inline double emax(double x, double y) { return x >= y ? x : y; }
inline double emin(double x, double y) { return x <= y ? x : y; }

// EPANET's MassBalance (internal units: concentration x ft^3; hours x ft^3 for AGE).
struct QualityMassBalance {
  double initial = 0, inflow = 0, outflow = 0, reacted = 0, final = 0;
  double ratio = 0;  // (outflow + final [+ reacted]) / (initial + inflow [- reacted])
  int segments = 0;  // EPANET's segCount: segments added less those used up in pipes, since the start
};

// EPANET's Wbulk, Wwall, Wtank and Wsource (internal mass units): the mass reacted in the pipes'
// water, at their walls, in the tanks, and added by the sources, summed over the steps that end
// at or after REPORT START (CHEMICAL only; 0 for AGE and TRACE). Its .out holds them per hour.
struct QualityReactions {
  double bulk = 0, wall = 0, tank = 0, source = 0;
};

// Which hydraulics the routing reads. EPANET's runepanet (and EN_solveQ) runs the quality after
// the hydraulics, from its scratch hydraulics file: flows and demands rounded to float32. Its
// toolkit's EN_runQ/EN_nextQ called beside EN_runH/EN_nextH read the doubles. Each is EPANET's to
// the last bit in its own mode; they differ by a relative 1e-5 or so.
enum class QualityHydraulics { file, doubles };

class QualityEngine {
 public:
  // The network's quality input (Network::quality); its type must not be NONE.
  explicit QualityEngine(const Network& net, QualityHydraulics mode = QualityHydraulics::file);

  // EPANET's initqual: initial qualities, one segment per pipe and tank (two for 2COMP).
  void initialise();
  // EPANET's runqual at a period's time: wall rate coefficients and flow directions from the
  // period's flows (segments reversed where a flow turned), the nodes sorted where a direction
  // changed. Nothing at the duration's end (`last`).
  void start_period(const GradientAlgorithm& hydraulics, bool last);
  // EPANET's nextqual: routing over the `length` seconds from `time` in quality steps, with the
  // flows, demands and tank volumes the hydraulics hold now.
  void advance(const GradientAlgorithm& hydraulics, long time, long length);

  // EPANET's EN_QUALITY and EN_LINKQUAL, in the file's units (AGE: hours, TRACE: percent).
  double node_quality(int node) const { return node_qual_[node] * in_.to_user; }
  double link_quality(int link) const;
  // EPANET's massbalance as its evalmassbalance leaves it after the last advance().
  const QualityMassBalance& mass_balance() const { return balance_; }
  // EPANET's PipeRateCoeff in the file's units (mass/L/day): a pipe's volume-weighted reaction
  // rate over the last quality step routed; 0 from each start_period() until the next step (as
  // its ratecoeffs), and for AGE, TRACE, valves, pumps and CV pipes.
  double link_reaction_rate(int link) const { return rate_coeff_[link] * in_.to_user; }
  const QualityReactions& reactions() const { return reactions_; }

 private:
  struct Segment {
    double v, c;
    int prev;  // the next segment upstream; -1: none
  };

  const Network& net_;
  const QualityInput& in_;
  int nj_, nl_;
  double schmidt_ = 0, bulk_ucf_ = 1, tank_ucf_ = 1;
  bool reactive_ = false;
  // Adjacency as EPANET's buildadjlists leaves it: each node's links, the last one first, and
  // whether the node is the link's end node (the routing reads these, not the Link records).
  std::vector<int> adj_start_, adj_link_;
  std::vector<unsigned char> adj_to_;
  std::vector<NodeType> node_type_;
  std::vector<double> diameter_;
  std::vector<int> pipes_, tanks_;  // the links that react (pipes, not CV pipes); the tanks
  // Segment chains: links 0..nl-1, then tanks and reservoirs (node nj + i at nl + i). first: the
  // downstream end (the oldest water), last: the upstream end.
  std::vector<Segment> seg_;
  int free_ = -1;
  std::vector<int> first_, last_;
  std::vector<signed char> dir_;  // per link: +1, -1, 0 (stagnant), EPANET's FlowDir
  std::vector<int> sorted_;       // nodes in topological order of the flows
  std::vector<double> node_qual_, tank_c_, wall_rate_;
  // The hydraulics of the step being routed: per link EPANET's LINKFLOW, per node its demand
  // (junctions) and volume (tanks).
  std::vector<double> flow_, demand_, volume_;
  bool float_hydraulics_;  // QualityHydraulics::file
  double hydraulic(double v) const { return float_hydraulics_ ? static_cast<float>(v) : v; }
  std::vector<int> indegree_, stack_;  // sort_nodes' work space
  long source_time_ = 0;               // EPANET's Qtime during a step (source patterns)
  double source_qual_ = 0;             // EPANET's SourceQual of the node just mixed
  QualityMassBalance balance_;
  std::vector<double> rate_coeff_;  // EPANET's PipeRateCoeff (internal units per day)
  QualityReactions reactions_;
  bool count_reactions_ = false;  // the step being routed ends at or after REPORT START

  int chain(int node) const { return nl_ + node - nj_; }
  void add_segment(int chain, double v, double c);
  void free_segment(int chain);  // the first segment of a chain, which must have a next one
  void reverse(int chain);
  double stored_mass() const;
  void init_segments();
  bool flow_direction_changed();
  void sort_nodes();
  int select_non_stack_node(int sorted) const;

  // qualroute.c
  void transport(long dt);
  void node_inflow(int link, long dt, double& volin, double& massin);
  double node_quality_after(int node, double volin, double massin, double volout, long dt);
  double no_flow_quality(int node) const;
  void node_outflow(int link, double c, long dt);
  void update_mass_balance(int node, double massin, double volout, long dt);
  double source_quality(int node, double volout, long dt);

  // qualreact.c (network/quality/quality_react.cpp)
  void rate_coefficients();
  double pipe_rate(int link) const;
  void react_pipes(long dt);
  void react_tanks(long dt);
  // A segment of volume v: its new quality (the reactions counted where count_reactions_).
  double pipe_react(int link, double c, double v, long dt);
  double tank_react(double c, double v, double kb, long dt);
  double bulk_rate(double c, double kb, double order) const;
  double wall_rate(double c, double d, double kw, double kf) const;
  double mix_tank(int node, double volin, double massin, double volout);
  void mix_complete(int node, double vin, double win, double vnet);
  void mix_two_compartment(int node, double vin, double win, double vnet);
  void mix_fifo(int node, double vin, double win, double vnet);
  void mix_lifo(int node, double vin, double win, double vnet);
  // Withdraws `volume` from the first segments of a tank's chain (FIFO, LIFO); the mass taken.
  double withdraw(int chain, double volume, double* taken);
};

}  // namespace cgs::net
