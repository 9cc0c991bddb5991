// The host's driver of the gradient algorithm (network/gga.hpp, which takes every decision of a
// trial: coefficients, assembly, flow update, status rules, PDA): it owns the arrays, runs a
// period's trials with a LinearSolver for A H = F, and keeps what only the host does: the time
// steps' demands, controls and tank levels, link settings from rules, the results, connectivity,
// EPANET's error 110 and file-order retry, and tracing. The state (flows, statuses, settings,
// heads, tank volumes) lives on from one period to the next: an extended-period run
// (network/simulation.hpp) steps it through time as EPANET's hydraul.c.
//   hydraulics.cpp  the state: initialisation, demands, controls, tanks, link settings, results
//   hydsolver.cpp   a period's trials (EPANET's hydsolve) and the time-0 solve
//   gga_network.cpp the network's arrays and options as the gradient algorithm reads them
//   connectivity.cpp which junctions reach a fixed head
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "formats/csr.hpp"
#include "network/gga.hpp"
#include "network/gga_network.hpp"
#include "network/host_team.hpp"
#include "network/link_gather.hpp"
#include "network/linear_solver.hpp"
#include "network/network.hpp"

namespace cgs::net {

struct TrialReport {
  int trial = 0;
  long cg_iterations = 0;
  double solve_seconds = 0;         // the linear solve
  double assemble_seconds = 0;      // coefficients and matrix
  double relative_flow_change = 0;  // EPANET's convergence number
  double max_head_change = 0;       // ft, over junctions
  double max_flow_change = 0;       // cfs, over links
  double residual = 0;              // true relative residual of the unscaled system
  double scaled_residual = 0;       // true relative residual of the scaled system
  double backward_error = 0;        // componentwise backward error of the solve
  int refinement_steps = 0;         // CG solves in this trial
  bool linear_converged = true;
  // A direct solver's factorisation met a pivot <= 0 at this junction (-1: none). EPANET then
  // fixes an active control valve at that junction (fixed_valve, -1: none) and repeats the trial,
  // or stops with its error 110.
  int failed_junction = -1;
  int fixed_valve = -1;
  // The fill-reducing order met a pivot <= 0 that no valve explains, and the system was solved
  // in the file's junction order instead (LinearSolver::solve_in_file_order).
  bool file_order = false;
  // With RunOptions::trace: the links whose status this trial's checks changed, and to what.
  std::vector<std::pair<int, LinkStatus>> status_changes;
  std::vector<LinkStatus> previous_statuses;  // what each of status_changes changed from
  // Where the largest flow change is (EPANET's maxflowlink or maxflownode, -1 for none) and,
  // with RunOptions::trace where the flows are within ACCURACY, EPANET's hydraulic balance check
  // (checkhydbalance): the largest head loss error |dh - Y/P| (ft) and its link.
  int max_flow_link = -1, max_flow_node = -1;
  bool balance_checked = false;
  double max_head_error = 0;
  int max_head_link = 0;
};

// What one period's trials did (EPANET's hydsolve).
struct PeriodSolve {
  bool converged = false;  // flows within ACCURACY and no status change left (or extra trials)
  int trials = 0;
  double relative_flow_change = 0;
  std::vector<TrialReport> trial_reports;
  long linear_iterations = 0;  // CG iterations (0 for a direct solver)
  int linear_solves = 0;
  double linear_seconds = 0, seconds = 0;
  bool linear_converged = true;  // every linear solve reached its own test
  std::string error;             // EPANET's error 110, else empty
  // Pressure-driven demand at the end of the trials (EPANET's DeficientNodes and DemandReduction):
  // junctions delivering less than their demand (by more than 1e-4 cfs), and their shortfall as a
  // percentage of their demand. 0 under DDA.
  int deficient_nodes = 0;
  double demand_reduction = 0;
};

struct HydraulicResults {
  bool converged = false;
  int trials = 0;
  double relative_flow_change = 0;
  std::vector<TrialReport> trial_reports;
  double total_seconds = 0, linear_seconds = 0;
  // Per node (internal units): head, demand actually delivered (junctions, emitters and leaks
  // included, as EPANET's EN_DEMAND) or net inflow (tanks, reservoirs: negative when supplying).
  std::vector<double> head, demand;
  // Per node, junctions only (0 elsewhere): the pipes' leakage out of it (EPANET's
  // EN_LEAKAGEFLOW; [LEAKAGE]).
  std::vector<double> leakage;
  // Per node, junctions only (0 elsewhere): the consumer demand asked for (EPANET's FullDemand:
  // base demands x patterns x multiplier) and the part delivered (DemandFlow: all of it under
  // DDA, what the pressure allows under PDA); emitters not included.
  std::vector<double> required_demand, delivered_demand;
  std::vector<double> flow;  // per link, cfs
  std::vector<LinkStatus> status;
  std::vector<int> cut_off_nodes;  // not linked to a fixed head through open links
  // Why the trials stopped without a solution (EPANET's error 110: a matrix not positive definite
  // at a junction that no control valve explains); empty otherwise.
  std::string error;
};

// The junction system of one trial: rows in the junction order of the .inp file.
struct JunctionSystem {
  CsrMatrix<double> A;
  std::vector<double> b;
  // The order EPANET eliminates the junctions in (epanet_order.hpp), for the direct solver.
  std::vector<int> elimination_order;
};

class GradientAlgorithm;

struct RunOptions {
  // Called with each trial's system before it is solved (for --export-systems); time in seconds.
  std::function<void(long time, int trial, const JunctionSystem&)> on_system;
  // Called after each trial (progress lines).
  std::function<void(const TrialReport&)> on_trial;
  // Called where EPANET's convergence test holds: false runs another trial instead (a study's
  // warm start waits for the heads at its own element to settle: network/study.cpp). Unset: the
  // test alone decides, as EPANET's.
  std::function<bool(const GradientAlgorithm&)> settled;
  // Record each trial's status changes (TrialReport::status_changes; netsolve --trace).
  bool trace = false;
  // The threads a trial's per-link work (the head loss coefficients, the links' part of the
  // system) runs on, each number the same on any count; on networks of parallel_links links or
  // more (fewer: waking the threads costs more than they save; on a loaded 2-core machine
  // BWSN_Network_2's 14,822 links lost).
  int threads = 1;
  int parallel_links = 20000;
};

// The gradient algorithm's state: flows, statuses, settings, heads, tank volumes. Exposed so tests
// can build the first trial's system and compare it with EPANET's, and for the time stepping of
// network/simulation.cpp.
class GradientAlgorithm {
 public:
  explicit GradientAlgorithm(const Network& net);

