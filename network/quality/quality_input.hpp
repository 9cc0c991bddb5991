// What a network file says about water quality ([OPTIONS] QUALITY, DIFFUSIVITY, TOLERANCE,
// [TIMES] QUALITY TIMESTEP, [QUALITY], [REACTIONS], [SOURCES], [MIXING]), kept as EPANET 2.3
// keeps it after its adjustdata and convertunits: concentrations in mass per ft^3 (CHEMICAL:
// the file's mass per litre times 28.317), rate coefficients per second, the diffusivity in
// ft^2/s, each pipe's bulk and wall coefficient with the global ones (and the roughness
// correlation) already applied. network/quality/quality_engine.hpp runs it.
#pragma once

#include <string>
#include <vector>

namespace cgs::net {

enum class QualityType { none, chemical, age, trace };
enum class SourceType { concen, mass, setpoint, flowpaced };
enum class MixModel { mixed, two_compartment, fifo, lifo };

struct QualitySource {
  SourceType type = SourceType::concen;
  double strength = 0;  // as given: concentration (file units) or mass per minute
  int pattern = -1;     // index into Network::patterns; -1: constant
};

struct QualityInput {
  QualityType type = QualityType::none;
  std::string chemical = "Chemical", units = "mg/L";  // CHEMICAL name units
  int trace_node = -1;
  double diffusivity = 1.3e-8;  // ft^2/s (EPANET's DIFFUS); 0: no mass transfer limit
  double tolerance = 0;         // internal concentration units
  long step = 0;                // quality time step (s), after EPANET's adjustdata
  double bulk_order = 1, wall_order = 1, tank_order = 1;
  double limiting_potential = 0;  // internal concentration units
  double global_bulk = 0, global_wall = 0, roughness_factor = 0;  // global: per second
  // Per node: initial quality (internal units) and source.
  std::vector<double> initial;
  std::vector<int> source;  // index into sources, -1: none
  std::vector<QualitySource> sources;
  // Per link (pipes and CV pipes; 0 elsewhere): bulk and wall coefficients, per second.
  std::vector<double> bulk, wall;
  // Per node (tanks; 0 and MIXED elsewhere): bulk coefficient per second, mixing model and the
  // 2COMP mixing zone's fraction of the tank's maximum volume.
  std::vector<double> tank_bulk;
  std::vector<MixModel> mixing;
  std::vector<double> mixing_fraction;
  // EPANET's Ucf[QUALITY]: file units = internal x this (1/28.317 for CHEMICAL, else 1).
  double to_user = 1;
  bool enabled() const { return type != QualityType::none; }
};

}  // namespace cgs::net
