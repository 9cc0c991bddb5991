// The batched study engine on the GPU (netsolve --study ... --device gpu): the GPU batch CG
// (network/gpu_batch_cg.cpp, the cluster CG's solve_batch) against the CPU batch CG on the same
// systems, and whole studies against the CPU study (the direct solver's, which test_study.cpp
// checks against EPANET's epanet-scenarios): Net3 fire flow and closure, steady state and 24 h.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "gpu_test_util.hpp"
#include "network/batch_cg.hpp"
#include "network/inp_reader.hpp"
#include "network/network_test_data.hpp"
#include "network/study.hpp"
#include "network/study_test_util.hpp"

using namespace cgs;
using namespace cgs::net;

namespace {

const std::string kNet3 = std::string(CGSOLVE_SOURCE_DIR) + "/data/networks/Net3.inp";

std::unique_ptr<LinearSolver> direct() { return make_direct_solver(); }

StudyOptions on_gpu(StudyOptions o, int batch_size = 0) {
  o.run.batch = batch_size;
  o.run.gpu = true;
  o.run.batch_engine = BatchEngineChoice::cg;
  o.run.cg = test::network_cg();
  return o;
}

// System s: (1 + s/7) times a Poisson matrix with its diagonal raised by s, symmetrically
// scaled to a unit diagonal as the study's members hand them in; right-hand sides from seeds.
struct Systems {
  std::vector<CsrMatrix<double>> A;
  std::vector<std::vector<double>> b, x;
};

Systems scaled_poisson_systems(int count, index_t m) {
  Systems out;
  for (int s = 0; s < count; ++s) {
    CsrMatrix<double> A = testing::poisson2d(m);
    std::vector<double> d(A.rows);
    for (index_t i = 0; i < A.rows; ++i)
      for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
        A.values[k] *= 1.0 + s / 7.0;
        if (A.col_idx[k] == i) A.values[k] += s, d[i] = 1.0 / std::sqrt(A.values[k]);
      }
    for (index_t i = 0; i < A.rows; ++i)
      for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
        A.values[k] *= d[i] * d[A.col_idx[k]];
    out.A.push_back(std::move(A));
    out.b.push_back(gputest::random_vector<double>(std::size_t(m) * m, 500 + s));
    out.x.emplace_back(std::size_t(m) * m, 0.0);
  }
  return out;
}

std::vector<BatchCgSystem> batch_of(Systems& s) {
  std::vector<BatchCgSystem> out;
  for (std::size_t i = 0; i < s.A.size(); ++i) out.push_back({&s.A[i], &s.b[i], &s.x[i], {}});
  return out;
}

std::vector<BatchCgSystem*> pointers(std::vector<BatchCgSystem>& v) {
  std::vector<BatchCgSystem*> out;
  for (BatchCgSystem& s : v) out.push_back(&s);
  return out;
}

}  // namespace

TEST_CASE(
    "GPU batch CG: the CPU batch CG's answers, per-system values, more systems than clusters") {
  CGS_REQUIRE_GPU_OR_SKIP();
  constexpr int kCount = 300;  // more than the clusters resident at once: several waves
  Systems gpu = scaled_poisson_systems(kCount, 23), cpu = gpu;
  std::vector<BatchCgSystem> on_gpu = batch_of(gpu), on_cpu = batch_of(cpu);
  make_gpu_batch_cg(test::network_cg().cg)->solve(pointers(on_gpu));
  make_cpu_batch_cg(test::network_cg())->solve(pointers(on_cpu));
  for (int s = 0; s < kCount; ++s) {
    CAPTURE(s);
    CHECK(on_gpu[s].result.status == CgStatus::converged);
    CHECK(on_gpu[s].result.relative_residual() <= 1e-12);
    // The same CG (cg_step.hpp) in another order of additions: iterations within 5%.
    CHECK(std::abs(on_gpu[s].result.iterations - on_cpu[s].result.iterations) <=
          std::max<long>(5, on_cpu[s].result.iterations / 20));
    CHECK(gputest::relative_difference(gpu.x[s], cpu.x[s]) <= 1e-9);
  }
  // The initial guess is taken: starting from the answer, nothing (or next to nothing) to do.
  Systems again = gpu;
  std::vector<BatchCgSystem> warm = batch_of(again);
  make_gpu_batch_cg(test::network_cg().cg)->solve(pointers(warm));
  for (int s = 0; s < kCount; ++s)
    CHECK(warm[s].result.iterations <= on_gpu[s].result.iterations / 4);
}

TEST_CASE("GPU batched study equals the CPU study: Net3 fire flow and closure, steady and 24 h") {
  CGS_REQUIRE_GPU_OR_SKIP();
  const Network net = read_inp(kNet3);
  struct Case {
    StudyKind kind;
    long duration;
    int batch_size;
  };
  for (const Case c : {Case{StudyKind::fireflow, 0, 0}, Case{StudyKind::closure, 0, 0},
                       Case{StudyKind::fireflow, 86400, 16}, Case{StudyKind::closure, 0, 5}}) {
    CAPTURE(to_string(c.kind));
    CAPTURE(c.duration);
    CAPTURE(c.batch_size);
    const StudyOptions o = test::study_options(c.kind, c.duration);
    const StudyResults cpu = run_study(net, direct, o);
    const StudyResults gpu = run_study(net, direct, on_gpu(o, c.batch_size));
    CHECK(gpu.solver_name.find("batched: gpu batch cg") == 0);
    CHECK(gpu.batch.launches > 0);
    CHECK(gpu.baseline.min_pressure == cpu.baseline.min_pressure);  // the same baseline run
    const int compared = test::check_same_rows(net, c.kind, gpu, cpu);
    CHECK(compared >= static_cast<int>(gpu.scenarios.size()) * 3 / 4);
  }
}
