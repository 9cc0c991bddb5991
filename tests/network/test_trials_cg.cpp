// CG on the trials engine (network/trial_pcg.hpp; netsolve --study ... --solver cg or
// --batch-engine cg): each trial's system by CG preconditioned by EPANET's factor, started from
// its answer. Where that answer passes the backward-error test the rows are the direct study's
// bit for bit (and the host CG study's, whose solver is the same rule); a system that needs
// corrections gets them from CG, and one CG cannot bring to the test goes to the host. The plan
// chooses this engine for --solver cg with --precond auto and for --batch-engine cg, and says why.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "formats/csr.hpp"
#include "network/hydraulics.hpp"
#include "network/inp_reader.hpp"
#include "network/linear_solver.hpp"
#include "network/study.hpp"
#include "network/trial_batch.hpp"
#include "network_test_data.hpp"
#include "solver/precond/sparse_cholesky.hpp"
#include "study_test_util.hpp"

using namespace cgs;
using namespace cgs::net;

namespace {

const std::string kNetworks = test::repo_networks();
const std::string kRegressions = kNetworks + "/regressions";

// netsolve --solver cg's solver: the network rule (app/netsolve.cpp's with_network_rule).
std::unique_ptr<LinearSolver> network_rule() {
  SolveRequest r = test::network_cg();
  r.precond = parse_precond("chol:order=given,pivot=fail");
  return make_cg_solver(r);
}
std::unique_ptr<LinearSolver> direct() { return make_direct_solver(); }

StudyOptions with_cg(StudyOptions o, BatchEngineChoice engine, int chunk = 0) {
  o.run.solver = StudySolver::cg;
  o.run.cg = test::network_cg();
  o.run.cg.precond = PrecondSpec{"auto", "", {}};
  o.run.batch_engine = engine;
  o.run.batch = chunk;
  return o;
}

}  // namespace

TEST_CASE("trials engine with CG: the direct study's rows where EPANET's factor is accepted") {
  const test::StudyCase cases[] = {
      {kNetworks + "/Net3.inp", test::study_options(StudyKind::fireflow), "Net3 fire flow", false},
      {kNetworks + "/Net3.inp", test::study_options(StudyKind::closure), "Net3 closure, PDA", true},
      {kNetworks + "/Net1.inp", test::study_options(StudyKind::closure), "Net1 closure", false},
      {kRegressions + "/richmond_pump_curve.inp", test::study_options(StudyKind::closure),
       "pumps, closure", false},
      {kRegressions + "/Net1_unbalanced.inp", test::study_options(StudyKind::closure), "unbalanced",
       false},
  };
  for (const auto& c : cases) {
    CAPTURE(c.what);
    const Network net = test::case_network(c);
    const StudyResults reference = run_study(net, direct, c.options);
    const std::string want = test::study_csv_text(net, reference, c.options);
    // The host engine with the network rule's CG solver: the same rows.
    const StudyOptions host = with_cg(c.options, BatchEngineChoice::automatic);
    const StudyResults on_host = run_study(net, network_rule, host);
    CHECK(on_host.plan.engine == StudyEngine::host);
    CHECK(test::study_csv_text(net, on_host, host) == want);
    for (const int chunk : {0, 5}) {
      CAPTURE(chunk);
      const StudyOptions o = with_cg(c.options, BatchEngineChoice::trials, chunk);
      const StudyResults r = run_study(net, network_rule, o);
      REQUIRE(r.plan.engine == StudyEngine::trials);
      CHECK(r.plan.trials_cg);
      CHECK(r.trial_calls >= 1);
      CHECK(test::study_csv_text(net, r, o) == want);
      // EPANET's factor solves these systems to the backward-error test by itself.
      CHECK(r.trial_corrections == 0);
      CHECK(r.trial_cg_iterations == 0);
      if (c.what == "unbalanced") CHECK(r.host_scenarios > 0);
    }
  }
}

