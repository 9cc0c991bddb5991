// The trials engine: one steady-state period of the gradient algorithm (gga.hpp) for one
// scenario, as a function of its arrays, run one GPU thread a scenario over interleaved arrays
// (slot i of scenario s at i * count + s, so a warp's 32 loads of one slot are one transaction;
// solver/cuda/batch_trials.cu), or on the host with a stride of 1 (trial_batch.cpp), which is the
// device's reference in the tests. netsolve --study ... --device gpu runs it.
//
// The period is GradientAlgorithm::solve_period's (hydraulics.hpp): gga.hpp's assembly, update,
// status rules and end-of-trial decisions in the same order, with EPANET's factorisation through
// the compiled Cholesky schedule as the linear solve, and a warm-started study's settling test;
// on the host its answers equal the direct study's bit for bit. What it does not do it reports
// (Outcome::needs_host) instead of approximating: a pivot <= 0 no valve explains (EPANET's error
// 110, or the file-order retry), trials exhausted or beyond the engine's budget
// (Options::trial_budget). The study then runs that scenario on the host's own engine.
#pragma once

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <type_traits>

#include "network/gga.hpp"
#include "network/network.hpp"
#include "network/cholesky_executor.hpp"  // CholeskyScheduleView, chol::
#include "network/trial_pcg.hpp"

