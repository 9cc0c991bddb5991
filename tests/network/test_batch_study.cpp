// The batched study engine (network/batch_cg.hpp, netsolve --study-batch / --device gpu) on the CPU
// batch CG: its rows against the per-scenario study's (the same CG solver per thread: the same
// bits; the direct solver, itself checked against EPANET in test_study.cpp: to 1e-3), the
// rendezvous's batches, a failing engine, and the GPU engine's refusal where there is no GPU.
#include <doctest/doctest.h>

#include <atomic>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "network/inp_reader.hpp"
#include "network/study.hpp"
#include "network_test_data.hpp"
#include "run_command.hpp"
#include "spmv/cuda/cuda_backends.hpp"
#include "study_test_util.hpp"
#include "test_matrices.hpp"

using namespace cgs::net;
using cgs::CgResult;
using cgs::CgStatus;
using cgs::CsrMatrix;

namespace {

const std::string kNet1 = test::repo_networks() + "/Net1.inp";
const std::string kNet3 = test::repo_networks() + "/Net3.inp";

std::unique_ptr<LinearSolver> cg() { return make_cg_solver(test::network_cg()); }
std::unique_ptr<LinearSolver> direct() { return make_direct_solver(); }

StudyOptions batched(StudyOptions o, int batch_size) {
  o.run.batch = batch_size;
  o.run.batch_engine = BatchEngineChoice::cg;
  o.run.cg = test::network_cg();
  return o;
}

}  // namespace