TEST_CASE("trials engine's CG: the corrections reach the backward-error test from a poor start") {
  // A system of Net3 (its first trial's), its factor, and a start that is the factor's answer
  // perturbed by 1e-6 relative: refine must bring it back to the test with a few CG iterations.
  const Network net = read_inp(kNetworks + "/Net3.inp");
  GradientAlgorithm state(net);
  state.initialise();
  state.start_period(0);
  const JunctionSystem& system = state.assemble();
  const CsrMatrix<double>& A = system.A;
  precond::SparseCholesky analysis;
  analysis.analyse(A, system.elimination_order);
  const CholeskySchedule schedule = compile_schedule(analysis, A.nnz());
  const CholeskyScheduleView view = schedule.view();
  const int n = A.rows;
  std::vector<double> values = A.values, b = system.b, factor(schedule.factor_slots());
  std::vector<double> scratch(n), x(n), work(6 * std::size_t(n));
  chol::gather(view, {values.data(), 1}, {factor.data(), 1});
  REQUIRE(chol::factorize(view, {factor.data(), 1}) < 0);
  const auto column = [&](double* p) { return gga::Column{p, 1}; };
  const trials::Factor m{&view, column(factor.data()), column(scratch.data())};
  trials::apply_factor(m, column(b.data()), column(x.data()));
  std::mt19937 random(7);
  std::uniform_real_distribution<double> noise(-1e-6, 1e-6);
  for (double& xi : x) xi *= 1 + noise(random);
  trials::PcgVectors v;
  double* w = work.data();
  v.r = column(w), v.dy = column(w + n), v.z = column(w + 2 * n), v.p = column(w + 3 * n);
  v.q = column(w + 4 * n), v.candidate = column(w + 5 * n);
  const trials::JunctionMatrix matrix{n, A.row_ptr.data(), A.col_idx.data(),
                                      column(values.data())};
  trials::PcgOptions options;
  options.max_steps = 20;
  const double before = trials::residual(matrix, column(b.data()), column(x.data()), v.r);
  REQUIRE(before > 1e-9);
  int iterations = 0, corrected = 0;
  CHECK(trials::refine(matrix, m, options, v, column(b.data()), column(x.data()), iterations,
                       corrected));
  CHECK(corrected == 1);
  CHECK(iterations >= 1);
  CHECK(iterations <= 10);
  const double after = trials::residual(matrix, column(b.data()), column(x.data()), v.r);
  CHECK(after <= 1e-12);
  // Against an independent residual: row_residual on the CSR matrix.
  double omega = 0;
  for (index_t i = 0; i < n; ++i) {
    const RowResidual rr = row_residual(A, b, x, i);
    if (rr.magnitude > 0) omega = std::max(omega, std::abs(rr.r) / rr.magnitude);
  }
  CHECK(omega == doctest::Approx(after).epsilon(1e-9));
}

TEST_CASE("study plan: CG on the trials engine where asked and where the study fits it") {
  const Network net = read_inp(kNetworks + "/Net3.inp");
  const StudyScope steady{10, 0, false}, day{10, 86400, false};
  StudyRunRequest r;
  r.gpu = true;
  r.solver = StudySolver::cg;
  r.cg.precond = PrecondSpec{"auto", "", {}};
  StudyPlan plan = make_study_plan(r, net, steady);
  CHECK(plan.engine == StudyEngine::trials);
  CHECK(plan.trials_cg);
  CHECK(plan.reason("engine").find("CG preconditioned by EPANET's factor") != std::string::npos);
  // An extended period does not fit the trials engine: the batched CG, with the reason.
  plan = make_study_plan(r, net, day);
  CHECK(plan.engine == StudyEngine::batched_cg);
  CHECK(plan.reason("engine").find("declined") != std::string::npos);
  // --batch-engine cg beside the direct solver: CG on the trials engine too, also on the host.
  r.solver = StudySolver::native_direct;
  r.gpu = false;
  r.batch_engine = BatchEngineChoice::cg;
  plan = make_study_plan(r, net, steady);
  CHECK(plan.engine == StudyEngine::trials);
  CHECK(plan.trials_cg);
  // The direct solver on the trials engine stays the factor's answer.
  r.batch_engine = BatchEngineChoice::trials;
  plan = make_study_plan(r, net, steady);
  CHECK(plan.engine == StudyEngine::trials);
  CHECK_FALSE(plan.trials_cg);
  // Another preconditioner is not EPANET's factor: the trials engine refuses it.
  r.solver = StudySolver::cg;
  r.cg.precond = PrecondSpec{"jacobi", "", {}};
  CHECK_THROWS_WITH_AS(make_study_plan(r, net, steady),
                       doctest::Contains("--batch-engine trials runs EPANET's factor"),
                       cgs::InputError);
  r.batch_engine = BatchEngineChoice::cg;
  plan = make_study_plan(r, net, steady);
  CHECK(plan.engine == StudyEngine::batched_cg);
}
