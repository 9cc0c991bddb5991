// The trials engine on the GPU (network/batch_trials_gpu.cu; netsolve --study ... --device gpu):
// one thread a scenario runs network/trial_kernels.hpp's period; its rows against the same
// engine's host executor (which test_trials_study.cpp holds equal to the direct study bit for
// bit) -- fire flow, closure, PDA, demand draws, pumps with custom curves, DAMPLIMIT, PCVs,
// HEADERROR, FLOWCHANGE, pipe leakage, an unbalanced period handed back -- and calls smaller than the study. MESSAGE lines (-s) give how
// many rows are the host's to the bit and the largest difference.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "gpu_test_util.hpp"
#include "network/inp_reader.hpp"
#include "network/network_test_data.hpp"
#include "network/study.hpp"
#include "network/study_test_util.hpp"
#include "network/trial_batch.hpp"

using namespace cgs;
using namespace cgs::net;

namespace {

std::unique_ptr<LinearSolver> direct() { return make_direct_solver(); }

// No trial budget unless asked: a scenario at the budget's edge could go back to the host on one
// engine and not on the other (a trial more or less, below).
StudyOptions with_engine(StudyOptions o, bool gpu, int chunk, int budget = 0) {
  o.run.gpu = gpu;
  o.run.batch_engine = BatchEngineChoice::trials;
  o.run.batch = chunk;
  o.run.trial_budget = budget;
  return o;
}

}  // namespace

TEST_CASE("GPU trials engine: the host executor's rows (the direct study's)") {
  CGS_REQUIRE_GPU_OR_SKIP();
  const std::string nets = test::repo_networks(), reg = nets + "/regressions";
  StudyOptions demand = test::study_options(StudyKind::demand);
  demand.spec.draws = 40;
  demand.spec.cv = 0.4;
  const test::StudyCase cases[] = {
      {nets + "/Net3.inp", test::study_options(StudyKind::fireflow), "Net3 fire flow", false},
      {nets + "/Net3.inp", test::study_options(StudyKind::closure), "Net3 closure", false},
      {nets + "/Net3.inp", test::study_options(StudyKind::fireflow), "Net3 fire flow, PDA", true},
      {nets + "/Net3.inp", demand, "Net3 demand draws", false},
      {reg + "/Net1_damplimit.inp", test::study_options(StudyKind::fireflow), "DAMPLIMIT", false},
      {reg + "/Net1_unbalanced.inp", test::study_options(StudyKind::closure), "unbalanced", false},
      {reg + "/ctown_pump_curve.inp", test::study_options(StudyKind::fireflow), "C-Town pumps",
       false},
      {reg + "/richmond_pump_curve.inp", test::study_options(StudyKind::closure),
       "Richmond closure", false},
      {nets + "/epanet23/pcv_controls.inp", test::study_options(StudyKind::fireflow), "PCVs",
       false},
      {nets + "/epanet23/pcv_pressure_control.inp", test::study_options(StudyKind::closure),
       "PCVs and a pressure control", false},
      {nets + "/epanet23/Net1_headerror.inp", test::study_options(StudyKind::fireflow),
       "HEADERROR", false},
      {nets + "/epanet23/Net3_flowchange.inp", test::study_options(StudyKind::closure),
       "FLOWCHANGE", false},
      {nets + "/epanet23/Net1_leakage.inp", test::study_options(StudyKind::fireflow), "leakage",
       false},
  };
  for (const auto& c : cases) {
    CAPTURE(c.what);
    const Network net = test::case_network(c);
    const StudyResults host = run_study(net, direct, with_engine(c.options, false, 0));
    for (int chunk : {0, 33}) {
      CAPTURE(chunk);
      const StudyOptions o = with_engine(c.options, true, chunk);
      const StudyResults gpu = run_study(net, direct, o);
      CHECK(gpu.plan.trials_declined.empty());
      CHECK(gpu.trial_calls >= 1);
      CHECK(gpu.host_scenarios == host.host_scenarios);
      REQUIRE(gpu.scenarios.size() == host.scenarios.size());
      // The device's pow and log round some last bits differently from the host's, so a
      // scenario's trials take another path through rounding and stop elsewhere within ACCURACY:
      // rows as the study's own tolerance against EPANET (1e-3), a trial more or less
      // (where no junction is cut off: there pressures hang on 1e-8 couplings, and trials too).
      test::check_same_rows(net, c.options.spec.kind, gpu, host);
      int identical = 0;
      double largest = 0;
      for (std::size_t i = 0; i < gpu.scenarios.size(); ++i) {
        const ScenarioResult &g = gpu.scenarios[i], &h = host.scenarios[i];
        CAPTURE(i);
        if (!h.ok || h.cut_off > 0) continue;  // cut-off junctions: check_same_rows says why
        CHECK(std::abs(g.trials - h.trials) <= 1);
        largest = std::max(largest, std::abs(g.min_pressure - h.min_pressure));
        identical += g.trials == h.trials && g.min_pressure == h.min_pressure;
      }
      MESSAGE(c.what << ": " << identical << " of " << gpu.scenarios.size()
                     << " rows identical to the host's bits, largest difference of the lowest "
                     << "pressure " << largest << "; kernels " << gpu.trial_kernel_ms << " ms");
    }
  }
}

