// The gradient algorithm (Todini and Pilati's GGA as EPANET 2.2/2.3 implements it), written once:
// head-loss coefficients, the junction system, the flow update, the status rules and
// pressure-driven demand, as host-and-device functions over a NetworkView (the network, read
// only) and a State (the arrays of one scenario, element i at data[i * stride]; gga_state.hpp).
//
// A trial, from the flows Q and heads H of the one before:
//   P_k = 1 / h_k'(Q_k),  Y_k = h_k(Q_k) / h_k'(Q_k)      each link's head loss, linearised
//   A H = F      A: the sum of the P_k of the links at a junction on its diagonal, -P_k between
//                the two ends of a link; F: the flow balance with the Y_k, fixed heads, demands
//   Q_k -= (Y_k - P_k (H_from - H_to)) * relax            the Newton step on each flow
// until sum |dQ| / sum |Q| <= ACCURACY and no status changes. The drivers run the trials and solve
// A H = F: GradientAlgorithm (hydraulics.hpp) with a LinearSolver on one scenario, the trials
// engine (trial_kernels.hpp) with EPANET's factorisation on many, one GPU thread a scenario over
// interleaved arrays. Every decision is taken here:
//   assemble()               the coefficients and the system: pipes, pumps, valves, emitters,
//                            PDA's virtual emitters, control valves (gga_coeffs.hpp, EPANET's
//                            hydcoeffs.c)
//   fix_bad_valve()          a pivot <= 0 at a junction: the active control valve there is set
//                            XPRESSURE (XFCV) and the trial repeated, or no solution (error 110)
//   update()                 new flows, emitter flows and delivered demands (EPANET's newflows):
//                            the relative flow change
//   damp_and_check_valves()  DAMPLIMIT: the PRV/PSV status rules and the next trial's relaxation
//   has_converged()          ACCURACY, HEADERROR and FLOWCHANGE (EPANET's hasconverged and
//                            checkhydbalance), then pda_converged()
//   pda_converged()          PDA: every delivered demand within 1e-4 cfs of its pressure's
//   end_of_trial()           flows converged: the link status rules and pressure controls, and
//                            the period's end where nothing changed; else the periodic check
//   demand_deficit()         PDA: the junctions short of their demand, and the shortfall in %
// The status rules are EPANET's hydstatus.c (gga_status.hpp): valves every trial, links every
// CHECKFREQ trials up to MAXCHECK and at convergence. Both drivers execute these functions on the
// same inputs in the same order, so they give the same bits (tests/network/test_trials_study.cpp).
#pragma once

#include <cmath>

#include "base/host_device.hpp"
#include "network/gga_coeffs.hpp"
#include "network/gga_state.hpp"
#include "network/gga_status.hpp"
#include "network/network.hpp"

namespace cgs::net::gga {

// ---- the flow update (EPANET's newflows) -------------------------------------------------------
struct FlowChange {
  double relative;  // EPANET's convergence number: sum |dq| / sum |q| (sum |dq| below ACCURACY)
  double largest;   // the largest |dq|, cfs
  // Where it is (EPANET's maxflowlink, maxflownode for STATUS FULL): a link (0 where no change
  // exceeds 0, as EPANET's first link), else a node (an emitter or a PDA demand), -1 for neither.
  int largest_link = 0, largest_node = -1;
};

// The largest change so far and where it is, kept as EPANET keeps them (a NaN leaves them).
struct Largest {
  double value = 0;
  int link = 0, node = -1;
};
CGS_HD void keep_largest(Largest& l, double dq, int link, int node) {
  if (!(fabs(dq) > l.value)) return;
  l.value = fabs(dq);
  l.link = link;
  l.node = node;
}

// The new junction heads (x) and from them every link's flow, each emitter's flow and (PDA) each
// delivered demand, Newton steps scaled by the relaxation.
CGS_HD FlowChange update(const NetworkView& v, const State& s) {
  const Options& o = v.o;
  for (int i = 0; i < o.nj; ++i) s.head[i] = s.x[i];
  double qsum = 0, dqsum = 0;
  Largest largest;
  for (int k = 0; k < o.links; ++k) {
    const double dh = s.head[v.from[k]] - s.head[v.to[k]];
    double dq = (s.Y[k] - s.P[k] * dh) * s.relax;
    if (link_type(v, k) == LinkType::pump &&
        static_cast<PumpCurveType>(v.pump_type[v.pump[k]]) == PumpCurveType::constant_power &&
        dq > s.flow[k])
      dq = s.flow[k] / 2.0;  // keeps constant-power pump flow positive
    s.flow[k] -= dq;
    qsum += fabs(s.flow[k]);
    dqsum += fabs(dq);
    keep_largest(largest, dq, k, -1);
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
    keep_largest(largest, dq, -1, i);
  }
  // EPANET's newdemandflows: each delivered demand moves by its virtual emitter's flow change, at
  // most 40% of the full demand per trial. Unlike demandcoeffs, EPANET holds the pressure range
  // here to at least MINPDIFF (0.1, compared with the range in ft): kept, for the same trials.
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
      keep_largest(largest, dq, -1, i);
    }
  }
  // EPANET's newleakageflows: each leak's flow moves by its Newton step.
  for (int j = 0; j < v.leak_count; ++j) {
    const int i = v.leaks[j];
    double hfa, gfa, hva, gva;
    leakage_headloss(v, s, j, hfa, gfa, hva, gva);
    const double h = s.head[i] - v.elevation[i];
    double dqfa = 0.0, dqva = 0.0;
    if (gfa > 0.0) {
      dqfa = (hfa - h) / gfa * s.relax;
      s.leak_fixed[i] -= dqfa;
    }
    if (gva > 0.0) {
      dqva = (hva - h) / gva * s.relax;
      s.leak_variable[i] -= dqva;
    }
    const double dq = dqfa + dqva;
    if (dq == 0.0) continue;
    qsum += fabs(s.leak_fixed[i] + s.leak_variable[i]);
    dqsum += fabs(dq);
    keep_largest(largest, dq, -1, i);
  }
  return {qsum > o.accuracy ? dqsum / qsum : dqsum, largest.value, largest.link, largest.node};
}