namespace cgs::net::trials {

using namespace gga;  // the engine's arrays and functions are the gradient algorithm's

inline constexpr double kSettledHead = 0.1;  // ft: study.cpp's test of a warm start's own heads

// The network, the factorisation's schedule, and the linear solve: the factor's answer (the
// direct solver's), or with pcg.max_steps > 0 CG preconditioned by the factor from that answer
// (trial_pcg.hpp; netsolve --solver cg), which reads A's pattern.
struct NetworkView : gga::NetworkView {
  CholeskyScheduleView schedule;
  PcgOptions pcg;
  const int* a_row_ptr = nullptr;  // [nj + 1]
  const int* a_col = nullptr;      // [a_nnz]
};

// A scenario's arrays: the gradient algorithm's and the Cholesky schedule's.
struct State : gga::State {
  Column factor, rhs;
  PcgVectors pcg;  // with NetworkView::pcg only
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
  int cg_iterations = 0;   // the CG corrections' iterations over every trial (NetworkView::pcg)
  int corrected = 0;       // the trials whose factor's answer CG had to correct
  int min_node = -1;
  int below_threshold = 0;
  double min_pressure = 0;  // NaN when no junction's pressure is a number
  double watched_pressure = 0;
  double deficit = 0;  // PDA: % of the demand not delivered (EPANET's DemandReduction)
};

// Where a scenario's arrays lie in its slice of doubles (element i of array a at
// (offset_a + i) * stride): first its start, as GradientAlgorithm::export_trial_start writes it
// (head, demand, delivered, emitter flow, two leak flows per node; flow, setting, PCV loss per
// link), then work space.
struct Layout {
  long nodes = 0, links = 0, nj = 0, a_nnz = 0, slots = 0;
  long pcg_vectors = 0;  // PcgVectors' columns: 6 with NetworkView::pcg, else 0
  CGS_HD long start() const { return 6 * nodes + 3 * links; }
  CGS_HD long total() const {
    return start() + nodes + 2 * links + a_nnz + (3 + pcg_vectors) * nj + slots;
  }
};

CGS_HD Layout layout_of(const NetworkView& v) {
  Layout l;
  l.nodes = v.o.nodes, l.links = v.o.links, l.nj = v.o.nj, l.a_nnz = v.a_nnz;
  l.slots = static_cast<long>(v.schedule.n) + v.schedule.entries;
  l.pcg_vectors = v.pcg.max_steps > 0 ? 6 : 0;
  return l;
}

CGS_HD State state_at(const Layout& l, double* base, long stride, signed char* status) {
  State s{};
  long at = 0;
  auto next = [&](long size) {
    const Column c{base + at * stride, stride};
    at += size;
    return c;
  };
  s.head = next(l.nodes), s.demand = next(l.nodes), s.delivered = next(l.nodes);
  s.emitter_flow = next(l.nodes);
  s.leak_fixed = next(l.nodes), s.leak_variable = next(l.nodes);
  s.flow = next(l.links), s.setting = next(l.links), s.pcv_loss = next(l.links);
  s.xflow = next(l.nodes), s.P = next(l.links), s.Y = next(l.links);
  s.A = next(l.a_nnz), s.b = next(l.nj), s.x = next(l.nj);
  s.factor = next(l.slots), s.rhs = next(l.nj);
  if (l.pcg_vectors > 0) {
    PcgVectors& p = s.pcg;
    p.r = next(l.nj), p.dy = next(l.nj), p.z = next(l.nj), p.p = next(l.nj);
    p.q = next(l.nj), p.candidate = next(l.nj);
  }
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
  const auto move = [&](auto& p, long) {
    if (!p) return;
    if constexpr (std::is_same_v<std::remove_reference_t<decltype(p)>, const int*>)
      p = to_ints + (p - from_ints);
    else
      p = to_reals + (p - from_reals);
  };
  gga::for_each_array(v, move);
  move(v.a_row_ptr, 0), move(v.a_col, 0);
  CholeskyScheduleView& c = v.schedule;
  for (const int** p : {&c.order, &c.diag_source, &c.value_source, &c.col_ptr, &c.row, &c.pivot_ptr,
                        &c.pivot_terms, &c.update_ptr, &c.update_source, &c.update_multiplier})
    move(*p, 0);
  return v;
}

inline constexpr int kNotAccepted = -2;  // solve(): CG left the backward error above accept

// The direct solver's factorisation and solve, through the schedule (EPANET's order of
// operations), then with NetworkView::pcg the CG corrections. -1, the junction whose pivot was
// <= 0, or kNotAccepted.
CGS_HD int solve(const NetworkView& v, const State& s, Outcome& out) {
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
  if (v.pcg.max_steps <= 0) return -1;
  const JunctionMatrix matrix{c.n, v.a_row_ptr, v.a_col, s.A};
  const Factor m{&c, s.factor, s.rhs};
  return refine(matrix, m, v.pcg, s.pcg, s.b, s.x, out.cg_iterations, out.corrected)
             ? -1
             : kNotAccepted;
}

CGS_HD bool heads_settled(const ScenarioSpec& spec, const State& s, const double* heads) {
  for (int j = 0; j < 2; ++j)
    if (spec.settle[j] >= 0 && !(fabs(s.head[spec.settle[j]] - heads[j]) <= kSettledHead))
      return false;
  return true;
}

// The row: the lowest junction pressure (the first of the lowest), the watched one, the
// junctions below the threshold, and PDA's deficit.
CGS_HD void row(const NetworkView& v, const State& s, const ScenarioSpec& spec, Outcome& out) {
  const Options& o = v.o;
  double lowest = INFINITY;
  for (int i = 0; i < o.nj; ++i) {
    const double p = (s.head[i] - v.elevation[i]) * o.unit_pressure;
    if (p < lowest) lowest = p, out.min_node = i;
    out.below_threshold += p < o.pressure_threshold;
  }
  out.min_pressure = out.min_node >= 0 ? lowest : NAN;
  if (spec.watched >= 0)
    out.watched_pressure = (s.head[spec.watched] - v.elevation[spec.watched]) * o.unit_pressure;
  int deficient = 0;
  out.deficit = demand_deficit(v, s, deficient);
}

// The trials of one steady-state period (GradientAlgorithm::solve_period with a study's settling
// test), then the row's numbers.
CGS_HD Outcome run_period(const NetworkView& v, State& s, const ScenarioSpec& spec) {
  const Options& o = v.o;
  Outcome out;
  const int max_trials = trial_limit(o);
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
    const int failed = solve(v, s, out);
    if (failed == kNotAccepted) {
      out.needs_host = 1;  // the host's CG solver takes this system
      return out;
    }
    if (failed >= 0) {
      if (fix_bad_valve(v, s, failed) >= 0) continue;  // the trial again, as EPANET
      out.needs_host = 1;  // error 110, or the host's retry in the file's order
      return out;
    }
    const FlowChange change = update(v, s);
    const bool valve_change = damp_and_check_valves(v, s, change.relative);
    bool test = has_converged(v, s, change, o.accuracy);
    // The study's settling test: once, a warm start's own heads must have moved less than
    // kSettledHead in the trial.
    if (test && settling && !waited && !heads_settled(spec, s, settle_heads)) {
      test = false;
      waited = true;
    }
    const bool stop = end_of_trial(v, s, trial, test, valve_change, next_check, converged);
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
  row(v, s, spec, out);
  return out;
}

}  // namespace cgs::net::trials
