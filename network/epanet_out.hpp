// EPANET 2.3.5's binary output file (.out), written along a run as its runepanet writes it
// (output.c: savenetdata, saveenergy, saveoutput, saveepilog), and read back (the tests' and
// tools' reader).
//
// The layout, every number 4 bytes (int32 or float32, little-endian as written by x86):
//   prolog   15 int32 (magic 516114521, version 20012, nodes, tanks (with reservoirs), links,
//            pumps, valves, quality flag, trace node, flow units code, pressure units code,
//            statistic code, report start, report step, duration), 3 title lines of 80 bytes,
//            input and report file names of 260 bytes, chemical name and quality units of 32
//            bytes, node IDs and link IDs of 32 bytes each, links' start nodes, end nodes and
//            type codes (int32, nodes numbered from 1), tanks' node numbers and areas (ft2, as
//            EPANET writes them), node elevations, link lengths, link diameters (pumps 0)
//   energy   per pump: its link number (from 1) and 6 floats (utilisation %, efficiency %,
//            kWh per Mgal or m3, average kW, peak kW, cost per day); then the demand charge
//   periods  per reporting period, node demand, head, pressure, quality, then link flow,
//            velocity, head loss (per 1000 length units for pipes), average quality, status
//            code, setting, reaction rate and friction factor, each a float per node or link
//   epilog   4 floats (network reaction rates), periods, warning flag, magic again
// Values are in the file's units. As EPANET's, the period results are computed from the
// hydraulics rounded to float32 first (its scratch hydraulics file), closed links carrying no
// flow. Water quality comes from the run's own QualityEngine (network/quality/), read at each
// reporting time before that period's quality starts (as EPANET's runqual saves its output
// before its ratecoeffs): the quality flag (1 CHEMICAL, 2 AGE, 3 TRACE) and trace node, the
// chemical's name and units ("AGE"/"hrs", "% from"/"% from" as EPANET names them), node and link
// quality, each pipe's reaction rate, and the network's reaction rates per hour in the epilog.
// Without an engine (QUALITY NONE, --no-quality) the file is EPANET's run without quality: flag
// 0, "Chemical" without units, node quality the [QUALITY] initial value, the rest 0.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "network/energy.hpp"
#include "network/network.hpp"
#include "network/quality/quality_engine.hpp"
#include "network/simulation.hpp"

namespace cgs {
class AtomicOutput;
}

namespace cgs::net {

inline constexpr std::int32_t kEpanetOutMagic = 516114521;
inline constexpr std::int32_t kEpanetOutVersion = 20012;  // what 2.3.5 writes, for the GUI

// Writes the file along a run: construct before it (the prolog, a temporary name beside `path`),
// period() from SimulationOptions::on_period, step() from on_step, finish() after it (the energy
// section, the epilog, the rename). Destroyed without finish() (a run that failed), it leaves
// nothing. Errors are InputError naming the path.
class EpanetOutWriter {
 public:
  // input_name: the .inp file's name as given (the prolog's input file field); duration: the
  // run's, in seconds; quality: the engine the run's QualityRun drives (its state is read at each
  // reporting time, so the run's on_period must call this writer's period() before the engine
  // starts the period: QualityRun::attach chains it so), or null for a run without quality.
  EpanetOutWriter(const Network& net, const std::string& path, const std::string& input_name,
                  long duration, const QualityEngine* quality = nullptr);
  ~EpanetOutWriter();
  EpanetOutWriter(const EpanetOutWriter&) = delete;
  EpanetOutWriter& operator=(const EpanetOutWriter&) = delete;

  // After a period's trials: its results where it is at or past the next reporting time
  // (EPANET's rule: each REPORT TIMESTEP from REPORT START, the first period at or after it),
  // and the warnings EPANET's writehydwarn raises from the state (negative pressures, valves
  // that cannot hold their setting, pumps beyond their curve).
  void period(long time, const GradientAlgorithm& state);
  // The same period's step: its warning from the trials (unbalanced, unstable).
  void step(const StepReport& step);
  // The energy section (EnergyMeter::report) and the epilog; renames the file into place.
  void finish(const EnergyReport& energy);

  int periods() const { return periods_; }
  // Time spent in this writer's calls (computing and writing, the rename included), seconds.
  double seconds() const { return seconds_; }
  // EPANET's warning flag: the code of the last period that warned (1 unbalanced, 2 unstable,
  // 4 pump, 5 valve, 6 negative pressure), 0 for none.
  int warning() const { return warning_; }

 private:
  const Network& net_;
  const QualityEngine* quality_engine_;
  std::unique_ptr<AtomicOutput> file_;
  long duration_ = 0;
  long energy_offset_ = 0;
  long report_time_ = 0;
  int periods_ = 0, warning_ = 0, state_warning_ = 0;
  double seconds_ = 0;
  std::vector<float> values_;     // one field of one period
  std::vector<float> statistic_;  // every period's fields, where [TIMES] STATISTIC asks for one
  std::vector<double> head_, demand_, flow_, setting_;  // rounded to float32, as EPANET's
  std::vector<signed char> status_;
  // What the periods read of the network, copied out once into flat arrays (the records are
  // large: reading them every period cost more than the rest of the writing on BWSN_Network_2).
  std::vector<double> elevation_, length_, area_, diameter5_, roughness_;
  std::vector<int> from_, to_;
  std::vector<LinkType> type_;
  std::vector<float> quality_;  // the node quality field without an engine: the same every period
  std::vector<std::pair<int, double>> pump_max_flow_;  // each pump's link and Qmax

  void write_prolog(const std::string& input_name, long duration);
  std::int32_t quality_code() const;
  std::int32_t trace_node() const;
  std::pair<std::string, std::string> quality_names() const;
  void write_period(const GradientAlgorithm& state);
  void write_field(std::size_t count, const auto& value);
  void write_statistic();
  int state_warning(const GradientAlgorithm& state) const;
};

// Sets the run's on_period and on_step (replacing any set before) to feed `energy` and, where
// given, `out`: after each solved period its pump powers and its results, after its step the
// energy over it and its warning. A step that ends on an error (no period measured) adds nothing.
void record_energy_and_output(SimulationOptions& sim, EnergyMeter& energy, EpanetOutWriter* out);

// A whole .out file as read back (plain or gzip-compressed): every field as stored.
struct EpanetOutFile {
  std::array<std::int32_t, 15> prolog{};  // magic, version, counts, codes, times (above)
  std::array<std::string, 3> title;       // 80 bytes each, as stored (NUL-padded)
  std::string input_file, report_file;    // 260 bytes each
  std::string chemical, quality_units;    // 32 bytes each
  std::vector<std::string> node_ids, link_ids;  // 32 bytes each
  std::vector<std::int32_t> link_from, link_to, link_type, tank_nodes;
  std::vector<float> tank_areas, elevations, lengths, diameters;
  struct PumpRow {
    std::int32_t link = 0;
    std::array<float, 6> values{};
  };
  std::vector<PumpRow> energy;
  float demand_charge = 0;
  // Per period: 4 node fields x nodes, then 8 link fields x links.
  std::vector<std::vector<float>> periods;
  std::array<float, 4> reactions{};
  std::int32_t period_count = 0, warning = 0, end_magic = 0;

  int nodes() const { return prolog[2]; }
  int links() const { return prolog[4]; }
  // A stored text field up to its first NUL.
  static std::string text(const std::string& field);
};

// Throws InputError when the file cannot be read or is not an EPANET output file (magic numbers,
// sizes).
EpanetOutFile read_epanet_out(const std::string& path);

}  // namespace cgs::net
