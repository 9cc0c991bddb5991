// The report file (.rpt) as EPANET 2.3.5's report.c writes it for runepanet, shaped by the
// network's [REPORT] options (network.hpp ReportOptions): the header, the input summary, the
// hydraulic status lines (STATUS YES; FULL adds each trial), EPANET's warnings in its words, the
// flow balance, "Analysis begun/ended", the energy table and the node and link tables at every
// reporting time, with their fields, precisions, limits and pages. Water quality, where the run
// has a QualityEngine (attach), as EPANET reports it: the summary's quality lines, the mass
// balance after the flow balance (STATUS YES or FULL), the node tables' quality column and the
// link tables' quality and reaction rate (read from the engine at each reporting time, as the
// .out's); without one, as EPANET reports a run without quality.
//
// A report watches a run through the simulation's hooks (attach), keeping the status lines as
// they come and the results of the reporting times as EPANET's files hold them (float32), and
// writes the whole text at the end (text).
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "network/network.hpp"
#include "network/quality/quality_engine.hpp"
#include "network/simulation.hpp"

namespace cgs::net {

// One pump's line of EPANET's energy table and the table's totals (EPANET's Spump Energy, filled
// from network/energy.hpp's EnergyReport where that exists).
struct EnergyTableRow {
  std::string pump;
  double utilisation = 0, efficiency = 0, kwh_per_volume = 0, average_kw = 0, peak_kw = 0,
         cost_per_day = 0;
};
struct EnergyTable {
  std::vector<EnergyTableRow> pumps;
  double demand_charge = 0;
};

class EpanetReport {
 public:
  // input_name: the input file as given (the summary's "Input Data File").
  EpanetReport(const Network& net, std::string input_name);
  ~EpanetReport();
  EpanetReport(const EpanetReport&) = delete;
  EpanetReport& operator=(const EpanetReport&) = delete;

  // Sets the hooks of `sim` this report needs (on_start, on_control, on_rule, on_solved, on_step
  // after the one already there, on_trial, and RunOptions::trace for STATUS FULL), and writes
  // the header and the summary. quality: the run's engine (QualityRun::engine(), initialised by
  // its attach), read at each reporting time and for the mass balance; null: no quality.
  void attach(SimulationOptions& sim, const QualityEngine* quality = nullptr);
  // The whole report after the run. energy: the energy table's numbers (ENERGY YES); nullptr
  // while netsolve does not compute them: the table is left out.
  std::string text(const SimulationResults& run, const EnergyTable* energy);
  // The same written to `file` as it is made (for base/atomic_file's writer).
  void write(std::FILE* file, const SimulationResults& run, const EnergyTable* energy);

 private:
  struct State;
  void finish(const SimulationResults& run, const EnergyTable* energy);
  std::unique_ptr<State> state_;
};

// The table's numbers from a run's EnergyReport (network/energy.hpp, which defines this), the
// demand charge as runepanet prints it (EnergyReport::report_demand_charge).
struct EnergyReport;
EnergyTable energy_table(const Network& net, const EnergyReport& energy);

// EPANET's energy table (report.c writeenergy), on its own so that the energy computation plugs
// in: `lines` receives the table's lines in order. Empty for a network without pumps.
void write_energy_table(const Network& net, const EnergyTable& energy,
                        std::vector<std::string>& lines);

// The names EPANET's report gives a run's water quality (network/epanet_report_quality.cpp): the
// node table's header (ChemName over ChemUnits: a trace's is "% from" over the node's ID), the
// quality field's units (its limits and tolerance) and the reaction rate's (CHEMICAL: units/day).
struct ReportQualityText {
  std::string name, units, field_units, reaction_units;
};
ReportQualityText report_quality_text(const Network& net);
// report.c writesummary's quality lines ("None" where no quality runs or the duration is 0).
std::vector<std::string> quality_summary_lines(const Network& net, long duration, bool running);
// A reporting time's node quality, link quality and reaction rate from the engine (float32, as
// EPANET's output file holds them); the vectors sized for the nodes and links.
void capture_quality(const QualityEngine& quality, std::vector<float>& node_quality,
                     std::vector<float>& link_quality, std::vector<float>& reaction);
// report.c writemassbalance.
std::vector<std::string> mass_balance_lines(const Network& net, const QualityMassBalance& balance);

}  // namespace cgs::net
