// The default GPU plan on irregular rows (issue 28) solves as the CPU does: a power-law graph
// and a matrix with one row holding a fifth of the nonzeros (n = 1,001, not a multiple of 32)
// take csr/stream in the generic loop and converge to the CPU's answer in its iteration count.
#include "formats/generators.hpp"
#include "gpu_cg_util.hpp"

namespace cgs {
namespace {

using namespace gputest;

TEST_CASE("GPU default plan on long rows: csr/stream, generic loop, the CPU's answer") {
  CGS_REQUIRE_GPU_OR_SKIP();
  for (const CsrMatrix<double>& A :
       {testing::hub_and_chain(1001), generate_matrix("gen:powerlaw:20000")}) {
    const std::vector<double> b = random_vector<double>(std::size_t(A.rows), 5);
    CgOptions cg;
    cg.tol = 1e-10;
    BackendOptions cpu;
    cpu.device = Device::serial;
    const Run reference = run_loop_with<double>(A, b, "jacobi", cpu, GpuLoopAsk::generic, cg);
    REQUIRE(reference.result.status == CgStatus::converged);
    BackendOptions gpu;
    gpu.device = Device::gpu;
    const Run run = run_loop_with<double>(A, b, "jacobi", gpu, GpuLoopAsk::automatic, cg);
    INFO(A.rows << " rows: GPU " << run.result.iterations << ", CPU "
                << reference.result.iterations);
    CHECK(run.loop == Loop::generic);
    CHECK(run.result.status == CgStatus::converged);
    CHECK(std::abs(run.result.iterations - reference.result.iterations) <= 2);
    CHECK(true_relative_residual(A, b, run.x) <= 10 * cg.tol);
    CHECK(relative_difference(run.x, reference.x) <= 1e-6);
  }
}

}  // namespace
}  // namespace cgs
