// The cluster-resident CG loop (solver/cuda/cluster_cg.hpp) against the persistent
// loop, its reference on the same device: the same iteration counts (within 2%) and answers,
// with and without Jacobi, in double and float, on the systems of data/, a Poisson grid that
// needs a cluster of several blocks, an irregular random SPD matrix, n = 1 and n = 33 (not a
// multiple of 32). A system too big for a cluster (or with one long row, which pads its warp's
// slice) falls back, and the plan says why. The batch
// (one system per cluster) equals the single solves bit for bit, per-system values included.
#include <cmath>
#include <cstdlib>
#include <string>

#include "base/tuning.hpp"
#include "formats/matrix_market.hpp"
#include "gpu_cg_util.hpp"
#include "solver/cuda/cluster_cg.hpp"
#include "spmv/device_buffer.hpp"

namespace cgs {
namespace {

using namespace gputest;

struct System {
  std::string name;
  CsrMatrix<double> A;
  bool network = false;  // an EPANET system: coefficients over 10^6 and more
};

CsrMatrix<double> one_by_one() { return csr_from_triplets<double>(1, 1, {0}, {0}, {4.0}); }

std::vector<System> systems() {
  const std::string data = std::string(CGSOLVE_SOURCE_DIR) + "/data/systems/";
  return {{"poisson 31x31", testing::poisson2d(31)},
          {"poisson 122x122 (several blocks)", testing::poisson2d(122)},
          {"Exnet step 3", read_matrix_market(data + "Exnet_EXN_step3.mtx.gz"), true},
          {"Net3 step 1", read_matrix_market(data + "Net3_step1.mtx.gz"), true},
          {"random SPD 1013", testing::random_spd(1013, 4, 41)},
          {"n = 33", testing::random_spd(33, 3, 5)},
          {"n = 1", one_by_one()}};
}

BackendOptions gpu_csr() {
  BackendOptions o;
  o.device = Device::gpu;
  o.format = Format::csr;
  return o;
}

// The cluster loop's two iterations for one system, for a scope: "1" the one-reduction pass where
// asked for (Tuning::cluster_reductions = 1; double only), "2" the two passes (the default).
struct Reductions : ScopedTuning {
  explicit Reductions(const char* count)
      : ScopedTuning(tuning_with([&](Tuning& t) { t.cluster_reductions = std::atoi(count); })) {}
};

const char* const kVariantReason[] = {"", "one reduction and one cluster barrier an iteration",
                                      "two passes an iteration"};

template <typename T>
void same_as_persistent(double tol, double x_tol) {
  CgOptions cg;
  cg.tol = tol;
  cg.max_iters = 200000;
  for (const System& s : systems()) {
    const std::vector<double> b = random_vector<double>(std::size_t(s.A.rows), 11);
    for (const char* precond : {"none", "jacobi"}) {
      CAPTURE(s.name);
      CAPTURE(std::string(precond));
      const Run persistent =
          run_loop_with<T>(s.A, b, precond, gpu_csr(), GpuLoopAsk::persistent, cg);
      REQUIRE(persistent.result.status == CgStatus::converged);
      const double persistent_residual = true_relative_residual(s.A, b, persistent.x);
      for (const int variant : {1, 2}) {
        CAPTURE(variant);
        const Reductions reductions(variant == 1 ? "1" : "2");
        const Run cluster = run_loop_with<T>(s.A, b, precond, gpu_csr(), GpuLoopAsk::cluster, cg);
        REQUIRE(cluster.loop == Loop::cluster);
        // In float the one-reduction recurrences diverge: the two passes run instead.
        const bool one = variant == 1 && sizeof(T) == 8;
        CHECK(cluster.reasons.find(kVariantReason[one ? 1 : 2]) != std::string::npos);
        CHECK(cluster.result.status == CgStatus::converged);
        const double its = double(persistent.result.iterations);
        // Its recurrences cost iterations on the water networks (Exnet without a
        // preconditioner: 1.27x on an H100, BENCHMARKS 13e), not elsewhere.
        const double spread = one && s.network ? 0.35 : 0.02;
        CHECK(std::abs(double(cluster.result.iterations) - its) <= std::max(1.0, spread * its));
        CHECK(relative_difference(cluster.x, persistent.x) <= x_tol);
        // As accurate as the persistent loop's answer (the one-reduction recurrences drift
        // otherwise; its stop is checked against b - A x).
        CHECK(true_relative_residual(s.A, b, cluster.x) <=
              std::max(10 * tol, 2 * persistent_residual));
        CHECK(!cluster.result.spmv.samples.empty());  // every loop times its SpMV
        for (double t : cluster.result.spmv.samples) CHECK(t > 0);
      }
    }
  }
}

TEST_CASE("Cluster CG: the persistent loop's iterations and answers, double") {
  CGS_REQUIRE_GPU_OR_SKIP();
  same_as_persistent<double>(1e-10, 1e-8);
}

TEST_CASE("Cluster CG: the persistent loop's iterations and answers, float") {
  CGS_REQUIRE_GPU_OR_SKIP();
  same_as_persistent<float>(1e-5, 1e-3);
}

// The one-reduction pass's residual replacement: with the slack 0 every stop on the recursive
// residual restarts from b - A x (at most three times), which the default slack leaves to
// drifted recurrences. The restarted solve still converges to the persistent loop's answer, and
// each restart costs iterations (p starts again from u).
TEST_CASE("Cluster CG: the one-reduction pass restarts from b - A x and still converges") {
  CGS_REQUIRE_GPU_OR_SKIP();
  const std::string data = std::string(CGSOLVE_SOURCE_DIR) + "/data/systems/";
  CgOptions cg;
  cg.tol = 1e-10;
  cg.max_iters = 200000;
  for (const System& s :
       {System{"poisson 122x122", testing::poisson2d(122)},
        System{"Exnet step 3", read_matrix_market(data + "Exnet_EXN_step3.mtx.gz")}}) {
    CAPTURE(s.name);
    const std::vector<double> b = random_vector<double>(std::size_t(s.A.rows), 23);
    const Run persistent =
        run_loop_with<double>(s.A, b, "jacobi", gpu_csr(), GpuLoopAsk::persistent, cg);
    const Reductions one("1");
    const Run plain = run_loop_with<double>(s.A, b, "jacobi", gpu_csr(), GpuLoopAsk::cluster, cg);
    Run restarted;
    {
      const ScopedTuning no_slack(tuning_with([](Tuning& t) { t.cluster_replacement_slack = 0; }));
      restarted = run_loop_with<double>(s.A, b, "jacobi", gpu_csr(), GpuLoopAsk::cluster, cg);
    }
    REQUIRE(restarted.loop == Loop::cluster);
    CHECK(restarted.result.status == CgStatus::converged);
    CHECK(restarted.result.iterations > plain.result.iterations);  // the restarts ran
    CHECK(true_relative_residual(s.A, b, restarted.x) <= 1e-9);
    CHECK(relative_difference(restarted.x, persistent.x) <= 1e-8);
  }
}

TEST_CASE("Cluster CG: a system too big for a cluster runs persistent, and the plan says why") {
  CGS_REQUIRE_GPU_OR_SKIP();
  const CsrMatrix<double> A = testing::poisson2d(400);  // 160,000 rows: ~4 MB in CSR
  for (GpuLoopAsk ask : {GpuLoopAsk::cluster, GpuLoopAsk::automatic}) {
    SolveRequest r;
    r.backend = gpu_csr();
    r.gpu_loop = ask;
    const Plan plan = make_plan(r, A);
    CHECK(plan.loop != Loop::cluster);
    bool said = false;
    for (const std::string& why : plan.reasons)
      said = said || why.find("not cluster") != std::string::npos;
    CHECK(said == (ask == GpuLoopAsk::cluster));
  }
  // One long row: its warp's slice is padded to it (32 x 700 entries), more than a block holds.
  {
    SolveRequest r;
    r.backend = gpu_csr();
    r.gpu_loop = GpuLoopAsk::cluster;
    const Plan plan = make_plan(r, testing::hub_and_chain(700));
    CHECK(plan.loop != Loop::cluster);
  }
  // amg's levels do not run in the cluster loop (the other programs do, in one block:
  // test_gpu_cluster_program.cpp).
  SolveRequest r;
  r.backend = gpu_csr();
  r.gpu_loop = GpuLoopAsk::cluster;
  r.precond = parse_precond("amg");
  CHECK(make_plan(r, testing::poisson2d(31)).loop != Loop::cluster);
  // Asked directly, the loop refuses with the reason.
  std::vector<index_t> row_ptr(A.row_ptr.begin(), A.row_ptr.end());
  const ClusterFit fit = cluster_fit<double>(A.rows, row_ptr.data());
  CHECK(!fit.fits);
  CHECK(fit.reason.find("shared memory") != std::string::npos);
}

TEST_CASE("Cluster CG: a batch of systems equals the single solves, per-system values too") {
  CGS_REQUIRE_GPU_OR_SKIP();
  const CsrMatrix<double> A =
      read_matrix_market(std::string(CGSOLVE_SOURCE_DIR) + "/data/systems/Exnet_EXN_step3.mtx.gz");
  const std::size_t n = std::size_t(A.rows), nnz = A.values.size();
  constexpr int kCount = 9;  // more clusters than fit at once on some devices' shapes: waves
  std::vector<double> b(n * kCount), values(nnz * kCount), d(n * kCount);
  for (int s = 0; s < kCount; ++s) {
    const std::vector<double> bs = random_vector<double>(n, 100 + s);
    std::copy(bs.begin(), bs.end(), b.begin() + std::ptrdiff_t(s * n));
    const double scale = 1.0 + s;  // system s: (1 + s) A, Jacobi of it
    for (std::size_t k = 0; k < nnz; ++k) values[s * nnz + k] = scale * A.values[k];
    for (std::size_t i = 0; i < n; ++i)
      for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
        if (std::size_t(A.col_idx[k]) == i) d[s * n + i] = 1.0 / (scale * A.values[k]);
  }
  DeviceBuffer<index_t> row_ptr(Device::gpu, A.row_ptr), col_idx(Device::gpu, A.col_idx);
  DeviceBuffer<double> A_values(Device::gpu, A.values);
  DeviceBuffer<double> b_gpu(Device::gpu, b), values_gpu(Device::gpu, values),
      d_gpu(Device::gpu, d);
  const CsrView<double> view{A.rows, row_ptr.data(), col_idx.data(), A_values.data(), 1, {}};
  auto cluster = make_cluster_cg<double>(view, A.rows, nullptr, 0, true);  // batch layout
  CgOptions cg;
  cg.tol = 1e-10;
  cg.max_iters = 100000;

  DeviceBuffer<double> x_batch(Device::gpu, std::vector<double>(n * kCount, 0.0));
  const std::vector<CgResult> batch = cluster->solve_batch(b_gpu.data(), x_batch.data(), kCount,
                                                           values_gpu.data(), d_gpu.data(), cg);
  REQUIRE(batch.size() == std::size_t(kCount));
  const std::vector<double> x_all = x_batch.download();
  for (int s = 0; s < kCount; ++s) {
    CAPTURE(s);
    DeviceBuffer<double> x_one(Device::gpu, std::vector<double>(n, 0.0));
    const CgResult one = cluster
                             ->solve_batch(b_gpu.data() + s * n, x_one.data(), 1,
                                           values_gpu.data() + s * nnz, d_gpu.data() + s * n, cg)
                             .front();
    CHECK(one.status == CgStatus::converged);
    CHECK(batch[s].iterations == one.iterations);
    const std::vector<double> x = x_one.download();
    CHECK(std::equal(x.begin(), x.end(), x_all.begin() + std::ptrdiff_t(s * n)));
    // And the answer solves (1 + s) A x = b_s.
    std::vector<double> scaled = A.values;
    for (double& v : scaled) v *= 1.0 + s;
    CsrMatrix<double> As = A;
    As.values = scaled;
    const std::vector<double> bs(b.begin() + std::ptrdiff_t(s * n),
                                 b.begin() + std::ptrdiff_t((s + 1) * n));
    const Reference Ax = reference_product(As, x);
    double rr = 0, bb = 0;
    for (std::size_t i = 0; i < n; ++i) {
      rr += (bs[i] - Ax.y[i]) * (bs[i] - Ax.y[i]);
      bb += bs[i] * bs[i];
    }
    CHECK(std::sqrt(rr / bb) <= 1e-8);  // the recursive residual reached 1e-10
  }
}

// A batch whose normal layout needs more blocks a system (7 vectors: 5,041 rows 276 KB, 10,000
// rows 547 KB) runs in the lean one (z, p, p, q: one block, two; x, d, r in global memory):
// with and without Jacobi, from a random x0 (read across blocks at the start), the answers of the
// one-system layout (16 blocks), to rounding (other partial sums).
TEST_CASE("Cluster CG: a batch in the lean layout equals the one-system loop") {
  CGS_REQUIRE_GPU_OR_SKIP();
  for (const index_t m : {71, 100}) {
    CAPTURE(m);
    const CsrMatrix<double> A = testing::poisson2d(m);
    const std::size_t n = std::size_t(A.rows);
    constexpr int kCount = 5;
    std::vector<double> b(n * kCount), d(n * kCount);
    for (int s = 0; s < kCount; ++s) {
      const std::vector<double> bs = random_vector<double>(n, 300 + s);
      std::copy(bs.begin(), bs.end(), b.begin() + std::ptrdiff_t(s * n));
      for (std::size_t i = 0; i < n; ++i) d[s * n + i] = 0.25 * (1.0 + 0.1 * s);  // SPD scaling
    }
    const std::vector<double> x0 = random_vector<double>(n, 77);
    std::vector<double> x0_all;
    for (int s = 0; s < kCount; ++s) x0_all.insert(x0_all.end(), x0.begin(), x0.end());
    DeviceBuffer<index_t> row_ptr(Device::gpu, A.row_ptr), col_idx(Device::gpu, A.col_idx);
    DeviceBuffer<double> values(Device::gpu, A.values), b_gpu(Device::gpu, b),
        d_gpu(Device::gpu, d);
    const CsrView<double> view{A.rows, row_ptr.data(), col_idx.data(), values.data(), 1, {}};
    auto lean = make_cluster_cg<double>(view, A.rows, nullptr, 0, true);
    auto single = make_cluster_cg<double>(view, A.rows, nullptr, 0, false);
    REQUIRE(lean->fit().lean);
    CHECK(lean->fit().blocks == (m == 71 ? 1 : 2));
    CHECK(!single->fit().lean);
    CgOptions cg;
    cg.tol = 1e-10;
    cg.max_iters = 100000;
    for (const bool jacobi : {false, true}) {
      CAPTURE(jacobi);
      DeviceBuffer<double> x_batch(Device::gpu, x0_all);
      const std::vector<CgResult> batch = lean->solve_batch(
          b_gpu.data(), x_batch.data(), kCount, nullptr, jacobi ? d_gpu.data() : nullptr, cg);
      const std::vector<double> x_all = x_batch.download();
      for (int s = 0; s < kCount; ++s) {
        CAPTURE(s);
        DeviceBuffer<double> x_one(Device::gpu, x0);
        const CgResult one = single
                                 ->solve_batch(b_gpu.data() + s * n, x_one.data(), 1, nullptr,
                                               jacobi ? d_gpu.data() + s * n : nullptr, cg)
                                 .front();
        CHECK(batch[s].status == CgStatus::converged);
        CHECK(std::abs(batch[s].iterations - one.iterations) <= 1);
        const std::vector<double> x = x_one.download();
        const std::vector<double> xs(x_all.begin() + std::ptrdiff_t(s * n),
                                     x_all.begin() + std::ptrdiff_t((s + 1) * n));
        CHECK(relative_difference(xs, x) <= 1e-8);
        const std::vector<double> bs(b.begin() + std::ptrdiff_t(s * n),
                                     b.begin() + std::ptrdiff_t((s + 1) * n));
        CHECK(true_relative_residual(A, bs, xs) <= 1e-9);
      }
    }
  }
}

TEST_CASE("Cluster CG: the phase trace (Tuning::cluster_phases) solves to the same bits") {
  // The traced kernel is a separate instance (clock reads in block 0's thread 0): same answer.
  CGS_REQUIRE_GPU_OR_SKIP();
  const CsrMatrix<double> A = testing::poisson2d(122);
  const std::vector<double> b = random_vector<double>(std::size_t(A.rows), 13);
  CgOptions cg;
  cg.tol = 1e-10;
  for (const char* precond : {"none", "jacobi"})
    for (const char* reductions : {"1", "2"}) {
      CAPTURE(std::string(precond));
      CAPTURE(std::string(reductions));
      const Reductions variant(reductions);
      const Run plain = run_loop_with<double>(A, b, precond, gpu_csr(), GpuLoopAsk::cluster, cg);
      Run traced;
      {
        const ScopedTuning trace(tuning_with([](Tuning& t) { t.cluster_phases = true; }));
        traced = run_loop_with<double>(A, b, precond, gpu_csr(), GpuLoopAsk::cluster, cg);
      }
      REQUIRE(traced.loop == Loop::cluster);
      CHECK(traced.result.status == CgStatus::converged);
      CHECK(traced.result.iterations == plain.result.iterations);
      CHECK(traced.x == plain.x);
      CHECK(!traced.result.spmv.samples.empty());
    }
}

TEST_CASE("Cluster CG: small systems in clusters of 1, 2 and 4 blocks (for compute-sanitizer)") {
  // Small enough for racecheck: every block boundary, remote reads, both layouts, a batch of 3.
  CGS_REQUIRE_GPU_OR_SKIP();
  const CsrMatrix<double> A = testing::poisson2d(9);  // n = 81: blocks of 81, 41, 21 rows
  const std::size_t n = std::size_t(A.rows);
  DeviceBuffer<index_t> row_ptr(Device::gpu, A.row_ptr), col_idx(Device::gpu, A.col_idx);
  DeviceBuffer<double> values(Device::gpu, A.values);
  const CsrView<double> view{A.rows, row_ptr.data(), col_idx.data(), values.data(), 1, {}};
  std::vector<double> b(3 * n);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = double((i * 7919) % 101) / 101.0;
  DeviceBuffer<double> b_gpu(Device::gpu, b);
  CgOptions cg;
  cg.tol = 1e-12;
  cg.max_iters = 1000;
  std::vector<double> reference;
  // Both kernels (the one-reduction one: one system a cluster), in both block sizes.
  for (const char* threads : {"", "1024", "512"})
    for (const char* reductions : {"2", "1"})
      for (bool batch : {false, true})
        for (int blocks : {1, 2, 4}) {
          CAPTURE(std::string(threads));
          CAPTURE(std::string(reductions));
          CAPTURE(batch);
          CAPTURE(blocks);
          const Reductions variant(reductions);
          std::unique_ptr<ClusterCg<double>> engine;
          {
            const ScopedTuning asked(
                tuning_with([&](Tuning& t) { t.cluster_threads = std::atoi(threads); }));
            engine = make_cluster_cg<double>(view, A.rows, nullptr, blocks, batch);
          }
          REQUIRE(engine->fit().blocks == blocks);
          CHECK(engine->fit().threads == (*threads ? std::atoi(threads) : batch ? 1024 : 512));
          CHECK(engine->fit().one_reduction == (reductions[0] == '1' && !batch));
          DeviceBuffer<double> x(Device::gpu, std::vector<double>(3 * n, 0.0));
          const std::vector<CgResult> results =
              engine->solve_batch(b_gpu.data(), x.data(), 3, nullptr, nullptr, cg);
          for (const CgResult& r : results) CHECK(r.status == CgStatus::converged);
          const std::vector<double> xs = x.download();
          if (reference.empty()) reference = xs;
          CHECK(relative_difference(xs, reference) <= 1e-10);
        }
}

}  // namespace
}  // namespace cgs