TEST_CASE("GPU trials engine: stragglers beyond the trial budget go back to the host") {
  CGS_REQUIRE_GPU_OR_SKIP();
  const Network net = read_inp(test::repo_networks() + "/Net3.inp");
  const StudyOptions closure = test::study_options(StudyKind::closure);
  const StudyResults reference = run_study(net, direct, closure);
  const StudyResults gpu = run_study(net, direct, with_engine(closure, true, 0, 2));
  CHECK(gpu.host_scenarios > static_cast<int>(gpu.scenarios.size()) / 2);
  test::check_same_rows(net, StudyKind::closure, gpu, reference);
}

TEST_CASE("GPU trials engine with CG (EPANET's factor as preconditioner): the host executor's rows") {
  CGS_REQUIRE_GPU_OR_SKIP();
  const std::string nets = test::repo_networks(), reg = nets + "/regressions";
  const test::StudyCase cases[] = {
      {nets + "/Net3.inp", test::study_options(StudyKind::fireflow), "Net3 fire flow", false},
      {nets + "/Net3.inp", test::study_options(StudyKind::closure), "Net3 closure, PDA", true},
      {reg + "/ctown_pump_curve.inp", test::study_options(StudyKind::fireflow), "C-Town pumps",
       false},
  };
  for (const auto& c : cases) {
    CAPTURE(c.what);
    const Network net = test::case_network(c);
    auto with_cg = [&](bool gpu) {
      StudyOptions o = with_engine(c.options, gpu, 0);
      o.run.solver = StudySolver::cg;
      o.run.cg = test::network_cg();
      o.run.cg.precond = PrecondSpec{"auto", "", {}};
      return o;
    };
    const StudyResults host = run_study(net, direct, with_cg(false));
    const StudyResults gpu = run_study(net, direct, with_cg(true));
    REQUIRE(gpu.plan.trials_cg);
    CHECK(gpu.trial_calls >= 1);
    CHECK(gpu.host_scenarios == host.host_scenarios);
    // The factor's answer passes the backward-error test on the device as on the host.
    CHECK(gpu.trial_corrections == host.trial_corrections);
    test::check_same_rows(net, c.options.spec.kind, gpu, host);
    MESSAGE(c.what << ": corrections " << gpu.trial_corrections << " (host "
                   << host.trial_corrections << "), CG iterations " << gpu.trial_cg_iterations
                   << "; kernels " << gpu.trial_kernel_ms << " ms");
  }
}
