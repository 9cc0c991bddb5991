// The gradient algorithm's head-loss coefficients and junction system (EPANET's hydcoeffs.c), for
// the host and the device: gga.hpp says which function decides what.
#pragma once

#include "network/gga_state.hpp"

namespace cgs::net::gga {

// ---- EPANET's formulas -------------------------------------------------------------------------
// EPANET's barrier functions: a steep head loss that keeps a flow above (below) a bound.
CGS_HD void add_lower_barrier(double dq, double& hloss, double& hgrad) {
  const double a = 1e9 * dq, b = sqrt(a * a + 1e-6);
  hloss += (a - b) / 2.0;
  hgrad += 1e9 / 2.0 * (1.0 - a / b);
}
CGS_HD void add_upper_barrier(double dq, double& hloss, double& hgrad) {
  const double a = 1e9 * dq, b = sqrt(a * a + 1e-6);
  hloss += (a + b) / 2.0;
  hgrad += 1e9 / 2.0 * (1.0 + a / b);
}

// The Darcy-Weisbach friction factor and its derivative: Swamee and Jain above Re = 4000 (w >=
// kA1), Dunlop's cubic interpolation between 2000 and 4000 (EPANET's frictionfactor).
CGS_HD double friction_factor(double q, double e, double s, double& dfdq) {
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

// The linearisation a link enters the matrix with: P = 1 / (dh/dq), Y = h / (dh/dq).
struct Linearised {
  double P, Y;
};

// Hazen-Williams or Chezy-Manning, h = r |q|^n + ml q^2, linearised below RQtol so the gradient
// (and with it the matrix) never vanishes.
CGS_HD Linearised power_law(double flow, double r, double n, double ml, double rq_tolerance) {
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
CGS_HD Linearised darcy_weisbach(double flow, double r, double ml, double roughness,
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
CGS_HD Linearised open_valve(double q, double km, double rq_tolerance) {
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
CGS_HD double tcv_loss(double setting, double diameter) {
  const double d2 = diameter * diameter;
  return 0.02517 * setting / (d2 * d2);
}

// An emitter's head loss and gradient at flow q (ke its coefficient, n its exponent); without
// backflow, a barrier against negative flow.
CGS_HD void emitter_loss(double q, double ke, double n, double rq_tolerance, bool backflow,
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
CGS_HD void demand_loss(double d, double full, double dp, double n, double& hloss, double& hgrad) {
  const double r = fabs(d) / full;
  hgrad = n * dp * pow(r, n - 1.0) / full;
  hloss = hgrad * d / n;
  add_lower_barrier(d, hloss, hgrad);
  add_upper_barrier(d - full, hloss, hgrad);
}

// ---- head loss coefficients (EPANET's linkcoeffs): P = 1 / (dh/dq), Y = h / (dh/dq) ----------
CGS_HD void set_coefficients(const State& s, int k, Linearised c) {
  s.P[k] = c.P;
  s.Y[k] = c.Y;
}

// A closed link keeps a 1e-8 conductance: the matrix stays positive definite.
CGS_HD void closed_link(const State& s, int k) { set_coefficients(s, k, {1.0 / kBig, s.flow[k]}); }

CGS_HD void pipe_coefficients(const NetworkView& v, const State& s, int k) {
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

// The segment of a curve (pump head or GPV head loss) that flow q falls in, as h = h0 + r q in
// internal units (EPANET's curvecoeff); curves are stored in the file's units.
CGS_HD void curve_segment(const NetworkView& v, int curve, double q, double& h0, double& r) {
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
  // As curvecoeff: (r Ucf_Q) / Ucf_H, not r (Ucf_Q / Ucf_H): the two round differently.
  h0 /= v.o.unit_length;
  r = r * v.o.unit_flow / v.o.unit_length;
}

// A pump's head gain at its speed (the setting): a custom curve's segment, a power function
// h0 - r q^n, or constant power (EPANET's pumpcoeff).
CGS_HD void pump_coefficients(const NetworkView& v, const State& s, int k) {
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
    hloss = -h0 * (speed * speed) + hgrad * s.flow[k];  // pumpcoeff: H0 * SQR(setting)
  } else {
    const double h0 = speed * speed * v.pump_h0[p];
    double n = v.pump_n[p];
    if (fabs(n - 1.0) < kTiny) n = 1.0;
    const double r = v.pump_r[p] * pow(speed, 2.0 - n);
    if (type == PumpCurveType::constant_power) {
      hgrad = -r / q / q;
      if (hgrad > kBig) return closed_link(s, k);  // cannot deliver: closed
      if (hgrad < kSmall) {                        // no resistance: an open valve
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

// Open, closed or throttled valve: minor loss h = km q^2, linearised at low flow like pipes.
CGS_HD void valve_coefficients(const NetworkView& v, const State& s, int k, double km) {
  if (closed(s.status(k))) return closed_link(s, k);
  set_coefficients(s, k, open_valve(s.flow[k], km, v.o.rq_tolerance));
}

// A PBV whose setting holds forces its head loss to equal the setting; otherwise an open valve.
CGS_HD void pbv_coefficients(const NetworkView& v, const State& s, int k) {
  const double km = v.minor_loss[k], set = s.setting[k];
  // pbvcoeff: Km * SQR(q), the flow squared first.
  if (set == kMissing || set == 0.0 || km * (s.flow[k] * s.flow[k]) > set) {
    valve_coefficients(v, s, k, km);
    return;
  }
  s.P[k] = kBig;
  s.Y[k] = set * kBig;
}

// A GPV: its head loss curve's segment at the flow.
CGS_HD void gpv_coefficients(const NetworkView& v, const State& s, int k) {
  if (s.status(k) == LinkStatus::closed) return valve_coefficients(v, s, k, v.minor_loss[k]);
  const double q = fmax(fabs(s.flow[k]), kTiny);
  double h0, r;
  curve_segment(v, static_cast<int>(lround(s.setting[k])), q, h0, r);
  r = fmax(r, kTiny);
  s.P[k] = 1.0 / r;
  s.Y[k] = (h0 / r + q) * sign(s.flow[k]);
}

CGS_HD_INLINE void link_coefficients(const NetworkView& v, const State& s, int k) {
  switch (link_type(v, k)) {
    case LinkType::pipe:
    case LinkType::cv_pipe: pipe_coefficients(v, s, k); break;
    case LinkType::pump: pump_coefficients(v, s, k); break;
    case LinkType::pbv: pbv_coefficients(v, s, k); break;
    case LinkType::tcv:
    case LinkType::pcv: {  // tcvcoeff, pcvcoeff: the setting's loss coefficient, or fully open
      const double set = s.setting[k];
      double km = v.minor_loss[k];
      if (set != kMissing)
        km = link_type(v, k) == LinkType::tcv ? tcv_loss(set, v.diameter[k]) : s.pcv_loss[k];
      valve_coefficients(v, s, k, km);  // one call for both: link_coefficients stays inlined
      break;
    }
    case LinkType::gpv: gpv_coefficients(v, s, k); break;
    case LinkType::prv:
    case LinkType::psv:
    case LinkType::fcv:
      if (s.setting[k] == kMissing)
        valve_coefficients(v, s, k, v.minor_loss[k]);
      else
        s.P[k] = 0.0;  // with the matrix (control_valve_contributions)
      break;
  }
}

// Every link's P and Y at the current flows (EPANET's headlosscoeffs).
CGS_HD void head_loss_coefficients(const NetworkView& v, const State& s) {
  for (int k = 0; k < v.o.links; ++k) link_coefficients(v, s, k);
}

CGS_HD void emitter_headloss(const NetworkView& v, const State& s, int i, double& hloss,
                             double& hgrad) {
  emitter_loss(s.emitter_flow[i], v.emitter[i], v.o.emitter_exponent, v.o.rq_tolerance,
               v.o.emitter_backflow, hloss, hgrad);
}

// EPANET's demandheadloss: pressure-driven demand as a virtual emitter. The delivered demand d
// flows from the junction to a reservoir at its elevation + the minimum pressure through a head
// loss that inverts the demand function, dp (d / full)^n with n = 1 / exponent; barriers keep d
// between 0 and the full demand.
CGS_HD void pda_headloss(const State& s, int i, double dp, double n, double& hloss, double& hgrad) {
  demand_loss(s.delivered[i], s.demand[i], dp, n, hloss, hgrad);
}

// EPANET's eval_leak_headloss: a leak as an emitter, h = c q^(1/n) (n = 0.5 for fixed-area
// leaks, 1.5 for areas growing with pressure), a barrier against negative flow.
CGS_HD void leak_loss(double q, double c, double n, double& hloss, double& hgrad) {
  n = 1.0 / n;
  hgrad = n * c * pow(fabs(q), n - 1.0);
  hloss = hgrad * q / n;
  add_lower_barrier(q, hloss, hgrad);
}

// EPANET's leakage_headloss for leaking junction j of the list (v.leaks[j]): the head loss and
// gradient of each of its two leaks at its current flow (0 and 0 for a kind it has not).
CGS_HD void leakage_headloss(const NetworkView& v, const State& s, int j, double& hfa,
                             double& gfa, double& hva, double& gva) {
  const int i = v.leaks[j];
  hfa = gfa = hva = gva = 0.0;
  if (v.leak_fixed[j] != 0.0) leak_loss(s.leak_fixed[i], v.leak_fixed[j], 0.5, hfa, gfa);
  if (v.leak_variable[j] != 0.0) leak_loss(s.leak_variable[i], v.leak_variable[j], 1.5, hva, gva);
}

// ---- the junction system (EPANET's hydcoeffs.c: linkcoeffs, emittercoeffs, demandcoeffs,
// nodecoeffs, valvecoeffs) ----------------------------------------------------------------------
CGS_HD void add_diag(const NetworkView& v, const State& s, int node, double value) {
  if (node < v.o.nj) s.A[v.diag_slot[node]] += value;
}
CGS_HD void add_rhs(const NetworkView& v, const State& s, int node, double value) {
  if (node < v.o.nj) s.b[node] += value;
}
CGS_HD void add_offdiag(const NetworkView& v, const State& s, int k, double value) {
  if (v.slot_ij[k] < 0) return;
  s.A[v.slot_ij[k]] += value;
  s.A[v.slot_ji[k]] += value;
}

// Every link with a coefficient (control valves with a setting come last): its conductance in
// the matrix, its Y and the fixed heads at its ends on the right-hand side, its flow in the
// balance (xflow) of its ends.
CGS_HD void link_contributions(const NetworkView& v, const State& s) {
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

// An emitter is a pipe from the junction to a reservoir at the junction's elevation.
CGS_HD void emitter_contributions(const NetworkView& v, const State& s) {
  for (int j = 0; j < v.emitter_count; ++j) {
    const int i = v.emitters[j];
    double hloss, hgrad;
    emitter_headloss(v, s, i, hloss, hgrad);
    add_diag(v, s, i, 1.0 / hgrad);
    add_rhs(v, s, i, (hloss + v.elevation[i]) / hgrad);
    s.xflow[i] -= s.emitter_flow[i];
  }
}

// EPANET's demandcoeffs: each junction with a positive demand gets its virtual emitter's
// conductance on the diagonal (the delivered demand itself enters the flow balance below).
CGS_HD void pda_contributions(const NetworkView& v, const State& s) {
  const Options& o = v.o;
  if (!o.pda) return;
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

// EPANET's leakagecoeffs: each leak an emitter to a reservoir at the junction's elevation, its
// flow out of the junction's balance.
CGS_HD void leakage_contributions(const NetworkView& v, const State& s) {
  for (int j = 0; j < v.leak_count; ++j) {
    const int i = v.leaks[j];
    double hfa, gfa, hva, gva;
    leakage_headloss(v, s, j, hfa, gfa, hva, gva);
    if (gfa > 0.0) {
      add_diag(v, s, i, 1.0 / gfa);
      add_rhs(v, s, i, (hfa + v.elevation[i]) / gfa);
    }
    if (gva > 0.0) {
      add_diag(v, s, i, 1.0 / gva);
      add_rhs(v, s, i, (hva + v.elevation[i]) / gva);
    }
    s.xflow[i] -= (s.leak_fixed[i] + s.leak_variable[i]);
  }
}

// EPANET's nodecoeffs: the delivered demand leaves each junction's flow balance.
CGS_HD void demand_contributions(const NetworkView& v, const State& s) {
  for (int i = 0; i < v.o.nj; ++i) {
    s.xflow[i] -= s.delivered[i];
    add_rhs(v, s, i, s.xflow[i]);
  }
}

// PRV, PSV and FCV with a setting (EPANET's valvecoeffs): an ACTIVE PRV (PSV) pins the head
// downstream (upstream) with a 1e8 diagonal and passes the flow the other side needs; an active
// FCV splits the network and moves its setting as a demand and a supply.
CGS_HD void control_valve_contributions(const NetworkView& v, const State& s) {
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
      add_offdiag(v, s, k, -1.0 / kBig);  // keeps the two sides connected
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
    valve_coefficients(v, s, k, v.minor_loss[k]);  // open, closed, or pressure-limited
    add_offdiag(v, s, k, -s.P[k]);
    add_diag(v, s, n1, s.P[k]);
    add_diag(v, s, n2, s.P[k]);
    add_rhs(v, s, n1, s.Y[k] - s.flow[k]);
    add_rhs(v, s, n2, -(s.Y[k] - s.flow[k]));
  }
}

// What the nodes and control valves add to the system once every link's contribution is in it.
CGS_HD void node_contributions(const NetworkView& v, const State& s) {
  emitter_contributions(v, s);
  pda_contributions(v, s);
  leakage_contributions(v, s);
  demand_contributions(v, s);
  control_valve_contributions(v, s);
}

// The junction system A x = b from the links' coefficients (head_loss_coefficients) and the
// current flows.
CGS_HD void assemble_system(const NetworkView& v, const State& s) {
  const Options& o = v.o;
  for (int e = 0; e < v.a_nnz; ++e) s.A[e] = 0.0;
  for (int i = 0; i < o.nj; ++i) s.b[i] = 0.0;
  for (int i = 0; i < o.nodes; ++i) s.xflow[i] = 0.0;
  link_contributions(v, s);
  node_contributions(v, s);
}

// The coefficients of every link and the junction system A x = b for the current flows.
CGS_HD void assemble(const NetworkView& v, const State& s) {
  head_loss_coefficients(v, s);
  assemble_system(v, s);
}

}  // namespace cgs::net::gga