  // EPANET's inithyd: tanks at their initial levels, initial statuses, settings and flows.
  void initialise();
  // After initialise(): the flows of the links not closed now taken from `flows` (per link, a
  // solution of the same network), as EPANET's inithyd keeps the last flows when asked not to
  // re-initialise them (EN_initH without EN_INITFLOW). Statuses stay the initial ones.
  void warm_start(const std::vector<double>& flows);
  // The start of a period at `time` (EPANET's runhyd before the trials): demands, reservoir heads
  // and pump speeds of its pattern period, then the simple controls that act at it.
  // on_control: called for each simple control that changes its link (link, control index), as
  // EPANET's status report lists them.
  using ControlObserver = std::function<void(int link, int control)>;
  void start_period(long time, const ControlObserver* on_control = nullptr);
  void demands(long time);
  int controls(long time, const ControlObserver* on_control = nullptr);  // links changed
  // The trials of the current period, until EPANET's convergence (EPANET's hydsolve). x: the
  // junction heads the linear solver starts from (the previous solution, for CG).
  PeriodSolve solve_period(LinearSolver& solver, std::vector<double>& x, long time,
                           const RunOptions& run = {});
  // Head loss coefficients of every link and the junction system for the current flows.
  const JunctionSystem& assemble();

  HydraulicResults results() const;

  // For the trial engine of studies (network/trial_kernels.hpp, which runs the trials of a
  // steady-state period elsewhere, e.g. on the GPU): the matrix structure, the resistances, and
  // the state the trials start from, as that engine's per-scenario start (per node head, demand,
  // delivered demand, emitter flow, two leak flows; per link flow, setting, PCV loss
  // coefficient: 6 nodes + 3 links doubles) and each link's status.
  const JunctionSystem& system() const { return system_; }
  const std::vector<int>& diagonal_slots() const { return network_.diag_slot; }
  const std::vector<int>& link_slots_ij() const { return network_.slot_ij; }
  const std::vector<int>& link_slots_ji() const { return network_.slot_ji; }
  const std::vector<double>& resistances() const { return network_.resistance; }
  // The network as the gradient algorithm reads it (pointers into this object's arrays).
  gga::NetworkView view() const { return network_.view(); }
  void export_trial_start(double* start, signed char* status) const;
  const std::vector<double>& heads() const { return head_; }

  // Tanks: EPANET's tanklevels (volumes after dt seconds of the current inflows, held to their
  // limits, heads from volumes), tankvolume and tankgrade.
  void tank_levels(long dt);
  double tank_volume(int node, double head) const;
  double tank_grade(int node, double volume) const;
  double volume(int node) const { return volume_[node]; }

