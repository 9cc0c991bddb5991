// The default GPU plan on irregular rows (issue 28) solves as the CPU does: a power-law graph
// and a matrix with one row holding a fifth of the nonzeros (n = 1,001, not a multiple of 32)
// take csr/stream in the generic loop and converge to the CPU's answer in its iteration count.
// HLL with its HYB tail (formats/hll.hpp) does the same in every GPU loop: the generic loop's
// SpMV sums the tail in pieces, the fused loops' row function walks it.
#include "formats/generators.hpp"
#include "gpu_cg_util.hpp"

namespace cgs {
namespace {

using namespace gputest;

std::vector<NamedMatrix> irregular_systems() {
  return {{"hub and chain 1001", testing::hub_and_chain(1001)},
          {"gen:powerlaw:20000", generate_matrix("gen:powerlaw:20000")},
          {"n = 1", CsrMatrix<double>{1, 1, {0, 1}, {0}, {4.0}}}};
}

// The CPU's answer (serial, generic loop, CSR) to A x = b, Jacobi, tol 1e-10.
Run cpu_reference(const CsrMatrix<double>& A, const std::vector<double>& b, const CgOptions& cg) {
  BackendOptions cpu;
  cpu.device = Device::serial;
  const Run reference = run_loop_with<double>(A, b, "jacobi", cpu, GpuLoopAsk::generic, cg);
  REQUIRE(reference.result.status == CgStatus::converged);
  return reference;
}

void check_same_answer(const CsrMatrix<double>& A, const std::vector<double>& b, const Run& run,
                       const Run& reference, const CgOptions& cg) {
  INFO(A.rows << " rows: GPU " << run.result.iterations << ", CPU " << reference.result.iterations);
  CHECK(run.result.status == CgStatus::converged);
  CHECK(std::abs(run.result.iterations - reference.result.iterations) <= 2);
  CHECK(true_relative_residual(A, b, run.x) <= 10 * cg.tol);
  CHECK(relative_difference(run.x, reference.x) <= 1e-6);
}

TEST_CASE("GPU default plan on long rows: csr/stream, generic loop, the CPU's answer") {
  CGS_REQUIRE_GPU_OR_SKIP();
  for (const CsrMatrix<double>& A :
       {testing::hub_and_chain(1001), generate_matrix("gen:powerlaw:20000")}) {
    const std::vector<double> b = random_vector<double>(std::size_t(A.rows), 5);
    CgOptions cg;
    cg.tol = 1e-10;
    const Run reference = cpu_reference(A, b, cg);
    BackendOptions gpu;
    gpu.device = Device::gpu;
    const Run run = run_loop_with<double>(A, b, "jacobi", gpu, GpuLoopAsk::automatic, cg);
    CHECK(run.loop == Loop::generic);
    check_same_answer(A, b, run, reference, cg);
  }
}

TEST_CASE("GPU HLL with a HYB tail: every loop converges to the CPU's answer") {
  CGS_REQUIRE_GPU_OR_SKIP();
  for (const NamedMatrix& m : irregular_systems()) {
    const CsrMatrix<double>& A = m.A;
    const std::vector<double> b = random_vector<double>(std::size_t(A.rows), 6);
    CgOptions cg;
    cg.tol = 1e-10;
    const Run reference = cpu_reference(A, b, cg);
    for (index_t tail : {-1, 0, 2}) {
      for (GpuLoopAsk loop : {GpuLoopAsk::automatic, GpuLoopAsk::generic, GpuLoopAsk::graph,
                              GpuLoopAsk::persistent}) {
        INFO(m.name << ", tail past " << tail << ", loop " << int(loop));
        BackendOptions gpu;
        gpu.device = Device::gpu;
        gpu.format = Format::hll;
        gpu.hll_tail = tail;
        const Run run = run_loop_with<double>(A, b, "jacobi", gpu, loop, cg);
        check_same_answer(A, b, run, reference, cg);
      }
    }
  }
}

}  // namespace
}  // namespace cgs
