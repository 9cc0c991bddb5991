// The trials engine (network/trial_kernels.hpp, trial_batch.hpp; netsolve --batch-engine trials)
// on its host executor: each steady-state scenario's trials run by the engine's own copy of the
// gradient algorithm over flat arrays, which must give the direct study's rows bit for bit -- the
// same coefficients, assembly, factorisation order, status rules and settling test -- on fire
// flow, closure, PDA and demand draws, on networks with pumps (power and custom curves), valves,
// PCVs, DAMPLIMIT, HEADERROR, FLOWCHANGE, pipe leakage and an unbalanced period (handed back to
// the host engine); studies it cannot run (24 h, the available-flow search) declined with the
// reason; the CLI's choice.
#include <doctest/doctest.h>

#include "network/inp_reader.hpp"
#include "network/study.hpp"
#include "network/trial_batch.hpp"
#include "network_test_data.hpp"
#include "run_command.hpp"
#include "spmv/cuda/cuda_backends.hpp"
#include "study_test_util.hpp"

using namespace cgs::net;

namespace {

const std::string kNetworks = test::repo_networks();
const std::string kRegressions = kNetworks + "/regressions";
const std::string kEpanet23 = kNetworks + "/epanet23";

std::unique_ptr<LinearSolver> direct() { return make_direct_solver(); }

StudyOptions on_trials(StudyOptions o, int chunk, int budget = -1) {
  o.run.batch_engine = BatchEngineChoice::trials;
  o.run.batch = chunk;
  o.run.trial_budget = budget;
  return o;
}

}  // namespace

TEST_CASE("trials engine on the host: the direct study's rows, bit for bit") {
  StudyOptions demand = test::study_options(StudyKind::demand);
  demand.spec.draws = 12;
  demand.spec.cv = 0.4;
  demand.spec.seed = 3;
  const test::StudyCase cases[] = {
      {kNetworks + "/Net3.inp", test::study_options(StudyKind::fireflow), "Net3 fire flow", false},
      {kNetworks + "/Net3.inp", test::study_options(StudyKind::closure), "Net3 closure", false},
      {kNetworks + "/Net3.inp", test::study_options(StudyKind::fireflow), "Net3 fire flow, PDA",
       true},
      {kNetworks + "/Net3.inp", test::study_options(StudyKind::closure), "Net3 closure, PDA", true},
      {kNetworks + "/Net3.inp", demand, "Net3 demand draws", false},
      {kNetworks + "/Net1.inp", test::study_options(StudyKind::closure), "Net1 closure", false},
      {kRegressions + "/Net1_damplimit.inp", test::study_options(StudyKind::fireflow), "DAMPLIMIT",
       false},
      {kRegressions + "/Net1_unbalanced.inp", test::study_options(StudyKind::closure), "unbalanced",
       false},
      {kRegressions + "/ctown_pump_curve.inp", test::study_options(StudyKind::fireflow),
       "custom pump curves", false},
      {kRegressions + "/richmond_pump_curve.inp", test::study_options(StudyKind::closure),
       "pumps, closure", false},
      {kRegressions + "/pump_closed_in_status.inp", test::study_options(StudyKind::fireflow),
       "a pump closed in [STATUS]", false},
      {kRegressions + "/Net2_elimination_order.inp", test::study_options(StudyKind::fireflow),
       "Net2", false},
      {kEpanet23 + "/pcv_controls.inp", test::study_options(StudyKind::fireflow), "PCVs", false},
      {kEpanet23 + "/pcv_pressure_control.inp", test::study_options(StudyKind::closure),
       "PCVs and a pressure control", false},
      {kEpanet23 + "/Net1_headerror.inp", test::study_options(StudyKind::fireflow), "HEADERROR",
       false},
      {kEpanet23 + "/Net3_flowchange.inp", test::study_options(StudyKind::closure), "FLOWCHANGE",
       false},
      {kEpanet23 + "/Net1_leakage.inp", test::study_options(StudyKind::fireflow), "leakage", false},
      {kEpanet23 + "/Net1_leakage.inp", test::study_options(StudyKind::closure), "leakage, PDA",
       true},
  };
  for (const auto& c : cases) {
    CAPTURE(c.what);
    const Network net = test::case_network(c);
    const StudyResults reference = run_study(net, direct, c.options);
    REQUIRE(!reference.scenarios.empty());
    // chunk 0: every scenario in one call; 7: calls that do not divide them. budget -1: the
    // default hand-back of stragglers; 0: none; 2: most scenarios go back to the host engine.
    // (Plain variables: clang 14 cannot capture a structured binding in CAPTURE.)
    for (const auto& chunk_budget : {std::pair{0, -1}, {7, -1}, {0, 0}, {7, 2}}) {
      const int chunk = chunk_budget.first, budget = chunk_budget.second;
      CAPTURE(chunk);
      CAPTURE(budget);
      const StudyOptions o = on_trials(c.options, chunk, budget);
      const StudyResults r = run_study(net, direct, o);
      CHECK(r.plan.trials_declined.empty());
      const int scenarios = static_cast<int>(r.scenarios.size());
      CHECK(r.trial_calls == (chunk == 0 ? 1 : (scenarios + chunk - 1) / chunk));
      CHECK(test::study_csv_text(net, r, o) == test::study_csv_text(net, reference, c.options));
      // Without a budget only what it cannot do goes back to the host: nothing on Net3; an
      // unbalanced period always.
      if (budget == 0 && c.network.find("/Net3.inp") != std::string::npos)
        CHECK(r.host_scenarios == 0);
      if (c.what == "unbalanced") CHECK(r.host_scenarios > 0);
      if (budget == 2) CHECK(r.host_scenarios > scenarios / 2);
    }
  }
}

