// GPU ranks (solver/distributed/cuda_rank_ops.cu) against the single-GPU CG: the same iterations
// (within 2% and 1) and x to 1e-6. Run under mpirun with 1 rank (NCCL) or 2 ranks on one GPU
// (NCCL refuses two ranks on one device, so the halo and sums go through host memory and MPI;
// CGSOLVE_GPU_TRANSPORT=nccl|mpi forces one). Skips without a GPU.
#include <doctest/doctest.h>

#include "distributed/distributed_test_util.hpp"
#include "solver/distributed/cuda_rank_ops.hpp"
#include "spmv/cuda/cuda_backends.hpp"
#include "test_matrices.hpp"

using namespace cgs;
using namespace cgs::dist;
using namespace cgs::testing;

namespace {

bool have_gpu() {
  std::string why;
  if (cuda_device_available(&why)) {
    bind_rank_gpu(MPI_COMM_WORLD);  // before the single-GPU solves make the CUDA context
    return true;
  }
  MESSAGE("skipped: no GPU (" << why << ")");
  return false;
}

SolveRequest gpu_request(const char* precond) {
  SolveRequest r;
  r.backend.device = Device::gpu;
  r.precond = parse_precond(precond);
  r.cg.tol = 1e-10;
  r.cg.check_every = 1;
  r.gpu_loop = GpuLoopAsk::generic;
  return r;
}

}  // namespace

TEST_CASE("GPU ranks equal the single-GPU CG (classic and single-reduction, none and jacobi)") {
  if (!have_gpu()) return;
  const std::vector<std::pair<const char*, CsrMatrix<double>>> systems = {
      {"poisson2d 60x60", poisson2d(60)}, {"random irregular SPD", random_spd(3000, 6, 4)}};
  for (const auto& [name, A] : systems) {
    CAPTURE(name);
    const std::vector<double> b = dense_product(A, random_vector(std::size_t(A.rows), 8));
    for (const char* precond : {"none", "jacobi"}) {
      CAPTURE(precond);
      const Solved alone = solve_alone(A, b, gpu_request(precond));
      REQUIRE(alone.ok);
      for (CgVariant variant : {CgVariant::classic, CgVariant::single_reduction}) {
        CAPTURE(to_string(variant));
        DistributedRequest d;
        d.request = gpu_request(precond);
        d.variant = variant;
        const Solved spread = solve_spread(A, b, d);
        CHECK(spread.ok);
        CHECK(std::abs(spread.iterations - alone.iterations) <=
              std::max(1.0, 0.02 * double(alone.iterations)));
        if (world_rank() == 0) {
          CHECK(relative_difference(spread.x, alone.x) < 1e-6);
          CHECK(spread.true_residual <= 1.5e-10);
        }
      }
    }
  }
}

TEST_CASE("GPU ranks equal CPU ranks, ic0 per rank and a rank without rows included") {
  if (!have_gpu()) return;
  const CsrMatrix<double> A = poisson2d(40);
  const std::vector<double> b = dense_product(A, random_vector(1600, 2));
  DistributedRequest d;
  d.request = gpu_request("ic0");
  const Solved gpu = solve_spread(A, b, d);
  d.request = cpu_request("ic0", 1e-10);
  const Solved cpu = solve_spread(A, b, d);
  CHECK(gpu.ok);
  CHECK(std::abs(gpu.iterations - cpu.iterations) <= std::max(1.0, 0.02 * cpu.iterations));
  if (world_rank() == 0) CHECK(relative_difference(gpu.x, cpu.x) < 1e-6);
  // One row for all ranks: the others hold nothing and still take part in every reduction.
  const CsrMatrix<double> one = poisson2d(1);
  d.request = gpu_request("jacobi");
  const Solved single = solve_spread(one, {4.0}, d);
  CHECK(single.ok);
  if (world_rank() == 0) CHECK(single.x[0] == doctest::Approx(1.0));
}