TEST_CASE("batched study on the CPU batch CG: the per-scenario CG study's rows, bit for bit") {
  struct Case {
    std::string network;
    StudyOptions options;
    const char* what;
  };
  StudyOptions demand = test::study_options(StudyKind::demand, 6 * 3600);
  demand.spec.draws = 9;
  demand.spec.cv = 0.3;
  demand.spec.seed = 5;
  StudyOptions pda_fire = test::study_options(StudyKind::fireflow);
  StudyOptions cold_fire = test::study_options(StudyKind::fireflow);
  cold_fire.run.start = StudyStart::cold;
  StudyOptions hydrants = test::study_options(StudyKind::fireflow);
  hydrants.residual_pressure = 20;
  const Case cases[] = {
      {kNet3, test::study_options(StudyKind::fireflow), "Net3 fire flow, steady"},
      {kNet3, test::study_options(StudyKind::closure), "Net3 closure, steady"},
      {kNet1, test::study_options(StudyKind::closure, 86400), "Net1 closure, 24 h"},
      {kNet3, demand, "Net3 demand draws, 6 h"},
      {kNet3, pda_fire, "Net3 fire flow, PDA"},
      {kNet3, cold_fire, "Net3 fire flow, cold start"},
      {kNet1, hydrants, "Net1 available flow at 20 psi"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    Network net = read_inp(c.network);
    if (std::string(c.what).find("PDA") != std::string::npos) {
      net.options.demand.model = DemandModel::pda;
      net.options.demand.required_pressure = 20;
    }
    const StudyResults threaded = run_study(net, cg, c.options);
    for (int batch_size : {1, 8, 1000}) {  // 1000: more than the scenarios, capped to them
      CAPTURE(batch_size);
      const StudyOptions o = batched(c.options, batch_size);
      const StudyResults r = run_study(net, cg, o);
      CHECK(test::study_csv_text(net, r, o) == test::study_csv_text(net, threaded, c.options));
      CHECK(r.plan.threads == std::min<int>(batch_size, static_cast<int>(r.scenarios.size())));
      CHECK(r.solver_name.find("batched: cpu batch cg") == 0);
      REQUIRE(r.batch.launches > 0);
      // Each trial solves at least one correction system; with several scenarios in flight the
      // launches hold several systems each.
      long trials = 0;
      for (const ScenarioResult& s : r.scenarios) trials += s.trials;
      CHECK(r.batch.systems >= trials);
      if (batch_size > 1) CHECK(r.batch.systems >= 2 * r.batch.launches);
      if (batch_size == 1) CHECK(r.batch.systems == r.batch.launches);
    }
  }
}

TEST_CASE("batched study on the CPU batch CG equals the direct-solver study to 1e-3 (Net3)") {
  const Network net = read_inp(kNet3);
  for (StudyKind kind : {StudyKind::fireflow, StudyKind::closure}) {
    CAPTURE(to_string(kind));
    const StudyOptions o = test::study_options(kind);
    const StudyResults reference = run_study(net, direct, o);
    const StudyResults r = run_study(net, direct, batched(o, 16));
    const int compared = test::check_same_rows(net, kind, r, reference);
    CHECK(compared >= static_cast<int>(r.scenarios.size()) * 3 / 4);
  }
}

namespace {

// Solves diagonal systems (x = b / diag) and records each batch's size: the rendezvous's
// batching seen from the engine.
class RecordingBatchCg final : public BatchCg {
 public:
  void solve(const std::vector<BatchCgSystem*>& systems) override {
    sizes.push_back(static_cast<int>(systems.size()));
    for (BatchCgSystem* s : systems) {
      for (cgs::index_t i = 0; i < s->A->rows; ++i)
        (*s->x)[i] = (*s->b)[i] / s->A->values[s->A->row_ptr[i]];
      s->result.status = CgStatus::converged;
      s->result.iterations = static_cast<long>(s->b->front());  // a member's k-th solve: k
    }
  }
  std::string name() const override { return "recording"; }
  std::vector<int> sizes;  // only the member that completes a batch writes, one at a time
};

CsrMatrix<double> diagonal(double value, int n) {
  CsrMatrix<double> A;
  A.rows = A.cols = n;
  for (int i = 0; i <= n; ++i) A.row_ptr.push_back(i);
  for (int i = 0; i < n; ++i) A.col_idx.push_back(i), A.values.push_back(value);
  return A;
}

}  // namespace

TEST_CASE("rendezvous: every member still running is in each batch; leaving members shrink it") {
  auto engine = std::make_unique<RecordingBatchCg>();
  RecordingBatchCg& recorder = *engine;
  constexpr int kMembers = 4;
  BatchRendezvous rendezvous(std::move(engine), kMembers);
  std::atomic<int> wrong{0};
  auto member = [&](int m) {
    const BatchMembership membership(&rendezvous);
    const CsrMatrix<double> A = diagonal(2.0 + m, 3);
    for (int solve = 0; solve <= m; ++solve) {  // member m solves m + 1 systems
      const std::vector<double> b(3, 1.0 + solve);
      std::vector<double> x(3, 0.0);
      const CgResult r = rendezvous.solve(A, b, x);
      if (!r.ok() || x[1] != (1.0 + solve) / (2.0 + m)) ++wrong;
    }
  };
  std::vector<std::thread> threads;
  for (int m = 1; m < kMembers; ++m) threads.emplace_back(member, m);
  member(0);
  for (std::thread& t : threads) t.join();
  CHECK(wrong == 0);
  CHECK(recorder.sizes == std::vector<int>{4, 3, 2, 1});
  CHECK(rendezvous.counts().launches == 4);
  CHECK(rendezvous.counts().systems == 10);
  // Batch k holds the k-th solves (k iterations each) of the 5 - k members left.
  CHECK(rendezvous.counts().iterations == 1 * 4 + 2 * 3 + 3 * 2 + 4 * 1);
  CHECK(rendezvous.counts().critical_iterations == 1 + 2 + 3 + 4);
}

TEST_CASE("batched study: an engine that fails stops the study with its error, no member hangs") {
  const Network net = read_inp(kNet3);
  StudyOptions o = test::study_options(StudyKind::closure);
  o.run.batch = 8;
  o.run.batch_engine = BatchEngineChoice::cg;
  o.run.cg = test::network_cg();
  o.run.cg.precond.name = "no-such-preconditioner";  // the engine fails on its first batch
  CHECK_THROWS_WITH_AS(run_study(net, direct, o), doctest::Contains("no-such-preconditioner"),
                       cgs::InputError);
}

TEST_CASE("batch CG: a system of another pattern is refused, naming the problem") {
  auto engine = make_cpu_batch_cg(test::network_cg());
  const CsrMatrix<double> A = cgs::testing::poisson2d(4), B = diagonal(4.0, 16);
  const std::vector<double> b(16, 1.0);
  std::vector<double> x(16, 0.0), y(16, 0.0);
  BatchCgSystem first{&A, &b, &x, {}}, other{&B, &b, &y, {}};
  CHECK_THROWS_WITH_AS(engine->solve({&first, &other}), doctest::Contains("sparsity pattern"),
                       std::invalid_argument);
  // The first alone is solved: A x = b to the request's tolerance.
  engine->solve({&first});
  CHECK(first.result.status == CgStatus::converged);
  const std::vector<double> Ax = cgs::multiply(A, x);
  for (std::size_t i = 0; i < b.size(); ++i) CHECK(Ax[i] == doctest::Approx(b[i]).epsilon(1e-9));
}

TEST_CASE("--device gpu without a GPU: a clear error, exit 4") {
  std::string why;
  if (cgs::cuda_device_available(&why)) {
    MESSAGE("skipped: a GPU is present (tests/gpu/test_gpu_study.cpp runs the engine)");
    return;
  }
  CHECK_THROWS_WITH_AS(make_gpu_batch_cg({}), doctest::Contains("--device gpu"), cgs::DeviceError);
  const cgs::testing::Run run = cgs::testing::run_command(
      CGSOLVE_BINARY_DIR "/app/netsolve --network " + kNet3 + " --study fireflow --device gpu");
  CHECK(run.exit_code == 4);
  CHECK(run.output.find("needs a GPU") != std::string::npos);
}

TEST_CASE("netsolve --study-batch: the threaded CG study's CSV, and the batches in the summary") {
  const std::string dir =
      std::filesystem::temp_directory_path().string() + "/batch-cli-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string netsolve = CGSOLVE_BINARY_DIR "/app/netsolve --network " + kNet3 +
                               " --study closure --solver cg --precond jacobi --study-csv ";
  const cgs::testing::Run threaded =
      cgs::testing::run_command(netsolve + dir + "/threaded.csv --threads 2 --quiet");
  const cgs::testing::Run batched_run =
      cgs::testing::run_command(netsolve + dir + "/batched.csv --study-batch 12");
  CHECK(threaded.exit_code == 0);
  CHECK(batched_run.exit_code == 0);
  CHECK(batched_run.output.find("batches: ") != std::string::npos);
  CHECK(batched_run.output.find("cpu batch cg") != std::string::npos);
  CHECK(batched_run.output.find("(12 scenarios in flight)") != std::string::npos);
  auto text = [](const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  };
  CHECK(!text(dir + "/threaded.csv").empty());
  CHECK(text(dir + "/threaded.csv") == text(dir + "/batched.csv"));
  const cgs::testing::Run bad =
      cgs::testing::run_command(netsolve + dir + "/x.csv --study-batch 0");
  CHECK(bad.exit_code == 2);
  CHECK(bad.output.find("--study-batch") != std::string::npos);
  std::filesystem::remove_all(dir);
}