// EPANET's leakagehasconverged: each leaking junction's leak flows within 1e-4 cfs of what the
// FAVAD equation gives at its pressure head.
CGS_HD bool leakage_converged(const NetworkView& v, const State& s) {
  for (int j = 0; j < v.leak_count; ++j) {
    const int i = v.leaks[j];
    const double h = s.head[i] - v.elevation[i];
    double expected = 0.0;
    if (h > 0.0) {
      if (v.leak_fixed[j] > 0.0) expected = sqrt(h / v.leak_fixed[j]);
      if (v.leak_variable[j] > 0.0) expected += pow(h / v.leak_variable[j], 1.5);
    }
    const double q = s.leak_fixed[i] + s.leak_variable[i];
    if (fabs(expected - q) > kPdaFlowTolerance) return false;
  }
  return true;
}

// without one, valves are checked every trial and flows move the full Newton step.
CGS_HD bool damp_and_check_valves(const NetworkView& v, State& s, double relative_change) {
  s.relax = 1.0;
  if (v.o.damp_limit <= 0.0) return update_valve_status(v, s);
  if (relative_change > v.o.damp_limit) return false;
  s.relax = 0.6;
  return update_valve_status(v, s);
}

// EPANET's pdaconverged: the demand function at each junction's pressure, against the delivered
// demand the trials have reached.
CGS_HD bool pda_converged(const NetworkView& v, const State& s) {
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

// pdaconverged's other output: the junctions short of their demand (by more than 1e-4 cfs), and
// their shortfall as a percentage of their demand (0 under DDA).
CGS_HD double demand_deficit(const NetworkView& v, const State& s, int& deficient_nodes) {
  deficient_nodes = 0;
  if (!v.o.pda) return 0.0;
  double total = 0, reduction = 0;
  for (int i = 0; i < v.o.nj; ++i) {
    if (s.demand[i] <= 0.0 || s.delivered[i] + kPdaFlowTolerance >= s.demand[i]) continue;
    ++deficient_nodes;
    total += s.demand[i];
    reduction += s.demand[i] - s.delivered[i];
  }
  return total > 0.0 ? reduction / total * 100.0 : 0.0;
}

// EPANET's checkhydbalance: the largest |h_from - h_to - h(q)| over the links not closed, h(q) =
// Y / P from the head loss coefficients at the new flows (recomputed into P and Y as EPANET does;
// the next trial's assembly computes them again); links with P = 0 (control valves with a
// setting) are skipped.
CGS_HD double largest_head_error(const NetworkView& v, const State& s) {
  head_loss_coefficients(v, s);
  double largest = 0.0;
  for (int k = 0; k < v.o.links; ++k) {
    if (closed(s.status(k)) || s.P[k] == 0.0) continue;
    const double dh = s.head[v.from[k]] - s.head[v.to[k]];
    const double error = fabs(dh - s.Y[k] / s.P[k]);
    if (error > largest) largest = error;
  }
  return largest;
}

// EPANET's hasconverged: the relative flow change within `accuracy` (a NaN passes, as EPANET's
// test), then HEADERROR (the largest head loss error) and FLOWCHANGE (the largest flow change of
// the trial) where set, then the leaks (leakage_converged) and (PDA) every delivered demand
// within 1e-4 cfs of its pressure's.
CGS_HD bool has_converged(const NetworkView& v, const State& s, const FlowChange& change,
                          double accuracy) {
  const Options& o = v.o;
  if (change.relative > accuracy) return false;
  if (o.head_error_limit > 0.0 && largest_head_error(v, s) > o.head_error_limit) return false;
  if (o.flow_change_limit > 0.0 && change.largest > o.flow_change_limit) return false;
  if (v.leak_count > 0 && !leakage_converged(v, s)) return false;
  return !o.pda || pda_converged(v, s);
}

// ---- the end of a trial (EPANET's hydsolve) ----------------------------------------------------
// The trials a period may take: MAXITER, then up to EXTRA_ITER more, in which converged flows end
// the period without another status check.
CGS_HD int trial_limit(const Options& o) {
  return o.max_trials + (o.extra_trials > 0 ? o.extra_trials : 0);
}

// After a trial's flow update and valve checks (valve_change): with the flows converged, an extra
// trial ends the period, else the link status rules and the pressure controls run and the
// period ends where neither changed anything (converged); without, the link status rules run
// every CHECKFREQ trials up to MAXCHECK. next_check: the trial of the next periodic check.
// Returns true where the period ends.
CGS_HD bool end_of_trial(const NetworkView& v, const State& s, int trial, bool flows_converged,
                         bool valve_change, int& next_check, bool& converged) {
  const Options& o = v.o;
  if (flows_converged) {
    if (trial > o.max_trials) return converged = true;
    bool status_change = valve_change;
    if (update_link_status(v, s)) status_change = true;
    if (apply_pressure_controls(v, s)) status_change = true;
    if (!status_change) return converged = true;
    next_check = trial + o.check_frequency;
  } else if (trial <= o.max_check && trial == next_check) {
    update_link_status(v, s);
    next_check += o.check_frequency;
  }
  return false;
}

}  // namespace cgs::net::gga
