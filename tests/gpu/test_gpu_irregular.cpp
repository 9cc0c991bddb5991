// The default GPU plan on irregular rows (issue 28) solves as the CPU does: a power-law graph
// and a matrix with one row holding a fifth of the nonzeros (n = 1,001, not a multiple of 32)
// take csr/stream in the generic loop and converge to the CPU's answer in its iteration count.
#include "gpu_cg_util.hpp"
#include "formats/generators.hpp"

namespace cgs {
namespace {

using namespace gputest;

CsrMatrix<double> hub_and_chain(index_t n) {
  std::vector<index_t> rows, cols;
  std::vector<double> vals;
  for (index_t i = 0; i < n; ++i) {
    rows.push_back(i), cols.push_back(i), vals.push_back(i == 0 ? double(n) : 4.0);
    if (i + 1 < n) {
      rows.insert(rows.end(), {i, i + 1}), cols.insert(cols.end(), {i + 1, i});
      vals.insert(vals.end(), {-1.0, -1.0});
    }
    if (i > 1) {
      rows.insert(rows.end(), {0, i}), cols.insert(cols.end(), {i, 0});
      vals.insert(vals.end(), {-0.5, -0.5});
    }
  }
  return csr_from_triplets(n, n, rows, cols, vals);
}

TEST_CASE("GPU default plan on long rows: csr/stream, generic loop, the CPU's answer") {
  CGS_REQUIRE_GPU_OR_SKIP();
  for (const CsrMatrix<double>& A : {hub_and_chain(1001), generate_matrix("gen:powerlaw:20000")}) {
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