TEST_CASE("trials engine: studies it cannot run are declined, with the reason, and still run") {
  const Network net = read_inp(kNetworks + "/Net3.inp");
  StudyOptions day = test::study_options(StudyKind::closure, 6 * 3600);
  const StudyResults reference = run_study(net, direct, day);
  const StudyOptions o = on_trials(day, 0);
  const StudyResults r = run_study(net, direct, o);
  CHECK(r.trial_calls == 0);
  CHECK(r.plan.trials_declined.find("steady-state") != std::string::npos);
  CHECK(test::study_csv_text(net, r, o) == test::study_csv_text(net, reference, day));

  StudyOptions search = test::study_options(StudyKind::fireflow);
  search.elements = {0, 5};
  search.residual_pressure = 20;
  const StudyResults declined = run_study(net, direct, on_trials(search, 0));
  CHECK(declined.trial_calls == 0);
  CHECK(declined.plan.trials_declined.find("available-flow") != std::string::npos);
}

TEST_CASE("trials engine: the network's arrays and sizes") {
  const Network net = read_inp(kRegressions + "/ctown_pump_curve.inp");
  const GradientAlgorithm structure(net);
  const auto trial_network = build_trial_network(net, structure, 1e-4, 20);
  const trials::NetworkView& v = trial_network->view;
  CHECK(v.o.nj == net.junction_count);
  CHECK(v.o.links == static_cast<int>(net.links.size()));
  CHECK(v.a_nnz == structure.system().A.nnz());
  CHECK(v.valve_count == static_cast<int>(net.valves.size()));
  CHECK(v.o.accuracy == 1e-4);
  for (std::size_t k = 0; k < net.links.size(); ++k) {
    CAPTURE(k);
    REQUIRE(v.from[k] == net.links[k].from);
    REQUIRE(v.to[k] == net.links[k].to);
    REQUIRE(v.resistance[k] == structure.resistances()[k]);
    if (net.links[k].pump >= 0)
      REQUIRE(v.pump_curve[net.links[k].pump] == net.pumps[net.links[k].pump].head_curve);
  }
  int pressure_controls = 0;
  for (const Control& c : net.controls) pressure_controls += c.node >= 0 && net.is_junction(c.node);
  CHECK(v.control_count == pressure_controls);
  CHECK(v.schedule.n == net.junction_count);
  const trials::Layout l = trial_network->layout();
  CHECK(l.start() == 6 * l.nodes + 3 * l.links);
  CHECK(l.total() > l.start() + l.a_nnz + l.slots);
}

