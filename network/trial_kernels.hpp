// One steady-state period of the gradient algorithm for one scenario, written once for the host
// and the device (netsolve --study ... --device gpu, the "trials" engine; issue 23). The GPU runs
// it one thread a scenario over interleaved arrays (slot i of scenario s at i * count + s, so a
// warp's 32 loads of one slot are one transaction); the host runs the same functions with a
// stride of 1, which is the device's reference in the tests.
//
// It follows GradientAlgorithm (hydraulics.cpp) operation for operation -- coefficients, assembly,
// EPANET's factorisation through the compiled Cholesky schedule, the flow update, the valve, link
// and pressure-control status rules, DAMPLIMIT, PDA's demand update and convergence test, a
// warm-started study's settling test -- so that on the host its answers equal the direct study's
// bit for bit. What it does not do it reports (Outcome::needs_host) instead of approximating: a
// pivot <= 0 no valve explains (EPANET's error 110, or the file-order retry), trials exhausted
// or beyond the engine's budget (Options::trial_budget).
// The study then runs that scenario on the host's own engine.
#pragma once

#include <cmath>
#include <cstdint>

#include "network/network.hpp"
#include "network/cholesky_executor.hpp"  // CholeskyScheduleView, chol::

#if defined(__CUDACC__)
#define CGS_TRIAL_HD __host__ __device__ inline
#else
#define CGS_TRIAL_HD inline
#endif