  // What rules and time steps read, as EPANET's NodeDemand, LinkFlow, ... (internal units).
  double head(int node) const { return head_[node]; }
  // Junctions: delivered demand plus emitter flow and leakage; tanks and reservoirs: net inflow.
  double node_demand(int node) const;
  // A junction's leakage: its two leak flows (EPANET's LeakageFlow; 0 without leaks).
  double leakage(int node) const { return leak_fixed_[node] + leak_variable_[node]; }
  double delivered_demand(int node) const { return delivered_[node]; }
  double full_demand(int node) const { return demand_[node]; }  // EPANET's FullDemand
  double emitter_flow(int node) const { return emitter_flow_[node]; }
  double system_demand() const { return system_demand_; }  // sum of positive junction demands
  double flow(int link) const { return flow_[link]; }
  LinkStatus status(int link) const { return static_cast<LinkStatus>(status_[link]); }
  double setting(int link) const { return setting_[link]; }
  // EPANET's setlinkstatus and setlinksetting (rule actions, pump speed patterns).
  void set_link_open(int link, bool open);
  void set_link_setting(int link, double value);

 private:
  const Network& net_;
  const HydraulicOptions& opt_;
  int nj_;
  GgaNetwork network_;  // what the gradient algorithm reads of net_
  // demand_: each junction's consumer demand (EPANET's FullDemand); delivered_: the part delivered
  // (DemandFlow), equal to it under DDA, a variable of the trials under PDA.
  std::vector<double> head_, demand_, delivered_, fixed_inflow_, emitter_flow_, volume_;
  std::vector<double> leak_fixed_, leak_variable_;  // per node: a junction's two leak flows
  double system_demand_ = 0;
  std::vector<double> flow_, setting_, pcv_loss_, P_, Y_, xflow_;
  std::vector<signed char> status_;  // LinkStatus, as gga::State holds it
  JunctionSystem system_;            // the matrix structure built once, the values each trial
  TeamSlot team_;                    // RunOptions::threads' team
  LinkGather gather_;                // the links' part of the system node by node, for the team
  // The junctions' demands flattened (flatten_demands), each pattern's factor of the period.
  std::vector<int> demand_ptr_, demand_pattern_, pumps_;
  std::vector<double> demand_base_, pattern_factor_;

  void build_structure();
  void flatten_demands();
  void reset_pump_flow(int link);
  void set_status(int link, LinkStatus s) { status_[link] = static_cast<signed char>(s); }
  // The gradient algorithm's state over this object's arrays; x: the junction heads solved for.
  gga::State state(double* x = nullptr);

  // A trial's linear solve into x and its report; false where the trial ends there: an active
  // control valve fixed (report.fixed_valve, the trial repeated) or EPANET's error 110
  // (out.error).
  bool solve_trial(LinearSolver& solver, const gga::NetworkView& v, const gga::State& s,
                   std::vector<double>& x, TrialReport& report, PeriodSolve& out);
  // The new flows from the solved heads x (gga::update) with the host's measures of the trial
  // and the tanks' net inflows; returns EPANET's relative and largest flow change.
  gga::FlowChange update(const gga::NetworkView& v, gga::State& s, std::vector<double>& x,
                         TrialReport& report);
  // EPANET's checkhydbalance for the report (the coefficients recomputed at the new flows, the
  // state's own left as they were).
  void check_balance(const gga::NetworkView& v, const gga::State& s, TrialReport& report);
};

// The whole time-0 solve: trials until EPANET's convergence test holds and no status changes.
HydraulicResults solve_hydraulics(const Network& net, LinearSolver& solver,
                                  const RunOptions& run = {});

// Which junctions reach a reservoir or tank, through any links or through open ones: adjacency
// built once, a breadth-first search per question.
class NetworkGraph {
 public:
  explicit NetworkGraph(const Network& net);
  // Junctions not joined to a fixed-head node through links that are not closed.
  std::vector<int> cut_off(const std::vector<LinkStatus>& status) const;
  // Junctions with no path at all to one (whatever the statuses).
  std::vector<int> unreachable() const;

 private:
  const Network& net_;
  std::vector<int> first_, neighbour_, link_;  // CSR: node -> (neighbour, link)
  std::vector<int> reached(const std::vector<LinkStatus>* status) const;
};

// Junctions with no path at all to a reservoir or tank: their heads are undetermined and the
// system singular. Throws InputError naming them.
void check_connectivity(const Network& net);

// Junctions not joined to a fixed-head node through open links, given link statuses.
std::vector<int> cut_off_nodes(const Network& net, const std::vector<LinkStatus>& status);

}  // namespace cgs::net
