// The host's copy of what the gradient algorithm reads of a network (gga.hpp's NetworkView): the
// options in internal units and the numbers of the links, pumps, curves, nodes and pressure
// controls, copied out of Network's records. A Link is 112 bytes and a Node 168: the loops over
// 10^4 links then stream a few compact arrays instead of a cache line per element.
#pragma once

#include <vector>

#include "network/gga.hpp"
#include "network/network.hpp"

namespace cgs::net {

struct GgaNetwork {
  gga::Options options;
  std::vector<int> from, to, type, pump, pump_type, pump_curve, curve_ptr, valves, emitters;
  std::vector<int> tank, can_overflow, control_node, control_link, control_type, control_status;
  std::vector<int> leaks;
  std::vector<double> leak_fixed, leak_variable;
  std::vector<double> minor_loss, resistance, roughness, diameter, pump_h0, pump_r, pump_n;
  std::vector<double> pump_max_head, curve_x, curve_y, elevation, emitter, max_head, min_head;
  std::vector<double> control_grade, control_setting;
  // The junction matrix's CSR slots: each junction's diagonal, each link's pair (-1: none).
  std::vector<int> diag_slot, slot_ij, slot_ji;
  int a_nnz = 0;

  // Everything from the records but the resistances and the matrix slots.
  void load(const Network& net);
  // EPANET's convert_pipe_to_node_leakage and init_node_leakage: each pipe's leaks, half to each
  // junction end (all of it where the other end is a tank or reservoir), as two equivalent
  // emitters per junction.
  void load_leakage(const Network& net);
  // EPANET's resistcoeff: h = R q^n for Hazen-Williams and Chezy-Manning, h = f R q^2 for
  // Darcy-Weisbach; pumps and valves a fixed big (small) number.
  void compute_resistances(const Network& net);
  // A view of these arrays (valid while they are neither resized nor moved).
  gga::NetworkView view() const;
};

// HydraulicOptions in internal units (as EPANET's convertunits: Pmin, Preq /= Ucf[PRESSURE]).
gga::Options gga_options(const Network& net);

}  // namespace cgs::net