namespace cgs::net::trials {

// EPANET's constants, one copy for this engine and GradientAlgorithm (hydraulics.cpp).
inline constexpr double kBig = 1.0e8, kSmall = 1.0e-6, kTiny = 1.0e-6;
inline constexpr double kPi = 3.14159265358979323846;
inline constexpr double kA1 = 1000.0 * kPi, kA2 = 500.0 * kPi;
inline constexpr double kA8 = 4.61841319859066668690, kA9 = -0.868588963806503655300;
inline constexpr double kAB = 3.28895476345399058690e-03, kAC = -5.14214965799093883760e-03;
inline constexpr double kPdaFlowTolerance = 0.0001;
inline constexpr double kSettledHead = 0.1;  // ft: study.cpp's test of a warm start's own heads

// The study's options as numbers (HydraulicOptions converted as GradientAlgorithm converts them).
struct Options {
  int nj = 0, nodes = 0, links = 0;
  int formula = 0;  // HeadlossFormula
  double viscosity = 0, rq_tolerance = 0, accuracy = 0, head_tolerance = 0, flow_tolerance = 0;
  double damp_limit = 0, emitter_exponent = 2;
  int max_trials = 0, extra_trials = -1, check_frequency = 2, max_check = 10;
  // A scenario still unsettled after this many trials is handed back to the host (Outcome::
  // needs_host): one thread a scenario, a call lasts as long as its slowest scenario, and the
  // host does a straggler's 100 trials in milliseconds. 0: no limit but the trials' own.
  int trial_budget = 0;
  bool emitter_backflow = true, pda = false;
  double pmin = 0, preq = 0, pexp = 0.5;  // ft, ft, -
  double unit_flow = 1, unit_length = 1, unit_pressure = 1;
  double pressure_threshold = 0;  // the file's pressure units
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
  const double* resistance = nullptr;  // GradientAlgorithm's R
  const double* roughness = nullptr;
  const double* diameter = nullptr;
  // pumps
  const int* pump_type = nullptr;  // PumpCurveType
  const int* pump_curve = nullptr;
  const double* pump_h0 = nullptr;
  const double* pump_r = nullptr;
  const double* pump_n = nullptr;
  const double* pump_max_head = nullptr;
  // curves, in the file's units: curve c's points at curve_ptr[c] .. curve_ptr[c + 1]
  const int* curve_ptr = nullptr;
  const double* curve_x = nullptr;
  const double* curve_y = nullptr;
  // valves in file order, emitters in index order
  int valve_count = 0, emitter_count = 0;
  const int* valves = nullptr;
  const int* emitters = nullptr;
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
  // the junction matrix (CSR, GradientAlgorithm's structure) and its factorisation
  int a_nnz = 0;
  const int* diag_slot = nullptr;
  const int* slot_ij = nullptr;
  const int* slot_ji = nullptr;
  CholeskyScheduleView schedule;
};

// What a scenario changes before its trials (the rest of its start is in its state arrays).
struct ScenarioSpec {
  int watched = -1;                // junction whose pressure the row reports (fire flow), -1
  int settle[2] = {-1, -1};        // a warm start's own junctions (settling test), -1
  double settle_head[2] = {0, 0};  // their heads before the first trial (the baseline's)
};

// What the trials gave; the final statuses come back beside it.
struct Outcome {
  int needs_host = 0;  // 1: run this scenario on the host engine (see the header comment)
  int trials = 0;
  int min_node = -1;
  int below_threshold = 0;
  double min_pressure = 0;  // NaN when no junction's pressure is a number
  double watched_pressure = 0;
  double deficit = 0;  // PDA: % of the demand not delivered (EPANET's DemandReduction)
};

// One scenario's arrays: element i at data[i * stride].
struct Column {
  double* data;
  long stride;
  CGS_TRIAL_HD double& operator[](long i) const { return data[i * stride]; }
};
struct StatusColumn {
  signed char* data;
  long stride;
  CGS_TRIAL_HD LinkStatus operator()(long k) const {
    return static_cast<LinkStatus>(data[k * stride]);
  }
  CGS_TRIAL_HD void set(long k, LinkStatus s) const {
    data[k * stride] = static_cast<signed char>(s);
  }
};

// The state arrays of a scenario, in the order of TrialLayout's per-scenario start:
//   nodes: head, demand, delivered, emitter_flow (4 x nodes), then links: flow, setting (2 x
//   links) -- what GradientAlgorithm::export_trial_start writes; the rest is work space.
struct State {
  Column head, demand, delivered, emitter_flow, xflow;  // per node
  Column flow, setting, P, Y;                           // per link
  Column A, b, x;                                       // the junction system and its solution
  Column factor, rhs;                                   // the Cholesky schedule's arrays
  StatusColumn status;
  double relax = 1.0;
};

// Where a scenario's arrays lie in its slice of doubles (element i of array a at
// (offset_a + i) * stride): first its start, as GradientAlgorithm::export_trial_start writes it
// (head, demand, delivered, emitter flow per node; flow, setting per link), then work space.
struct Layout {
  long nodes = 0, links = 0, nj = 0, a_nnz = 0, slots = 0;
  CGS_TRIAL_HD long start() const { return 4 * nodes + 2 * links; }
  CGS_TRIAL_HD long total() const { return start() + nodes + 2 * links + a_nnz + 3 * nj + slots; }
};

CGS_TRIAL_HD Layout layout_of(const NetworkView& v) {
  Layout l;
  l.nodes = v.o.nodes, l.links = v.o.links, l.nj = v.o.nj, l.a_nnz = v.a_nnz;
  l.slots = static_cast<long>(v.schedule.n) + v.schedule.entries;
  return l;
}

CGS_TRIAL_HD State state_at(const Layout& l, double* base, long stride, signed char* status) {
  State s{};
  long at = 0;
  auto next = [&](long size) {
    const Column c{base + at * stride, stride};
    at += size;
    return c;
  };
  s.head = next(l.nodes), s.demand = next(l.nodes), s.delivered = next(l.nodes);
  s.emitter_flow = next(l.nodes);
  s.flow = next(l.links), s.setting = next(l.links);
  s.xflow = next(l.nodes), s.P = next(l.links), s.Y = next(l.links);
  s.A = next(l.a_nnz), s.b = next(l.nj), s.x = next(l.nj);
  s.factor = next(l.slots), s.rhs = next(l.nj);
  s.status = StatusColumn{status, stride};
  return s;
}

// A call's scenarios start from one common start (the unchanged network's, BatchTrials::
// set_base) and differ from it in a few entries each (a fire flow's demand, a closed pipe's status
// and flow): scenario s's entries of the start at index[ptr[s] .. ptr[s + 1]) take value[...]
// (doubles: positions in Layout's start; statuses: links).
struct StartChanges {
  const long* ptr = nullptr;  // [count + 1]
  const int* index = nullptr;
  const double* value = nullptr;
  const long* status_ptr = nullptr;  // [count + 1]
  const int* status_index = nullptr;
  const signed char* status_value = nullptr;
};

// The view with every array moved from one base to another (the host's pools to the device's).
inline NetworkView rebase(NetworkView v, const int* from_ints, const int* to_ints,
                          const double* from_reals, const double* to_reals) {
  auto i = [&](const int*& p) {
    if (p) p = to_ints + (p - from_ints);
  };
  auto r = [&](const double*& p) {
    if (p) p = to_reals + (p - from_reals);
  };
  i(v.from), i(v.to), i(v.type), i(v.pump), r(v.minor_loss), r(v.resistance), r(v.roughness);
  r(v.diameter), i(v.pump_type), i(v.pump_curve), r(v.pump_h0), r(v.pump_r), r(v.pump_n);
  r(v.pump_max_head), i(v.curve_ptr), r(v.curve_x), r(v.curve_y), i(v.valves), i(v.emitters);
  r(v.elevation), r(v.emitter), i(v.tank), i(v.can_overflow), r(v.max_head), r(v.min_head);
  i(v.control_node), i(v.control_link), i(v.control_type), i(v.control_status);
  r(v.control_grade), r(v.control_setting), i(v.diag_slot), i(v.slot_ij), i(v.slot_ji);
  CholeskyScheduleView& c = v.schedule;
  i(c.order), i(c.diag_source), i(c.value_source), i(c.col_ptr), i(c.row), i(c.pivot_ptr);
  i(c.pivot_terms), i(c.update_ptr), i(c.update_source), i(c.update_multiplier);
  return v;
}

CGS_TRIAL_HD double sign(double x) { return x < 0 ? -1.0 : 1.0; }
CGS_TRIAL_HD bool closed(LinkStatus s) { return s <= LinkStatus::closed; }
CGS_TRIAL_HD LinkType link_type(const NetworkView& v, int k) {
  return static_cast<LinkType>(v.type[k]);
}

CGS_TRIAL_HD void add_lower_barrier(double dq, double& hloss, double& hgrad) {
  const double a = 1e9 * dq, b = sqrt(a * a + 1e-6);
  hloss += (a - b) / 2.0;
  hgrad += 1e9 / 2.0 * (1.0 - a / b);
}
CGS_TRIAL_HD void add_upper_barrier(double dq, double& hloss, double& hgrad) {
  const double a = 1e9 * dq, b = sqrt(a * a + 1e-6);
  hloss += (a + b) / 2.0;
  hgrad += 1e9 / 2.0 * (1.0 + a / b);
}

CGS_TRIAL_HD double friction_factor(double q, double e, double s, double& dfdq) {
  const double w = q / s;
  if (w >= kA1) {
    const double y1 = kA8 / pow(w, 0.9);
    const double y2 = e / 3.7 + y1;
    const double y3 = kA9 * log(y2);
    const double f = 1.0 / (y3 * y3);
    dfdq = 1.8 * f * y1 * kA9 / y2 / y3 / q;
    return f;
  }
  const double y2 = e / 3.7 + kAB;
  const double y3 = kA9 * log(y2);
  const double fa = 1.0 / (y3 * y3);
  const double fb = (2.0 + kAC / (y2 * y3)) * fa;
  const double r = w / kA2;
  const double x1 = 7.0 * fa - fb;
  const double x2 = 0.128 - 17.0 * fa + 2.5 * fb;
  const double x3 = -0.128 + 13.0 * fa - (fb + fb);
  const double x4 = 0.032 - 3.0 * fa + 0.5 * fb;
  dfdq = (x2 + r * (2.0 * x3 + r * 3.0 * x4)) / s / kA2;
  return x1 + r * (x2 + r * (x3 + r * x4));
}

// ---- head loss coefficients (GradientAlgorithm::headloss_coefficients and its parts) ----------
// The linearisation a link enters the matrix with: P = 1 / (dh/dq), Y = h / (dh/dq). The pure
// formulas below are GradientAlgorithm's too (hydraulics.cpp): one copy of EPANET's arithmetic.
struct Linearised {
  double P, Y;
};

// Hazen-Williams or Chezy-Manning, h = r |q|^n + ml q^2, linearised below RQtol so the gradient
// (and with it the matrix) never vanishes.
CGS_TRIAL_HD Linearised power_law(double flow, double r, double n, double ml, double rq_tolerance) {
  const double q = fabs(flow);
  double hgrad = n * r * pow(q, n - 1.0);
  double hloss;
  if (hgrad < rq_tolerance) {
    hgrad = rq_tolerance / n;
    hloss = hgrad * q;
  } else {
    hloss = hgrad * q / n;
  }
  if (ml > 0.0) {
    hloss += ml * q * q;
    hgrad += 2.0 * ml * q;
  }
  hloss *= sign(flow);
  return {1.0 / hgrad, hloss / hgrad};
}

// Darcy-Weisbach, h = f(q) r q^2 + ml q^2; laminar (Re <= 2000): Hagen-Poiseuille, f = 64 / Re.
CGS_TRIAL_HD Linearised darcy_weisbach(double flow, double r, double ml, double roughness,
                                       double diameter, double viscosity) {
  const double q = fabs(flow);
  const double e = roughness / diameter;
  const double sv = viscosity * diameter;
  double hloss, hgrad;
  if (q <= kA2 * sv) {
    const double rl = 16.0 * kPi * sv * r;
    hloss = flow * (rl + ml * q);
    hgrad = rl + 2.0 * ml * q;
  } else {
    double dfdq = 0.0;
    const double f = friction_factor(q, e, sv, dfdq);
    const double r1 = f * r + ml;
    hloss = r1 * q * flow;
    hgrad = 2.0 * r1 * q + dfdq * r * q * q;
  }
  return {1.0 / hgrad, hloss / hgrad};
}

// An open valve's minor loss h = km q^2, linearised at low flow like pipes; no loss: an open link.
CGS_TRIAL_HD Linearised open_valve(double q, double km, double rq_tolerance) {
  if (!(km > 0.0)) return {1.0 / kSmall, q};
  double hgrad = 2.0 * km * fabs(q), hloss;
  if (hgrad < rq_tolerance) {
    hgrad = rq_tolerance / 2.0;
    hloss = q * hgrad;
  } else {
    hloss = q * hgrad / 2.0;
  }
  return {1.0 / hgrad, hloss / hgrad};
}

// A TCV's loss coefficient from its setting and diameter (EPANET's tcvcoeff).
CGS_TRIAL_HD double tcv_loss(double setting, double diameter) {
  const double d2 = diameter * diameter;
  return 0.02517 * setting / (d2 * d2);
}

// An emitter's head loss and gradient at flow q (ke its coefficient, n its exponent); without
// backflow, a barrier against negative flow.
CGS_TRIAL_HD void emitter_loss(double q, double ke, double n, double rq_tolerance, bool backflow,
                               double& hloss, double& hgrad) {
  ke = fmax(kSmall, ke);
  hgrad = n * ke * pow(fabs(q), n - 1.0);
  if (hgrad < rq_tolerance) {
    hgrad = rq_tolerance / n;
    hloss = hgrad * q;
  } else {
    hloss = hgrad * q / n;
  }
  if (!backflow) add_lower_barrier(q, hloss, hgrad);
}

// EPANET's demandheadloss: pressure-driven demand as a virtual emitter carrying the delivered
// demand d of a full demand, through dp (d / full)^n, barriers keeping d in [0, full].
CGS_TRIAL_HD void demand_loss(double d, double full, double dp, double n, double& hloss,
                              double& hgrad) {
  const double r = fabs(d) / full;
  hgrad = n * dp * pow(r, n - 1.0) / full;
  hloss = hgrad * d / n;
  add_lower_barrier(d, hloss, hgrad);
  add_upper_barrier(d - full, hloss, hgrad);
}

CGS_TRIAL_HD void set_coefficients(const State& s, int k, Linearised c) {
  s.P[k] = c.P;
  s.Y[k] = c.Y;
}

CGS_TRIAL_HD void closed_link(const State& s, int k) {
  set_coefficients(s, k, {1.0 / kBig, s.flow[k]});
}

CGS_TRIAL_HD void pipe(const NetworkView& v, const State& s, int k) {
  if (closed(s.status(k))) return closed_link(s, k);
  const auto formula = static_cast<HeadlossFormula>(v.o.formula);
  if (formula == HeadlossFormula::darcy_weisbach)
    return set_coefficients(s, k,
                            darcy_weisbach(s.flow[k], v.resistance[k], v.minor_loss[k],
                                           v.roughness[k], v.diameter[k], v.o.viscosity));
  const double n = formula == HeadlossFormula::hazen_williams ? 1.852 : 2.0;
  set_coefficients(s, k,
                   power_law(s.flow[k], v.resistance[k], n, v.minor_loss[k], v.o.rq_tolerance));
}

CGS_TRIAL_HD void curve_segment(const NetworkView& v, int curve, double q, double& h0, double& r) {
  q *= v.o.unit_flow;
  const int first = v.curve_ptr[curve], n = v.curve_ptr[curve + 1] - first;
  const double* x = v.curve_x + first;
  const double* y = v.curve_y + first;
  int k2 = 0;
  while (k2 < n && x[k2] < q) ++k2;
  if (k2 == 0)
    ++k2;
  else if (k2 == n)
    --k2;
  const int k1 = k2 - 1;
  r = (y[k2] - y[k1]) / (x[k2] - x[k1]);
  h0 = y[k1] - r * x[k1];
  h0 /= v.o.unit_length;
  r = r * v.o.unit_flow / v.o.unit_length;
}

CGS_TRIAL_HD void pump(const NetworkView& v, const State& s, int k) {
  const double speed = s.setting[k];
  if (closed(s.status(k)) || speed == 0.0) return closed_link(s, k);
  const int p = v.pump[k];
  const auto type = static_cast<PumpCurveType>(v.pump_type[p]);
  const double q = fabs(s.flow[k]);
  double hloss, hgrad;
  if (type == PumpCurveType::custom) {
    double h0, r;
    curve_segment(v, v.pump_curve[p], q / speed, h0, r);
    hgrad = -r * speed;
    hloss = -h0 * (speed * speed) + hgrad * s.flow[k];
  } else {
    const double h0 = speed * speed * v.pump_h0[p];
    double n = v.pump_n[p];
    if (fabs(n - 1.0) < kTiny) n = 1.0;
    const double r = v.pump_r[p] * pow(speed, 2.0 - n);
    if (type == PumpCurveType::constant_power) {
      hgrad = -r / q / q;
      if (hgrad > kBig) return closed_link(s, k);
      if (hgrad < kSmall) {
        s.P[k] = 1.0 / kSmall;
        s.Y[k] = s.flow[k];
        return;
      }
      hloss = r / s.flow[k];
    } else if (n != 1.0) {
      hgrad = n * r * pow(q, n - 1.0);
      if (hgrad < v.o.rq_tolerance) {
        hgrad = v.o.rq_tolerance;
        hloss = h0 + hgrad * s.flow[k];
      } else {
        hloss = h0 + hgrad * s.flow[k] / n;
      }
    } else {
      hgrad = r;
      hloss = h0 + hgrad * s.flow[k];
    }
  }
  s.P[k] = 1.0 / hgrad;
  s.Y[k] = hloss / hgrad;
}

CGS_TRIAL_HD void valve(const NetworkView& v, const State& s, int k, double km) {
  if (closed(s.status(k))) return closed_link(s, k);
  set_coefficients(s, k, open_valve(s.flow[k], km, v.o.rq_tolerance));
}

CGS_TRIAL_HD void link_coefficients(const NetworkView& v, const State& s, int k) {
  switch (link_type(v, k)) {
    case LinkType::pipe:
    case LinkType::cv_pipe: pipe(v, s, k); break;
    case LinkType::pump: pump(v, s, k); break;
    case LinkType::pbv: {
      const double km = v.minor_loss[k], set = s.setting[k];
      if (set == kMissing || set == 0.0 || km * (s.flow[k] * s.flow[k]) > set) {
        valve(v, s, k, km);
      } else {
        s.P[k] = kBig;
        s.Y[k] = set * kBig;
      }
      break;
    }
    case LinkType::tcv: {
      const double set = s.setting[k];
      valve(v, s, k, set != kMissing ? tcv_loss(set, v.diameter[k]) : v.minor_loss[k]);
      break;
    }
    case LinkType::gpv: {
      if (s.status(k) == LinkStatus::closed) {
        valve(v, s, k, v.minor_loss[k]);
        break;
      }
      const double q = fmax(fabs(s.flow[k]), kTiny);
      double h0, r;
      curve_segment(v, static_cast<int>(lround(s.setting[k])), q, h0, r);
      r = fmax(r, kTiny);
      s.P[k] = 1.0 / r;
      s.Y[k] = (h0 / r + q) * sign(s.flow[k]);
      break;
    }
    case LinkType::prv:
    case LinkType::psv:
    case LinkType::fcv:
      if (s.setting[k] == kMissing)
        valve(v, s, k, v.minor_loss[k]);
      else
        s.P[k] = 0.0;
      break;
  }
}

CGS_TRIAL_HD void emitter_headloss(const NetworkView& v, const State& s, int i, double& hloss,
                                   double& hgrad) {
  emitter_loss(s.emitter_flow[i], v.emitter[i], v.o.emitter_exponent, v.o.rq_tolerance,
               v.o.emitter_backflow, hloss, hgrad);
}

CGS_TRIAL_HD void pda_headloss(const State& s, int i, double dp, double n, double& hloss,
                               double& hgrad) {
  demand_loss(s.delivered[i], s.demand[i], dp, n, hloss, hgrad);
}

// ---- the junction system (GradientAlgorithm::assemble) ------------------------------------------
CGS_TRIAL_HD void add_diag(const NetworkView& v, const State& s, int node, double value) {
  if (node < v.o.nj) s.A[v.diag_slot[node]] += value;
}
CGS_TRIAL_HD void add_rhs(const NetworkView& v, const State& s, int node, double value) {
  if (node < v.o.nj) s.b[node] += value;
}
CGS_TRIAL_HD void add_offdiag(const NetworkView& v, const State& s, int k, double value) {
  if (v.slot_ij[k] < 0) return;
  s.A[v.slot_ij[k]] += value;
  s.A[v.slot_ji[k]] += value;
}

CGS_TRIAL_HD void link_contributions(const NetworkView& v, const State& s) {
  const int nj = v.o.nj;
  for (int k = 0; k < v.o.links; ++k) {
    const double P = s.P[k];
    if (P == 0.0) continue;
    const int n1 = v.from[k], n2 = v.to[k];
    s.xflow[n1] -= s.flow[k];
    s.xflow[n2] += s.flow[k];
    add_offdiag(v, s, k, -P);
    if (n1 < nj) {
      add_diag(v, s, n1, P);
      add_rhs(v, s, n1, s.Y[k]);
    } else {
      add_rhs(v, s, n2, P * s.head[n1]);
    }
    if (n2 < nj) {
      add_diag(v, s, n2, P);
      add_rhs(v, s, n2, -s.Y[k]);
    } else {
      add_rhs(v, s, n1, P * s.head[n2]);
    }
  }
}

CGS_TRIAL_HD void control_valve_contributions(const NetworkView& v, const State& s) {
  for (int j = 0; j < v.valve_count; ++j) {
    const int k = v.valves[j];
    if (s.setting[k] == kMissing) continue;
    const int n1 = v.from[k], n2 = v.to[k];
    const LinkType t = link_type(v, k);
    if (t != LinkType::prv && t != LinkType::psv && t != LinkType::fcv) continue;
    const bool active = s.status(k) == LinkStatus::active;
    if (t == LinkType::prv && active) {
      const double hset = v.elevation[n2] + s.setting[k];
      s.P[k] = 0.0;
      s.Y[k] = s.flow[k] + s.xflow[n2];
      add_rhs(v, s, n2, hset * kBig);
      add_diag(v, s, n2, kBig);
      if (s.xflow[n2] < 0.0) add_rhs(v, s, n1, s.xflow[n2]);
      continue;
    }
    if (t == LinkType::psv && active) {
      const double hset = v.elevation[n1] + s.setting[k];
      s.P[k] = 0.0;
      s.Y[k] = s.flow[k] - s.xflow[n1];
      add_rhs(v, s, n1, hset * kBig);
      add_diag(v, s, n1, kBig);
      if (s.xflow[n1] > 0.0) add_rhs(v, s, n2, s.xflow[n1]);
      add_offdiag(v, s, k, -1.0 / kBig);
      add_diag(v, s, n2, 1.0 / kBig);
      continue;
    }
    if (t == LinkType::fcv && active) {
      const double q = s.setting[k];
      s.xflow[n1] -= q;
      s.xflow[n2] += q;
      s.Y[k] = s.flow[k] - q;
      add_rhs(v, s, n1, -q);
      add_rhs(v, s, n2, q);
      s.P[k] = 1.0 / kBig;
      add_offdiag(v, s, k, -s.P[k]);
      add_diag(v, s, n1, s.P[k]);
      add_diag(v, s, n2, s.P[k]);
      continue;
    }
    valve(v, s, k, v.minor_loss[k]);
    add_offdiag(v, s, k, -s.P[k]);
    add_diag(v, s, n1, s.P[k]);
    add_diag(v, s, n2, s.P[k]);
    add_rhs(v, s, n1, s.Y[k] - s.flow[k]);
    add_rhs(v, s, n2, -(s.Y[k] - s.flow[k]));
  }
}

CGS_TRIAL_HD void assemble(const NetworkView& v, const State& s) {
  const Options& o = v.o;
  for (int k = 0; k < o.links; ++k) link_coefficients(v, s, k);
  for (int e = 0; e < v.a_nnz; ++e) s.A[e] = 0.0;
  for (int i = 0; i < o.nj; ++i) s.b[i] = 0.0;
  for (int i = 0; i < o.nodes; ++i) s.xflow[i] = 0.0;
  link_contributions(v, s);
  for (int j = 0; j < v.emitter_count; ++j) {
    const int i = v.emitters[j];
    double hloss, hgrad;
    emitter_headloss(v, s, i, hloss, hgrad);
    add_diag(v, s, i, 1.0 / hgrad);
    add_rhs(v, s, i, (hloss + v.elevation[i]) / hgrad);
    s.xflow[i] -= s.emitter_flow[i];
  }
  if (o.pda) {
    const double dp = o.preq - o.pmin, n = 1.0 / o.pexp;
    for (int i = 0; i < o.nj; ++i) {
      if (s.demand[i] <= 0.0) continue;
      double hloss, hgrad;
      pda_headloss(s, i, dp, n, hloss, hgrad);
      if (hgrad > 0.0) {
        add_diag(v, s, i, 1.0 / hgrad);
        add_rhs(v, s, i, (hloss + v.elevation[i] + o.pmin) / hgrad);
      }
    }
  }
  for (int i = 0; i < o.nj; ++i) {
    s.xflow[i] -= s.delivered[i];
    add_rhs(v, s, i, s.xflow[i]);
  }
  control_valve_contributions(v, s);
}

// The direct solver's factorisation and solve, through the schedule (EPANET's order of
// operations). -1, or the junction whose pivot was <= 0.
CGS_TRIAL_HD int solve(const NetworkView& v, const State& s) {
  const CholeskyScheduleView& c = v.schedule;
  const chol::ConstStrided a{s.A.data, s.A.stride};
  const chol::Strided factor{s.factor.data, s.factor.stride};
  const chol::Strided rhs{s.rhs.data, s.rhs.stride};
  chol::gather(c, a, factor);
  const int column = chol::factorize(c, factor);
  if (column >= 0) return c.order[column];
  for (int k = 0; k < c.n; ++k) rhs[k] = s.b[c.order[k]];
  chol::substitute(c, {factor.data, factor.stride}, rhs);
  for (int k = 0; k < c.n; ++k) s.x[c.order[k]] = rhs[k];
  return -1;
}

// ---- the flow update (GradientAlgorithm::update) ----------------------------------------------
CGS_TRIAL_HD double update(const NetworkView& v, State& s) {
  const Options& o = v.o;
  for (int i = 0; i < o.nj; ++i) s.head[i] = s.x[i];
  double qsum = 0, dqsum = 0;
  for (int k = 0; k < o.links; ++k) {
    const double dh = s.head[v.from[k]] - s.head[v.to[k]];
    double dq = (s.Y[k] - s.P[k] * dh) * s.relax;
    if (link_type(v, k) == LinkType::pump &&
        static_cast<PumpCurveType>(v.pump_type[v.pump[k]]) == PumpCurveType::constant_power &&
        dq > s.flow[k])
      dq = s.flow[k] / 2.0;
    s.flow[k] -= dq;
    qsum += fabs(s.flow[k]);
    dqsum += fabs(dq);
  }
  for (int j = 0; j < v.emitter_count; ++j) {
    const int i = v.emitters[j];
    double hloss, hgrad;
    emitter_headloss(v, s, i, hloss, hgrad);
    const double dh = s.head[i] - v.elevation[i];
    const double dq = (hloss - dh) / hgrad * s.relax;
    s.emitter_flow[i] -= dq;
    qsum += fabs(s.emitter_flow[i]);
    dqsum += fabs(dq);
  }
  if (o.pda) {
    const double dp = fmax(o.preq - o.pmin, kMinPressureDifference), n = 1.0 / o.pexp;
    for (int i = 0; i < o.nj; ++i) {
      if (s.demand[i] <= 0.0) continue;
      double hloss, hgrad;
      pda_headloss(s, i, dp, n, hloss, hgrad);
      const double dh = s.head[i] - v.elevation[i] - o.pmin;
      double dq = (hloss - dh) / hgrad * s.relax;
      if (fabs(dq) > 0.4 * s.demand[i]) dq = 0.4 * sign(dq) * s.demand[i];
      s.delivered[i] -= dq;
      qsum += fabs(s.delivered[i]);
      dqsum += fabs(dq);
    }
  }
  return qsum > o.accuracy ? dqsum / qsum : dqsum;
}

// ---- status rules (GradientAlgorithm's, from EPANET's hydstatus.c) ------------------------------
// EPANET's prvstatus and psvstatus: the next status of a pressure-reducing (sustaining) valve from
// its heads h1 (upstream) and h2, its target head hset, its fully open loss hml and its flow q.
// Shared with GradientAlgorithm (hydraulics.cpp).
CGS_TRIAL_HD LinkStatus prv_status(LinkStatus s, double h1, double h2, double hset, double hml,
                                   double q, double htol, double qtol) {
  switch (s) {
    case LinkStatus::active:
      if (q < -qtol) return LinkStatus::closed;
      if (h1 - hml < hset - htol) return LinkStatus::open;
      return s;
    case LinkStatus::open:
      if (q < -qtol) return LinkStatus::closed;
      if (h2 >= hset + htol) return LinkStatus::active;
      return s;
    case LinkStatus::closed:
      if (h1 >= hset + htol && h2 < hset - htol) return LinkStatus::active;
      if (h1 < hset - htol && h1 > h2 + htol) return LinkStatus::open;
      return s;
    case LinkStatus::xpressure: return q < -qtol ? LinkStatus::closed : s;
    default: return s;
  }
}

CGS_TRIAL_HD LinkStatus psv_status(LinkStatus s, double h1, double h2, double hset, double hml,
                                   double q, double htol, double qtol) {
  switch (s) {
    case LinkStatus::active:
      if (q < -qtol) return LinkStatus::closed;
      if (h2 + hml > hset + htol) return LinkStatus::open;
      return s;
    case LinkStatus::open:
      if (q < -qtol) return LinkStatus::closed;
      if (h1 < hset - htol) return LinkStatus::active;
      return s;
    case LinkStatus::closed:
      if (h2 > hset + htol && h1 > h2 + htol) return LinkStatus::open;
      if (h1 >= hset + htol && h1 > h2 + htol) return LinkStatus::active;
      return s;
    case LinkStatus::xpressure: return q < -qtol ? LinkStatus::closed : s;
    default: return s;
  }
}

CGS_TRIAL_HD bool update_valve_status(const NetworkView& v, const State& s) {
  bool change = false;
  const double htol = v.o.head_tolerance, qtol = v.o.flow_tolerance;
  for (int j = 0; j < v.valve_count; ++j) {
    const int k = v.valves[j];
    if (s.setting[k] == kMissing) continue;
    const LinkType t = link_type(v, k);
    if (t != LinkType::prv && t != LinkType::psv) continue;
    const LinkStatus st = s.status(k);
    const double h1 = s.head[v.from[k]], h2 = s.head[v.to[k]];
    const double q = s.flow[k];
    const double hml = v.minor_loss[k] * q * q;
    const LinkStatus next =
        t == LinkType::prv
            ? prv_status(st, h1, h2, v.elevation[v.to[k]] + s.setting[k], hml, q, htol, qtol)
            : psv_status(st, h1, h2, v.elevation[v.from[k]] + s.setting[k], hml, q, htol, qtol);
    s.status.set(k, next);
    change = change || next != st;
  }
  return change;
}

CGS_TRIAL_HD bool damp_and_check_valves(const NetworkView& v, State& s, double relative_change) {
  s.relax = 1.0;
  if (v.o.damp_limit <= 0.0) return update_valve_status(v, s);
  if (relative_change > v.o.damp_limit) return false;
  s.relax = 0.6;
  return update_valve_status(v, s);
}

CGS_TRIAL_HD bool pda_converged(const NetworkView& v, const State& s) {
  const Options& o = v.o;
  const double dp = o.preq - o.pmin;
  for (int i = 0; i < o.nj; ++i) {
    const double full = s.demand[i];
    if (full <= 0.0) continue;
    const double p = s.head[i] - v.elevation[i];
    double q = full;
    if (p <= o.pmin)
      q = 0.0;
    else if (p < o.preq)
      q = full * pow((p - o.pmin) / dp, o.pexp);
    if (fabs(q - s.delivered[i]) > kPdaFlowTolerance) return false;
  }
  return true;
}

// EPANET's cvstatus: a check valve's next status from its head difference and flow.
CGS_TRIAL_HD LinkStatus check_valve_status(LinkStatus st, double dh, double q, double htol,
                                           double qtol) {
  if (fabs(dh) > htol) {
    if (dh < -htol) return LinkStatus::closed;
    if (q < -qtol) return LinkStatus::closed;
    return LinkStatus::open;
  }
  if (q < -qtol) return LinkStatus::closed;
  return st;
}

CGS_TRIAL_HD void tank_link_status(const NetworkView& v, const State& s, int k, int node,
                                   double q) {
  if (closed(s.status(k))) return;
  if (!v.tank[node]) return;
  const bool is_pump = link_type(v, k) == LinkType::pump;
  if (s.head[node] >= v.max_head[node] && !v.can_overflow[node]) {
    if (is_pump ? v.to[k] == node : q < 0.0) s.status.set(k, LinkStatus::temp_closed);
  } else if (s.head[node] <= v.min_head[node]) {
    if (is_pump ? v.from[k] == node : q > 0.0) s.status.set(k, LinkStatus::temp_closed);
  }
}

CGS_TRIAL_HD bool update_link_status(const NetworkView& v, const State& s) {
  const Options& o = v.o;
  bool change = false;
  for (int k = 0; k < o.links; ++k) {
    const int from = v.from[k], to = v.to[k];
    const LinkType type = link_type(v, k);
    const double dh = s.head[from] - s.head[to];
    const LinkStatus st = s.status(k);
    if (st == LinkStatus::xhead || st == LinkStatus::temp_closed) s.status.set(k, LinkStatus::open);
    if (type == LinkType::cv_pipe)
      s.status.set(
          k, check_valve_status(s.status(k), dh, s.flow[k], o.head_tolerance, o.flow_tolerance));
    if (type == LinkType::pump && s.status(k) >= LinkStatus::open && s.setting[k] > 0.0) {
      const int p = v.pump[k];
      double hmax = 1e10;
      LinkStatus next = LinkStatus::open;
      if (static_cast<PumpCurveType>(v.pump_type[p]) == PumpCurveType::constant_power) {
        if (s.flow[k] < kTiny) next = LinkStatus::temp_closed;
      } else {
        hmax = s.setting[k] * s.setting[k] * v.pump_max_head[p];
      }
      if (next != LinkStatus::temp_closed)
        next = -dh > hmax + o.head_tolerance ? LinkStatus::xhead : LinkStatus::open;
      s.status.set(k, next);
    }
    if (type == LinkType::fcv && s.setting[k] != kMissing) {
      const double h1 = s.head[from], h2 = s.head[to], q = s.flow[k];
      LinkStatus next = st;
      if (h1 - h2 < -o.head_tolerance)
        next = LinkStatus::xfcv;
      else if (q < -o.flow_tolerance)
        next = LinkStatus::xfcv;
      else if (st == LinkStatus::xfcv && q >= s.setting[k])
        next = LinkStatus::active;
      else if (st == LinkStatus::active && (h1 - h2) / (q * q) < v.minor_loss[k])
        next = LinkStatus::xfcv;
      s.status.set(k, next);
    }
    if (from >= o.nj) tank_link_status(v, s, k, from, s.flow[k]);
    if (to >= o.nj) tank_link_status(v, s, k, to, -s.flow[k]);
    change = change || s.status(k) != st;
  }
  return change;
}

CGS_TRIAL_HD int fix_bad_valve(const NetworkView& v, const State& s, int node) {
  for (int j = 0; j < v.valve_count; ++j) {
    const int k = v.valves[j];
    if (v.from[k] != node && v.to[k] != node) continue;
    const LinkType t = link_type(v, k);
    const bool control_valve = t == LinkType::prv || t == LinkType::psv || t == LinkType::fcv;
    if (!control_valve || s.status(k) != LinkStatus::active) return -1;
    s.status.set(k, t == LinkType::fcv ? LinkStatus::xfcv : LinkStatus::xpressure);
    return k;
  }
  return -1;
}

CGS_TRIAL_HD bool apply_pressure_controls(const NetworkView& v, const State& s) {
  bool any = false;
  const double htol = v.o.head_tolerance;
  for (int c = 0; c < v.control_count; ++c) {
    const double h = s.head[v.control_node[c]];
    const auto type = static_cast<ControlType>(v.control_type[c]);
    const bool fire = (type == ControlType::low_level && h <= v.control_grade[c] + htol) ||
                      (type == ControlType::high_level && h >= v.control_grade[c] - htol);
    if (!fire) continue;
    const int k = v.control_link[c];
    const LinkType t = link_type(v, k);
    const auto target = static_cast<LinkStatus>(v.control_status[c]);
    const double setting = v.control_setting[c];
    bool change = false;
    if (t == LinkType::pipe && s.status(k) != target) change = true;
    if (t == LinkType::pump && s.setting[k] != setting) change = true;
    if (t >= LinkType::prv) {
      if (s.setting[k] != setting)
        change = true;
      else if (s.setting[k] == kMissing && s.status(k) != target)
        change = true;
    }
    if (!change) continue;
    s.status.set(k, target);
    if (t != LinkType::pipe) s.setting[k] = setting;
    any = true;
  }
  return any;
}

// ---- the period (GradientAlgorithm::solve_period with a study's settling test) -----------------
CGS_TRIAL_HD bool heads_settled(const ScenarioSpec& spec, const State& s, const double* heads) {
  for (int j = 0; j < 2; ++j)
    if (spec.settle[j] >= 0 && !(fabs(s.head[spec.settle[j]] - heads[j]) <= kSettledHead))
      return false;
  return true;
}

// The trials of one steady-state period, then the row's numbers.
CGS_TRIAL_HD Outcome run_period(const NetworkView& v, State& s, const ScenarioSpec& spec) {
  const Options& o = v.o;
  Outcome out;
  const int max_trials = o.max_trials + (o.extra_trials > 0 ? o.extra_trials : 0);
  const bool settling = spec.settle[0] >= 0 || spec.settle[1] >= 0;
  double settle_heads[2] = {spec.settle_head[0], spec.settle_head[1]};
  bool waited = false, converged = false;
  int next_check = o.check_frequency;
  s.relax = 1.0;
  int trial = 1;
  while (trial <= max_trials) {
    if (o.trial_budget > 0 && trial > o.trial_budget) {
      out.needs_host = 1;
      return out;
    }
    assemble(v, s);
    const int failed = solve(v, s);
    if (failed >= 0) {
      if (fix_bad_valve(v, s, failed) >= 0) continue;  // the trial again, as EPANET
      out.needs_host = 1;  // error 110, or the host's retry in the file's order
      return out;
    }
    const double relerr = update(v, s);
    const bool valve_change = damp_and_check_valves(v, s, relerr);
    bool stop = false;
    bool settled = true;
    // has_converged, NaN included: only a change above ACCURACY fails it.
    const bool test = !(relerr > o.accuracy) && (!o.pda || pda_converged(v, s));
    if (test && settling && !waited && !heads_settled(spec, s, settle_heads)) {
      settled = false;
      waited = true;
    }
    if (test && settled) {
      if (trial > o.max_trials) {
        stop = converged = true;
      } else {
        bool status_change = valve_change;
        if (update_link_status(v, s)) status_change = true;
        if (apply_pressure_controls(v, s)) status_change = true;
        if (!status_change)
          stop = converged = true;
        else
          next_check = trial + o.check_frequency;
      }
    } else if (trial <= o.max_check && trial == next_check) {
      update_link_status(v, s);
      next_check += o.check_frequency;
    }
    if (settling)
      for (int j = 0; j < 2; ++j)
        if (spec.settle[j] >= 0) settle_heads[j] = s.head[spec.settle[j]];
    if (stop) break;
    ++trial;
  }
  out.trials = trial < max_trials ? trial : max_trials;
  if (!converged) {  // unbalanced: the host engine words the warning and its halting
    out.needs_host = 1;
    return out;
  }
  // The row: the lowest junction pressure (the first of the lowest), the watched one, the
  // junctions below the threshold, and PDA's deficit.
  double lowest = INFINITY;
  for (int i = 0; i < o.nj; ++i) {
    const double p = (s.head[i] - v.elevation[i]) * o.unit_pressure;
    if (p < lowest) lowest = p, out.min_node = i;
    out.below_threshold += p < o.pressure_threshold;
  }
  out.min_pressure = out.min_node >= 0 ? lowest : NAN;
  if (spec.watched >= 0)
    out.watched_pressure = (s.head[spec.watched] - v.elevation[spec.watched]) * o.unit_pressure;
  if (o.pda) {
    double total = 0, reduction = 0;
    for (int i = 0; i < o.nj; ++i) {
      if (s.demand[i] <= 0.0 || s.delivered[i] + kPdaFlowTolerance >= s.demand[i]) continue;
      total += s.demand[i];
      reduction += s.demand[i] - s.delivered[i];
    }
    if (total > 0.0) out.deficit = reduction / total * 100.0;
  }
  return out;
}

}  // namespace cgs::net::trials
