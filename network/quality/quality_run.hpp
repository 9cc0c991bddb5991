// Water quality in the same pass as the hydraulics: a QualityRun hooks a QualityEngine into a
// simulation's SimulationOptions (on_period: EPANET's EN_runQ; on_advance: EN_nextQ) and keeps
// the quality of every node and link at the reporting times, in the file's units. A network
// without quality (QUALITY NONE) needs none: simulate() then pays nothing for it.
#pragma once

#include <string>
#include <vector>

#include "network/quality/quality_engine.hpp"
#include "network/simulation.hpp"

namespace cgs::net {

struct QualityResults {
  std::vector<long> times;                 // the reporting times
  std::vector<std::vector<double>> nodes;  // per reporting time, per node (file's units)
  std::vector<std::vector<double>> links;  // per reporting time, per link (EPANET's average)
  QualityMassBalance balance;              // after the last step
  double seconds = 0;                      // spent in the quality engine
};

class QualityRun {
 public:
  explicit QualityRun(const Network& net, QualityHydraulics mode = QualityHydraulics::file);
  // Sets the initial qualities (EPANET's initqual), options.on_period (after the one there) and
  // on_advance (which must be unset).
  void attach(SimulationOptions& options);
  const QualityResults& results() const { return results_; }
  // The engine whose state the hooks advance (EpanetOutWriter reads it at each reporting time).
  const QualityEngine& engine() const { return engine_; }

 private:
  const Network& net_;
  QualityEngine engine_;
  QualityResults results_;
  long duration_ = 0;
};

// The series as CSV, whole or not at all: time_s,kind,id,quality (kind node or link), as
// EPANET's EN_QUALITY and EN_LINKQUAL at every reporting time.
void write_quality_csv(const std::string& path, const Network& net, const QualityResults& q);

}  // namespace cgs::net
