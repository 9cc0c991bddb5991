// The gradient algorithm's data (gga.hpp): EPANET's constants, the options, the network as a
// view of arrays, and a scenario's state as columns of its arrays (element i at data[i * stride]:
// 1 on the host, the number of scenarios on the device).
#pragma once

#include <cmath>

#include "base/host_device.hpp"
#include "network/network.hpp"

namespace cgs::net::gga {

// EPANET's constants (hydcoeffs.c, hydraul.c): big and small coefficients for closed and open
// links and active valves, the Re = 2000 boundary of the friction factor and its coefficients,
// pdaconverged's tolerance on delivered demands (cfs).
inline constexpr double kBig = 1.0e8, kSmall = 1.0e-6, kTiny = 1.0e-6;
inline constexpr double kPi = 3.14159265358979323846;
inline constexpr double kA1 = 1000.0 * kPi, kA2 = 500.0 * kPi;
inline constexpr double kA8 = 4.61841319859066668690, kA9 = -0.868588963806503655300;
inline constexpr double kAB = 3.28895476345399058690e-03, kAC = -5.14214965799093883760e-03;
inline constexpr double kPdaFlowTolerance = 0.0001;

// HydraulicOptions as numbers, in internal units (GradientAlgorithm's constructor converts them).
struct Options {
  int nj = 0, nodes = 0, links = 0;
  int formula = 0;  // HeadlossFormula
  double viscosity = 0, rq_tolerance = 0, accuracy = 0, head_tolerance = 0, flow_tolerance = 0;
  double damp_limit = 0, emitter_exponent = 2;
  double head_error_limit = 0, flow_change_limit = 0;  // ft, cfs; 0: not checked
  int max_trials = 0, extra_trials = -1, check_frequency = 2, max_check = 10;
  // The trials engine's: a scenario still unsettled after this many trials is handed back to
  // the host (trials::Outcome::needs_host): one thread a scenario, a call lasts as long as its
  // slowest scenario, and the host does a straggler's 100 trials in milliseconds. 0: no limit but
  // the trials' own.
  int trial_budget = 0;
  bool emitter_backflow = true, pda = false;
  double pmin = 0, preq = 0, pexp = 0.5;  // ft, ft, -
  double unit_flow = 1, unit_length = 1, unit_pressure = 1;
  double pressure_threshold = 0;  // the trials engine's rows: the file's pressure units
};

// The network, read-only and shared by every scenario (host or device pointers).
struct NetworkView {
  Options o;
  // links
  const int* from = nullptr;
  const int* to = nullptr;
  const int* type = nullptr;  // LinkType
  const int* pump = nullptr;  // index into the pump arrays, -1
  const double* minor_loss = nullptr;
  const double* resistance = nullptr;  // EPANET's resistcoeff: h = R q^n (H-W, C-M), f R q^2 (D-W)
  const double* roughness = nullptr;
  const double* diameter = nullptr;
  // pumps
  int pump_count = 0;
  const int* pump_type = nullptr;  // PumpCurveType
  const int* pump_curve = nullptr;
  const double* pump_h0 = nullptr;
  const double* pump_r = nullptr;
  const double* pump_n = nullptr;
  const double* pump_max_head = nullptr;
  // curves, in the file's units: curve c's points at curve_ptr[c] .. curve_ptr[c + 1]
  int curve_count = 0;
  const int* curve_ptr = nullptr;
  const double* curve_x = nullptr;
  const double* curve_y = nullptr;
  // valves in file order, emitters in index order
  int valve_count = 0, emitter_count = 0;
  const int* valves = nullptr;
  const int* emitters = nullptr;
  // the junctions that leak (EPANET 2.3's FAVAD pipe leakage, leakage.c), in index order, with
  // their equivalent emitters' coefficients: h = fixed q^2 (fixed-area leaks), h = variable
  // q^(2/3) (leak areas growing with pressure); 0: none of that kind
  int leak_count = 0;
  const int* leaks = nullptr;
  const double* leak_fixed = nullptr;
  const double* leak_variable = nullptr;
  // nodes
  const double* elevation = nullptr;
  const double* emitter = nullptr;
  const int* tank = nullptr;  // 1 for a tank (not a reservoir)
  const int* can_overflow = nullptr;
  const double* max_head = nullptr;
  const double* min_head = nullptr;
  // the simple controls on junction pressures, in file order
  int control_count = 0;
  const int* control_node = nullptr;
  const int* control_link = nullptr;
  const int* control_type = nullptr;    // ControlType
  const int* control_status = nullptr;  // LinkStatus
  const double* control_grade = nullptr;
  const double* control_setting = nullptr;
  // the junction matrix: CSR slots of each junction's diagonal and of each link's pair (-1: a
  // link to a fixed-head node)
  int a_nnz = 0;
  const int* diag_slot = nullptr;
  const int* slot_ij = nullptr;
  const int* slot_ji = nullptr;
};

// f(pointer, length) for every array of a view (a const int*& or a const double*&), to copy or
// move them all. Host only.
template <typename F>
void for_each_array(NetworkView& v, F&& f) {
  const long m = v.o.links, n = v.o.nodes, np = v.pump_count, nc = v.control_count;
  const long points = v.curve_ptr ? v.curve_ptr[v.curve_count] : 0;
  f(v.from, m), f(v.to, m), f(v.type, m), f(v.pump, m), f(v.minor_loss, m);
  f(v.resistance, m), f(v.roughness, m), f(v.diameter, m);
  f(v.pump_type, np), f(v.pump_curve, np), f(v.pump_h0, np), f(v.pump_r, np), f(v.pump_n, np);
  f(v.pump_max_head, np);
  f(v.curve_ptr, v.curve_count + 1L), f(v.curve_x, points), f(v.curve_y, points);
  f(v.valves, static_cast<long>(v.valve_count)), f(v.emitters, static_cast<long>(v.emitter_count));
  const long leaks = v.leak_count;
  f(v.leaks, leaks), f(v.leak_fixed, leaks), f(v.leak_variable, leaks);
  f(v.elevation, n), f(v.emitter, n), f(v.tank, n), f(v.can_overflow, n), f(v.max_head, n);
  f(v.min_head, n);
  f(v.control_node, nc), f(v.control_link, nc), f(v.control_type, nc), f(v.control_status, nc);
  f(v.control_grade, nc), f(v.control_setting, nc);
  f(v.diag_slot, static_cast<long>(v.o.nj)), f(v.slot_ij, m), f(v.slot_ji, m);
}

// One scenario's arrays: element i at data[i * stride].
struct Column {
  double* data;
  long stride;
  CGS_HD double& operator[](long i) const { return data[i * stride]; }
};
struct StatusColumn {
  signed char* data;
  long stride;
  CGS_HD LinkStatus operator()(long k) const { return static_cast<LinkStatus>(data[k * stride]); }
  CGS_HD void set(long k, LinkStatus s) const { data[k * stride] = static_cast<signed char>(s); }
};

// What the trials change: heads, demands (full and delivered), emitter flows, flows, settings,
// statuses; the coefficients, the system and its solution x (the new junction heads). pcv_loss:
// a PCV's loss coefficient (EPANET's link->R), which the host computes from the setting where
// EPANET does (inithyd, simple controls, rules): a junction-pressure control that moves the
// setting within the trials leaves it as it was, as EPANET's pswitch does.
struct State {
  Column head, demand, delivered, emitter_flow, xflow;  // per node
  Column leak_fixed, leak_variable;  // per node: a leaking junction's two leak flows (qfa, qva)
  Column flow, setting, pcv_loss, P, Y;                 // per link
  Column A, b, x;                                       // the junction system and its solution
  StatusColumn status;
  double relax = 1.0;  // EPANET's RelaxFactor: 0.6 once the trials are within DAMPLIMIT
};

CGS_HD double sign(double x) { return x < 0 ? -1.0 : 1.0; }  // EPANET's SGN: +1 at 0
CGS_HD bool closed(LinkStatus s) { return s <= LinkStatus::closed; }
CGS_HD LinkType link_type(const NetworkView& v, int k) { return static_cast<LinkType>(v.type[k]); }

}  // namespace cgs::net::gga
