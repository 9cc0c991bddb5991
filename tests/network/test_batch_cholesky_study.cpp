// The batched study engine on the batched sparse Cholesky (network/batch_cholesky.cpp,
// netsolve --study-batch / --device gpu with --batch-engine cholesky) on the host executor: its
// rows against the per-scenario direct study's -- the same factorisation in the same order of
// operations, so the same CSV bit for bit -- on steady fire flow, closure, PDA, a 24 h closure
// and demand draws; a system of another pattern refused; the CLI's choice of engine.
#include <doctest/doctest.h>

#include "network/batch_cg.hpp"
#include "network/inp_reader.hpp"
#include "network/study.hpp"
#include "network_test_data.hpp"
#include "run_command.hpp"
#include "spmv/cuda/cuda_backends.hpp"
#include "study_test_util.hpp"

using namespace cgs::net;

namespace {

const std::string kNet1 = test::repo_networks() + "/Net1.inp";
const std::string kNet3 = test::repo_networks() + "/Net3.inp";

std::unique_ptr<LinearSolver> direct() { return make_direct_solver(); }

StudyOptions batched_cholesky(StudyOptions o, int batch_size) {
  o.run.batch = batch_size;
  o.run.batch_engine = BatchEngineChoice::cholesky;
  return o;
}

TEST_CASE("batched Cholesky study on the host: the direct study's rows, bit for bit") {
  StudyOptions demand = test::study_options(StudyKind::demand, 6 * 3600);
  demand.spec.draws = 9;
  demand.spec.cv = 0.3;
  demand.spec.seed = 5;
  const test::StudyCase cases[] = {
      {kNet3, test::study_options(StudyKind::fireflow), "Net3 fire flow, steady", false},
      {kNet3, test::study_options(StudyKind::closure), "Net3 closure, steady", false},
      {kNet3, test::study_options(StudyKind::fireflow), "Net3 fire flow, PDA", true},
      {kNet1, test::study_options(StudyKind::closure, 86400), "Net1 closure, 24 h", false},
      {kNet3, demand, "Net3 demand draws, 6 h", false},
  };
  for (const auto& c : cases) {
    CAPTURE(c.what);
    const Network net = test::case_network(c);
    const StudyResults reference = run_study(net, direct, c.options);
    for (int batch_size : {1, 7, 1000}) {  // 1000: more than the scenarios, capped to them
      CAPTURE(batch_size);
      const StudyOptions o = batched_cholesky(c.options, batch_size);
      const StudyResults r = run_study(net, direct, o);
      CHECK(test::study_csv_text(net, r, o) == test::study_csv_text(net, reference, c.options));
      CHECK(r.plan.threads == std::min<int>(batch_size, static_cast<int>(r.scenarios.size())));
      CHECK(r.solver_name.find("batched sparse Cholesky") != std::string::npos);
      REQUIRE(r.batch.launches > 0);
      long trials = 0;
      for (const ScenarioResult& s : r.scenarios) trials += s.trials;
      CHECK(r.batch.systems >= trials);  // a system a trial, none lost
      if (batch_size == 1) CHECK(r.batch.systems == r.batch.launches);
      if (batch_size > 1) CHECK(r.batch.systems >= 2 * r.batch.launches);
    }
  }
}

TEST_CASE("batched Cholesky: a failing pivot is that system's, the others are solved") {
  // Three diagonal-dominant tridiagonal systems of one pattern; the middle one has a negative
  // diagonal entry at row 2.
  auto tridiagonal = [](double row2) {
    cgs::CsrMatrix<double> A;
    A.rows = A.cols = 4;
    A.row_ptr = {0, 2, 5, 8, 10};
    A.col_idx = {0, 1, 0, 1, 2, 1, 2, 3, 2, 3};
    A.values = {4, -1, -1, 4, -1, -1, row2, -1, -1, 4};
    return A;
  };
  const cgs::CsrMatrix<double> good = tridiagonal(4.0), bad = tridiagonal(-4.0);
  const std::vector<double> b{3, 2, 2, 3};  // A x = b for x = 1 with the good matrix
  std::vector<double> x0(4, 0.0), x1(4, 7.0), x2(4, 0.0);
  const std::vector<int> order{3, 2, 1, 0};
  BatchCgSystem s0{&good, &b, &x0, {}}, s1{&bad, &b, &x1, {}}, s2{&good, &b, &x2, {}};
  for (BatchCgSystem* s : {&s0, &s1, &s2}) s->elimination_order = &order;
  // As the rendezvous drives it: each member stages its system, one call solves, each collects.
  auto engine = make_cpu_batch_cholesky();
  engine->expect(3);
  int slot = 0;
  for (BatchCgSystem* s : {&s0, &s1, &s2}) engine->stage(slot++, *s);
  engine->solve({&s0, &s1, &s2});
  slot = 0;
  for (BatchCgSystem* s : {&s0, &s1, &s2}) engine->collect(slot++, *s);
  CHECK(s0.failed_row == -1);
  CHECK(s2.failed_row == -1);
  CHECK(s1.failed_row >= 0);  // in order 3, 2, ...: row 2's pivot is the first <= 0
  CHECK(s1.failed_row == 2);
  CHECK(x1 == std::vector<double>(4, 7.0));  // untouched
  for (double v : x0) CHECK(v == doctest::Approx(1.0).epsilon(1e-14));
  CHECK(x2 == x0);
  CHECK(s0.result.ok());
  CHECK_FALSE(s1.result.ok());
  // Another pattern is refused, naming the problem.
  cgs::CsrMatrix<double> other = good;
  other.col_idx[1] = 0;
  BatchCgSystem s3{&other, &b, &x0, {}};
  engine->stage(0, s3);
  CHECK_THROWS_WITH_AS(engine->solve({&s3}), doctest::Contains("another sparsity pattern"),
                       std::invalid_argument);
  const std::vector<double> short_b{1, 2};
  BatchCgSystem s4{&good, &short_b, &x0, {}};
  CHECK_THROWS_WITH_AS(engine->stage(1, s4), doctest::Contains("another sparsity pattern"),
                       std::invalid_argument);
  CHECK_THROWS_AS(engine->stage(3, s0), std::invalid_argument);  // past the members
}

TEST_CASE("netsolve --study-batch: the batched Cholesky by default gives the direct study's CSV") {
  const std::string dir = std::filesystem::temp_directory_path().string() + "/batch-chol-cli-" +
                          std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string netsolve =
      CGSOLVE_BINARY_DIR "/app/netsolve --network " + kNet3 + " --study fireflow --study-csv ";
  const auto threaded =
      cgs::testing::run_command(netsolve + dir + "/threaded.csv --threads 2 --quiet");
  const auto batched = cgs::testing::run_command(netsolve + dir + "/batched.csv --study-batch 9");
  const auto cg = cgs::testing::run_command(netsolve + dir +
                                            "/cg.csv --study-batch 9 "
                                            "--batch-engine cg");
  CHECK(threaded.exit_code == 0);
  CHECK(batched.exit_code == 0);
  CHECK(cg.exit_code == 0);
  CHECK(batched.output.find("batched sparse Cholesky") != std::string::npos);
  CHECK(batched.output.find("(9 scenarios in flight), each system factorised") !=
        std::string::npos);
  // --batch-engine cg: CG preconditioned by EPANET's factor on the trials engine (its host
  // executor here), whose answers are the factor's: the same CSV.
  CHECK(cg.output.find("engine: trials on the host, each trial's system by CG preconditioned by "
                       "EPANET's factor") != std::string::npos);
  auto text = [](const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  };
  CHECK(!text(dir + "/threaded.csv").empty());
  CHECK(text(dir + "/threaded.csv") == text(dir + "/batched.csv"));
  CHECK(text(dir + "/threaded.csv") == text(dir + "/cg.csv"));
  const auto bad = cgs::testing::run_command(netsolve + dir + "/x.csv --batch-engine lu");
  CHECK(bad.exit_code == 2);
  CHECK(bad.output.find("--batch-engine") != std::string::npos);
  std::string why;
  if (!cgs::cuda_device_available(&why)) {  // the GPU engine's refusal, naming it
    CHECK_THROWS_WITH_AS(make_gpu_batch_cholesky(), doctest::Contains("needs a GPU"),
                         cgs::DeviceError);
    const auto gpu = cgs::testing::run_command(netsolve + dir + "/g.csv --device gpu");
    CHECK(gpu.exit_code == 4);
    CHECK(gpu.output.find("needs a GPU") != std::string::npos);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