TEST_CASE("netsolve --batch-engine trials: the engine's line; refused with CG not on EPANET's factor") {
  const std::string netsolve = CGSOLVE_BINARY_DIR "/app/netsolve --network " + kNetworks +
                               "/Net3.inp --study closure --batch-engine trials";
  const auto run = cgs::testing::run_command(netsolve);
  CHECK(run.exit_code == 0);
  CHECK(run.output.find("trials engine: every scenario's trials in 1 call(s)") !=
        std::string::npos);
  const auto day = cgs::testing::run_command(netsolve + " --duration 2:00");
  CHECK(day.exit_code == 0);
  CHECK(day.output.find("engine: batched Cholesky on the host (the trials engine declined: it "
                        "runs steady-state studies only") != std::string::npos);
  // By default EPANET's path; --start auto: the choice and why, after the probes.
  CHECK(run.output.find("\n  start: cold, EPANET's own path (the default") != std::string::npos);
  const auto probed = cgs::testing::run_command(netsolve + " --start auto");
  CHECK(probed.output.find("\n  start: warm, from the baseline's solution (8 probe scenarios") !=
        std::string::npos);
  const auto cold = cgs::testing::run_command(netsolve + " --start cold");
  CHECK(cold.exit_code == 0);
  CHECK(cold.output.find("\n  start: cold, EPANET's own path (asked)") != std::string::npos);
  const auto both = cgs::testing::run_command(netsolve + " --cold-start --start warm");
  CHECK(both.exit_code == 2);
  CHECK(both.output.find("--cold-start") != std::string::npos);
  const auto cg = cgs::testing::run_command(netsolve + " --solver cg");
  CHECK(cg.exit_code == 0);
  CHECK(cg.output.find("by CG preconditioned by EPANET's factor, from its answer") !=
        std::string::npos);
  CHECK(cg.output.find("trials engine's CG: 0 trial(s) whose factor's answer CG corrected") !=
        std::string::npos);
  const auto jacobi = cgs::testing::run_command(netsolve + " --solver cg --precond jacobi");
  CHECK(jacobi.exit_code == 2);
  CHECK(jacobi.output.find("--batch-engine trials runs EPANET's factor") != std::string::npos);
  std::string why;
  if (!cgs::cuda_device_available(&why)) {  // --device gpu takes the trials engine: refused
    const auto gpu = cgs::testing::run_command(netsolve + " --device gpu");
    CHECK(gpu.exit_code == 4);
    CHECK(gpu.output.find("the trials engine needs a GPU") != std::string::npos);
  }
}

TEST_CASE("--start auto: warm only where probes agree with the cold start and save trials") {
  const auto probe = [](const std::string& path, StudyKind kind, bool pda) {
    Network net = read_inp(path);
    if (pda) {
      net.options.demand.model = DemandModel::pda;
      net.options.demand.required_pressure = 20;
    }
    StudyOptions o = test::study_options(kind);
    o.run.start = StudyStart::probe;
    const StudyResults r = run_study(net, direct, o);
    StudyOptions fixed = test::study_options(kind);
    fixed.run.start = r.plan.start;
    // The rows are those of the start it chose, whatever the probes ran before them.
    CHECK(test::study_csv_text(net, r, o) ==
          test::study_csv_text(net, run_study(net, direct, fixed), fixed));
    return r;
  };
  // Net3: warm saves a third of the trials (4.1 against 5.9) and every probe agrees.
  const StudyResults net3 = probe(kNetworks + "/Net3.inp", StudyKind::fireflow, false);
  CHECK(net3.plan.warm());
  CHECK(net3.plan.reason("start").find("warm, from the baseline's solution (8 probe scenarios") ==
        0);
  // C-Town's pumps and valves: the warm start ends elsewhere than EPANET's path (and takes more
  // trials), so EPANET's path is kept.
  const StudyResults ctown =
      probe(kRegressions + "/ctown_pump_curve.inp", StudyKind::fireflow, false);
  CHECK(!ctown.plan.warm());
  CHECK(ctown.plan.reason("start").find("cold, EPANET's own path") == 0);
  // Pressure-driven demand: cold without probing.
  const StudyResults pda = probe(kNetworks + "/Net3.inp", StudyKind::closure, true);
  CHECK(!pda.plan.warm());
  CHECK(pda.plan.reason("start").find("pressure-driven demand") != std::string::npos);
}
