// Extended-period simulation: the hydraulics stepped through time as EPANET 2.2/2.3's hydraul.c
// does it (runhyd, nexthyd, timestep, tanktimestep, controltimestep, ruletimestep, tanklevels).
// Each period sets its demands, reservoir heads and pump speeds from the patterns, applies the
// simple controls, and runs the trials from the previous period's flows and statuses (a warm
// start); then the next step is the hydraulic time step cut short at the next pattern period, the
// next reporting time, a tank filling or emptying, a simple control coming due, or a rule firing,
// and the tank levels move over it. One LinearSolver (analysed once) serves the whole run.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "network/hydraulics.hpp"
#include "network/network.hpp"
#include "network/rules.hpp"

namespace cgs::net {

struct StepReport {
  long time = 0;    // seconds from the start
  long length = 0;  // seconds to the next step (0 for the last one)
  PeriodSolve solve;
};

// The results at a reporting time (internal units), as EPANET reports them.
struct Snapshot {
  long time = 0;
  std::vector<double> head;  // per node
  std::vector<double>
      demand;                // junctions: delivered (emitters included); tanks, reservoirs: inflow
  // Junctions' consumer demand asked for and delivered (emitters apart; equal under DDA).
  std::vector<double> required_demand, delivered_demand;
  std::vector<double> leakage;  // junctions' pipe leakage (included in demand)
  std::vector<double> flow;     // per link, 0 when closed
  std::vector<LinkStatus> status;
  std::vector<double> volume;  // per tank, in the order of SimulationResults::tanks
  std::vector<int> cut_off;    // junctions not joined to a reservoir or tank through open links
};

struct SimulationOptions {
  long duration = -1;  // seconds; < 0: the file's DURATION
  RunOptions run;      // --export-systems
  // After each step and after each trial (progress lines): the step so far.
  std::function<void(const StepReport&)> on_step;
  std::function<void(long time, const TrialReport&)> on_trial;
  // Scenario studies (network/study.hpp) read the state after every solved period instead of
  // the snapshots at the reporting times, and warm-start the first period:
  bool keep_reports = true;  // false: no Snapshot (SimulationResults::reports stays empty)
  // After the initial state is set (EPANET's inithyd), before the first period: may replace the
  // initial flows and the linear solver's starting heads x.
  std::function<void(GradientAlgorithm&, std::vector<double>& x)> on_start;
  // After each period whose trials ran to an answer (not after EPANET's error 110).
  std::function<void(long time, const GradientAlgorithm&)> on_period;
  // After on_period, once the step to the next period is known (the tanks and rules moved over
  // it, as EPANET's nexthyd leaves them): its length, 0 after the last period. Water quality
  // routes over it (network/quality/quality_run.hpp).
  std::function<void(long time, long length, const GradientAlgorithm&)> on_advance;
  // EPANET's status report (network/epanet_report.hpp): a simple control or a rule changing a
  // link (the time, the link, the control's or the rule's index), and each period's trials ended
  // (before the step to the next period moves the tanks; also a period that ended in EPANET's
  // error 110, PeriodSolve::error set).
  std::function<void(long time, int link, int control)> on_control;
  std::function<void(long time, int link, int rule)> on_rule;
  std::function<void(long time, const PeriodSolve&, const GradientAlgorithm&)> on_solved;
};

struct SimulationResults {
  long duration = 0;
  std::vector<StepReport> steps;
  std::vector<Snapshot> reports;  // at the reporting times (REPORT START, every REPORT TIMESTEP)
  std::vector<int> tanks;         // node indices of the tanks
  bool completed = false;         // every period up to the duration was solved
  // A period ended unbalanced (trials exhausted); with UNBALANCED STOP, EPANET ends the run there
  // (its results are reported).
  bool unbalanced = false;
  std::string error;  // a period that could not be solved (EPANET's error 110), with its time
  long error_time = -1;
  double seconds = 0, linear_seconds = 0;
  bool ok() const { return completed && !unbalanced && error.empty(); }
};

// What a run builds from the network alone (the connectivity check, the graph, the gradient
// algorithm's matrix structure, the rules): built once and reused by every run of a study, each
// run starting again from the initial state. Holds a reference to `net`, which may change between
// runs in what initialise() and the periods read (demands, initial statuses), not in its shape.
struct SimulationWorkspace {
  explicit SimulationWorkspace(const Network& net);  // throws InputError as check_connectivity
  const Network& net;
  NetworkGraph graph;
  GradientAlgorithm state;
  RuleEngine rules;
};

// Checks connectivity (InputError), then steps from time 0 to the duration. A period that cannot
// be solved ends the run with `error` set; the reports up to it are kept.
SimulationResults simulate(const Network& net, LinearSolver& solver,
                           const SimulationOptions& options = {});
// The same run on a workspace built before (studies: one per thread, many runs each).
SimulationResults simulate(SimulationWorkspace& workspace, LinearSolver& solver,
                           const SimulationOptions& options = {});

// A reporting time: at or after REPORT START, a whole number of REPORT TIMESTEPs from it.
bool is_report_time(const TimeOptions& times, long t);

}  // namespace cgs::net
