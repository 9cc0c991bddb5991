// The preconditioners' programs on the GPU against the same programs on the host, as Ginkgo tests
// each executor against its reference: one apply z = M^-1 r on the device equal to the host's to
// 1e-12, and every preconditioner in every GPU loop (persistent, graph, generic) converging in
// the CPU loop's iteration count (within 2%, at least 2) to the same answer, on a Poisson grid,
// an EPANET system and an irregular random SPD matrix whose order is not a multiple of 32.
// (IC(0) ran as a race on the GPU until this file existed: its one-thread sweep was chosen for
// the GPU, whose plan has one "thread". Issue 21.) bjacobi:7 leaves a shorter last block on
// every system here.
#include <cmath>
#include <string>

#include "formats/matrix_market.hpp"
#include "gpu_cg_util.hpp"
#include "spmv/device_buffer.hpp"
#include "solver/precond/preconditioner.hpp"
#include "solver/precond/sparse_cholesky.hpp"

namespace cgs {
namespace {

using namespace gputest;

// testing::irregular_spd: a hub row joined to every 7th row, n = 1013.
CsrMatrix<double> irregular_spd() { return testing::irregular_spd(1013, 500, 7, 41); }

struct System {
  std::string name;
  CsrMatrix<double> A;
};

const std::vector<System>& systems() {
  static const std::vector<System> list = {
      {"poisson 31x31", testing::poisson2d(31)},
      {"Exnet step 3", read_matrix_market(std::string(CGSOLVE_SOURCE_DIR) +
                                          "/data/systems/Exnet_EXN_step3.mtx.gz")},
      {"irregular random SPD 1013", irregular_spd()}};
  return list;
}

const char* const kPreconditioners[] = {"jacobi", "ic0",    "ic0:colour", "ic0:parts:100",
                                        "fsai",   "fsai:2", "bjacobi:64", "bjacobi:7",
                                        "cheb:4", "cheb:8", "amg",        "amg:smoother=jacobi",
                                        "chol",   "chol:order=natural"};

std::unique_ptr<Preconditioner<double>> set_up(const std::string& name, Device device,
                                               const CsrMatrix<double>& A) {
  auto M = make_preconditioner<double>(parse_precond(name), device, device == Device::omp ? 2 : 1);
  M->analyze(A);
  return M;
}

TEST_CASE("GPU preconditioners: one apply equals the host program's to 1e-12") {
  CGS_REQUIRE_GPU_OR_SKIP();
  for (const System& s : systems()) {
    const std::vector<double> r = random_vector<double>(std::size_t(s.A.rows), 7);
    for (const char* name : kPreconditioners) {
      if (std::string(name) == "jacobi") continue;  // pointwise: fused into the loops
      CAPTURE(s.name);
      CAPTURE(std::string(name));
      // The host program on a team of two (operations split among threads, as on the GPU).
      auto host = set_up(name, Device::omp, s.A);
      std::vector<double> z_host(r.size());
      host->apply(r.data(), z_host.data());
      auto gpu = set_up(name, Device::gpu, s.A);
      CHECK(gpu->program_size() == host->program_size());
      DeviceBuffer<double> r_gpu(Device::gpu, r), z_gpu(Device::gpu, r.size());
      gpu->apply(r_gpu.data(), z_gpu.data());
      const std::vector<double> z = z_gpu.download();
      CHECK(relative_difference(z, z_host) <= 1e-12);
      // Twice on the same vectors gives the same z (nothing left over from the last apply).
      gpu->apply(r_gpu.data(), z_gpu.data());
      CHECK(relative_difference(z_gpu.download(), z) == 0);
    }
  }
}

TEST_CASE("GPU preconditioners: every one converges in every GPU loop as on the CPU") {
  CGS_REQUIRE_GPU_OR_SKIP();
  CgOptions cg;
  cg.tol = 1e-10;
  cg.max_iters = 100000;
  for (const System& s : systems()) {
    const std::vector<double> b = random_vector<double>(std::size_t(s.A.rows), 61);
    for (const char* name : kPreconditioners) {
      BackendOptions cpu;
      cpu.device = Device::omp;
      cpu.threads = 2;
      const Run reference = run_loop_with<double>(s.A, b, name, cpu, GpuLoopAsk::automatic, cg);
      CAPTURE(s.name);
      CAPTURE(std::string(name));
      REQUIRE(reference.result.status == CgStatus::converged);
      const long its = reference.result.iterations;
      // 2%; 3% for the degree-8 polynomial, whose count on Exnet (900 iterations, ill
      // conditioned) moves by 2.4% with the order of the sums alone (H100, 2026-11-25: the
      // three GPU loops 878-879, the CPU team 900).
      const double share = std::string(name).rfind("cheb", 0) == 0 ? 0.03 : 0.02;
      const long slack = std::max(2L, long(std::ceil(share * double(its))));
      for (GpuLoopAsk loop : {GpuLoopAsk::persistent, GpuLoopAsk::graph, GpuLoopAsk::generic}) {
        BackendOptions gpu;
        gpu.device = Device::gpu;
        gpu.format = Format::csr;
        const Run run = run_loop_with<double>(s.A, b, name, gpu, loop, cg);
        INFO(to_string(loop) << ": " << run.result.iterations << " iterations, CPU " << its);
        CHECK(run.result.status == CgStatus::converged);
        CHECK(std::abs(run.result.iterations - its) <= slack);
        CHECK(true_relative_residual(s.A, b, run.x) <= 10 * cg.tol);
        CHECK(relative_difference(run.x, reference.x) <= 1e-6);
      }
    }
  }
}

// chol in a fixed order solves with a direct solver's rounding (each product and difference
// rounded on its own, the diagonal divided): on the GPU, level by level, the same bits as the
// left-looking factor's own solve on the host (EPANET's, where the order is EPANET's).
TEST_CASE("GPU chol:order=given: M^-1 r is the left-looking factor's solve bit for bit") {
  CGS_REQUIRE_GPU_OR_SKIP();
  for (const System& s : systems()) {
    CAPTURE(s.name);
    const std::vector<int> order = precond::minimum_degree_order(s.A);
    precond::SparseCholesky reference;
    reference.analyse(s.A, order);
    REQUIRE(reference.factorize(s.A, nullptr));
    const std::vector<double> r = random_vector<double>(std::size_t(s.A.rows), 9);
    std::vector<double> expected;
    reference.solve(r, expected);
    PrecondSpec spec = parse_precond("chol:order=given");
    spec.elimination_order = std::make_shared<const std::vector<int>>(order);
    auto gpu = make_preconditioner<double>(spec, Device::gpu, 1);
    gpu->analyze(s.A);
    DeviceBuffer<double> r_gpu(Device::gpu, r), z_gpu(Device::gpu, r.size());
    gpu->apply(r_gpu.data(), z_gpu.data());
    CHECK(z_gpu.download() == expected);
  }
}

TEST_CASE("GPU ic0: the exact order by default, colour and parts orders converge too") {
  CGS_REQUIRE_GPU_OR_SKIP();
  const CsrMatrix<double> A = testing::poisson2d(64);
  CHECK(set_up("ic0", Device::gpu, A)->name() == "ic0:levels");
  CHECK(set_up("ic0:colour", Device::gpu, A)->program_size() == 4);  // red-black: 2 + 2
  CgOptions cg;
  cg.tol = 1e-10;
  const std::vector<double> b = random_vector<double>(std::size_t(A.rows), 3);
  BackendOptions gpu;
  gpu.device = Device::gpu;
  const Run jacobi = run_loop_with<double>(A, b, "jacobi", gpu, GpuLoopAsk::automatic, cg);
  for (const char* name : {"ic0", "ic0:colour", "ic0:parts:256"}) {
    CAPTURE(std::string(name));
    const Run run = run_loop_with<double>(A, b, name, gpu, GpuLoopAsk::automatic, cg);
    REQUIRE(run.result.status == CgStatus::converged);
    CHECK(run.result.iterations < jacobi.result.iterations);
    CHECK(true_relative_residual(A, b, run.x) <= 10 * cg.tol);
  }
}

}  // namespace
}  // namespace cgs
