// The default GPU plan on irregular rows (issue 28) solves as the CPU does: a power-law graph
// and a matrix with one row holding a fifth of the nonzeros (n = 1,001, not a multiple of 32)
// take csr/balanced in the fused graph loop (csr/stream in the generic loop past 1M nonzeros)
// and converge to the CPU's answer in its iteration count;
// the balanced kernel does so in every loop, also with n = 1 and with empty rows.
// HLL with its HYB tail (formats/hll.hpp) does the same in every GPU loop: the generic loop's
// SpMV sums the tail in pieces, the fused loops' row function walks it.
#include <algorithm>

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

TEST_CASE(
    "GPU default plan on long rows: csr/balanced in the graph loop up to 1M nonzeros, "
    "csr/stream in the generic loop beyond; the CPU's answer") {
  CGS_REQUIRE_GPU_OR_SKIP();
  struct Case {
    CsrMatrix<double> A;
    const char* kernel;
    Loop loop;
  };
  const Case cases[] = {
      {testing::hub_and_chain(1001), "balanced", Loop::graph},
      {generate_matrix("gen:powerlaw:20000"), "balanced", Loop::graph},
      {generate_matrix("gen:powerlaw:200000"), "stream", Loop::generic}};  // 1.4M nonzeros
  for (const Case& c : cases) {
    CAPTURE(c.A.rows);
    const std::vector<double> b = random_vector<double>(std::size_t(c.A.rows), 5);
    CgOptions cg;
    cg.tol = 1e-10;
    const Run reference = cpu_reference(c.A, b, cg);
    BackendOptions gpu;
    gpu.device = Device::gpu;
    const Run run = run_loop_with<double>(c.A, b, "jacobi", gpu, GpuLoopAsk::automatic, cg);
    CHECK(run.kernel == c.kernel);
    CHECK(run.loop == c.loop);
    check_same_answer(c.A, b, run, reference, cg);
  }
}

// Poisson 2D with the rows and columns in `gone` emptied: singular, but consistent with b = 0
// there (CG never moves those entries of x); no Jacobi (their diagonal is 0).
CsrMatrix<double> poisson_with_empty_rows(index_t m, const std::vector<index_t>& gone) {
  const CsrMatrix<double> P = testing::poisson2d(m);
  const auto is_gone = [&](index_t i) {
    return std::find(gone.begin(), gone.end(), i) != gone.end();
  };
  std::vector<index_t> rows, cols;
  std::vector<double> vals;
  for (index_t r = 0; r < P.rows; ++r)
    for (index_t k = P.row_ptr[r]; k < P.row_ptr[r + 1]; ++k)
      if (!is_gone(r) && !is_gone(P.col_idx[k])) {
        rows.push_back(r);
        cols.push_back(P.col_idx[k]);
        vals.push_back(P.values[k]);
      }
  return csr_from_triplets(P.rows, P.cols, rows, cols, vals);
}

TEST_CASE("GPU balanced kernel: every loop converges to the CPU's answer, n = 1 and empty rows") {
  CGS_REQUIRE_GPU_OR_SKIP();
  std::vector<NamedMatrix> systems = irregular_systems();
  systems.push_back(
      {"poisson 40x40 with empty rows", poisson_with_empty_rows(40, {0, 37, 800, 1599})});
  for (const NamedMatrix& m : systems) {
    const CsrMatrix<double>& A = m.A;
    const bool jacobi = m.name.find("empty") == std::string::npos;
    std::vector<double> b = random_vector<double>(std::size_t(A.rows), 7);
    for (index_t r = 0; r < A.rows; ++r)
      if (A.row_length(r) == 0) b[r] = 0;
    CgOptions cg;
    cg.tol = 1e-10;
    BackendOptions cpu;
    cpu.device = Device::serial;
    const std::string precond = jacobi ? "jacobi" : "none";
    const Run reference = run_loop_with<double>(A, b, precond, cpu, GpuLoopAsk::generic, cg);
    REQUIRE(reference.result.status == CgStatus::converged);
    for (GpuLoopAsk loop :
         {GpuLoopAsk::automatic, GpuLoopAsk::generic, GpuLoopAsk::graph, GpuLoopAsk::persistent}) {
      INFO(m.name << ", loop " << int(loop));
      BackendOptions gpu;
      gpu.device = Device::gpu;
      gpu.kernel = "balanced";
      const Run run = run_loop_with<double>(A, b, precond, gpu, loop, cg);
      check_same_answer(A, b, run, reference, cg);
      const Run single = run_loop_with<float>(A, b, precond, gpu, loop, [] {
        CgOptions c;
        c.tol = 1e-5;
        return c;
      }());
      CHECK(single.result.status == CgStatus::converged);
      CHECK(true_relative_residual(A, b, single.x) <= 1e-4);
    }
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
        gpu.hll_sigma = 0;  // the rows' own order (sorted windows: the test below)
        const Run run = run_loop_with<double>(A, b, "jacobi", gpu, loop, cg);
        check_same_answer(A, b, run, reference, cg);
      }
    }
  }
}

// SELL-C-sigma: the SpMV kernel writes through the storage order, the fused loops' row function
// finds each row's slot (row_slot). Windows chosen from the row lengths (the power-law matrix
// sorts), of 64 rows, and past n; the tail chosen or everything in it. Light runs (under
// compute-sanitizer, CGS_GPU_TESTS_LIGHT) leave out the 20,000-row matrix.
TEST_CASE("GPU HLL sorted in windows (SELL-C-sigma): every loop converges to the CPU's answer") {
  CGS_REQUIRE_GPU_OR_SKIP();
  for (const NamedMatrix& m : irregular_systems()) {
    const CsrMatrix<double>& A = m.A;
    if (testing::light_level() > 0 && A.rows > 5000) continue;
    const std::vector<double> b = random_vector<double>(std::size_t(A.rows), 7);
    CgOptions cg;
    cg.tol = 1e-10;
    const Run reference = cpu_reference(A, b, cg);
    for (index_t sigma : {-1, 64, 1 << 22}) {
      for (index_t tail : {-1, 0}) {
        for (GpuLoopAsk loop : {GpuLoopAsk::automatic, GpuLoopAsk::generic, GpuLoopAsk::graph,
                                GpuLoopAsk::persistent}) {
          INFO(m.name << ", sigma " << sigma << ", tail past " << tail << ", loop " << int(loop));
          BackendOptions gpu;
          gpu.device = Device::gpu;
          gpu.format = Format::hll;
          gpu.hll_tail = tail;
          gpu.hll_sigma = sigma;
          const Run run = run_loop_with<double>(A, b, "jacobi", gpu, loop, cg);
          check_same_answer(A, b, run, reference, cg);
        }
      }
    }
  }
}

}  // namespace
}  // namespace cgs
