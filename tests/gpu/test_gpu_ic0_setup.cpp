// IC(0)'s program on the GPU after its set-up's rework (issue 21 item 3): from 200,000 rows the
// program reads L's, L^T's and the level rows' arrays from ic0's own device buffers (one upload
// each, nothing packed), smaller systems the packed copy as before. Checked against the host:
//   - one apply z = M^-1 r equal to the host program's (omp, level by level) to 1e-12 relative in
//     double (1e-4 in float), on a 250,000-row grid (own buffers) and a random SPD matrix of
//     1,013 rows (packed), before and after set_values on the same pattern;
//   - CG through the solver on the grid (rows in the file's order: the planner skips RCM there),
//     the default and the generic GPU loops, in the CPU team's iterations within 2%.
#include <cmath>
#include <string>
#include <vector>

#include "gpu_cg_util.hpp"
#include "solver/device_buffer.hpp"
#include "solver/precond/preconditioner.hpp"
#include "solver/precond/spectrum_gpu.hpp"

namespace cgs {
namespace {

using namespace gputest;

template <typename T>
void check_ic0_apply(const CsrMatrix<double>& A, const std::string& arrays, double tolerance) {
  const std::vector<double> r64 = random_vector<double>(std::size_t(A.rows), 23);
  const std::vector<T> r(r64.begin(), r64.end());
  auto host = make_preconditioner<T>(parse_precond("ic0"), Device::omp, 2);
  host->analyze(A);
  auto gpu = make_preconditioner<T>(parse_precond("ic0"), Device::gpu, 1);
  gpu->analyze(A);
  CHECK(fact(*gpu, "program arrays") == arrays);
  CHECK(fact(*gpu, "levels") == fact(*host, "levels"));
  CHECK(gpu->program_size() == host->program_size());
  auto compare = [&] {
    std::vector<T> z_host(r.size());
    host->apply(r.data(), z_host.data());
    DeviceBuffer<T> r_gpu(Device::gpu, r), z_gpu(Device::gpu, r.size());
    gpu->apply(r_gpu.data(), z_gpu.data());
    const std::vector<T> z = z_gpu.download();
    CHECK(relative_difference(std::vector<double>(z.begin(), z.end()),
                              std::vector<double>(z_host.begin(), z_host.end())) <= tolerance);
  };
  compare();
  CsrMatrix<double> B = A;  // new values, same pattern: a new factor (diagonal raised)
  for (index_t i = 0; i < B.rows; ++i)
    for (index_t k = B.row_ptr[i]; k < B.row_ptr[i + 1]; ++k)
      if (B.col_idx[k] == i) B.values[k] *= 1.5;
  host->set_values(B);
  gpu->set_values(B);
  compare();
}

TEST_CASE("GPU ic0 set-up: the program on its own device buffers applies as the host's") {
  CGS_REQUIRE_GPU_OR_SKIP();
  const CsrMatrix<double> grid = testing::poisson2d(500);
  REQUIRE(precond::worth_device_setup(grid.rows));
  const CsrMatrix<double> small = testing::random_spd(1013, 4, 41);
  REQUIRE_FALSE(precond::worth_device_setup(small.rows));
  const std::string own = "its own device buffers, read in place";
  SUBCASE("double, 250,000 rows") { check_ic0_apply<double>(grid, own, 1e-12); }
  SUBCASE("float, 250,000 rows") { check_ic0_apply<float>(grid, own, 1e-4); }
  SUBCASE("double, 1,013 rows (packed)") { check_ic0_apply<double>(small, "packed copy", 1e-12); }
}

TEST_CASE("GPU ic0 set-up: CG with ic0 on a grid takes the CPU's iterations") {
  CGS_REQUIRE_GPU_OR_SKIP();
  if (testing::light_level() > 0) return;  // compute-sanitizer: the apply test above suffices
  const CsrMatrix<double> A = testing::poisson2d(500);
  const std::vector<double> b = random_vector<double>(std::size_t(A.rows), 31);
  CgOptions cg;
  cg.tol = 1e-8;
  cg.max_iters = 20000;
  auto solve = [&](Device device, GpuLoopAsk loop, std::vector<double>& x) {
    SolveRequest r;
    r.backend.device = device;
    r.backend.threads = device == Device::omp ? 2 : 0;
    r.cpu_loop = CpuLoopAsk::team;
    r.precond = parse_precond("ic0");
    r.gpu_loop = loop;
    r.cg = cg;
    auto solver = make_solver(make_plan(r, A));
    solver->analyze(A);
    return solver->solve(b, x);
  };
  std::vector<double> x_cpu;
  const SolveReport cpu = solve(Device::omp, GpuLoopAsk::automatic, x_cpu);
  REQUIRE(cpu.cg.status == CgStatus::converged);
  CHECK_FALSE(cpu.plan.rcm);  // a grid in natural order: the file's order
  const long its = cpu.cg.iterations;
  for (GpuLoopAsk loop : {GpuLoopAsk::automatic, GpuLoopAsk::generic}) {
    CAPTURE(to_string(loop));
    std::vector<double> x;
    const SolveReport gpu = solve(Device::gpu, loop, x);
    INFO("GPU " << gpu.cg.iterations << " iterations, CPU " << its);
    CHECK(gpu.cg.status == CgStatus::converged);
    CHECK(std::abs(gpu.cg.iterations - its) <= std::max(2L, long(std::ceil(0.02 * double(its)))));
    CHECK(true_relative_residual(A, b, x) <= 10 * cg.tol);
  }
}

}  // namespace
}  // namespace cgs
