// The fused distributed loop (--dist-loop fused: the vector updates inside the product's pass)
// against the single process and against the plain loop, on the ranks of this mpirun (1, 2 or 4
// in CTest); where it is not offered the plain loop runs; the halo moves the same bytes; and the
// waits split into imbalance and transfer as a rank made late says they should.
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <thread>

#include "distributed_test_util.hpp"
#include "formats/generators.hpp"
#include "solver/distributed/cpu_rank_ops.hpp"
#include "solver/distributed/mpi_comm.hpp"
#include "test_matrices.hpp"

using namespace cgs;
using namespace cgs::dist;
using namespace cgs::testing;

namespace {

const std::string kData = CGSOLVE_SOURCE_DIR "/data";

bool iterations_agree(long spread, long alone, double slack) {
  return std::abs(spread - alone) <= std::max(1.0, slack * double(alone));
}

struct Case {
  std::string name;
  CsrMatrix<double> A;
  std::vector<double> b;
  double slack;  // iterations: 2%; the EPANET system 8% (test_distributed_cg.cpp says why)
};

std::vector<Case> cases() {
  std::vector<Case> list;
  CsrMatrix<double> grid = poisson2d(40);
  std::vector<double> b = dense_product(grid, random_vector(std::size_t(grid.rows), 7));
  list.push_back({"poisson2d 40x40", std::move(grid), std::move(b), 0.02});
  CsrMatrix<double> irregular = random_spd(700, 5, 21);
  b = dense_product(irregular, random_vector(std::size_t(irregular.rows), 8));
  list.push_back({"random irregular SPD", std::move(irregular), std::move(b), 0.02});
  CsrMatrix<double> exnet = read_matrix_market(kData + "/systems/Exnet_EXN_step3.mtx.gz");
  b = read_vector_market(kData + "/systems/Exnet_EXN_step3_b.mtx.gz", exnet.rows);
  list.push_back({"EPANET Exnet", std::move(exnet), std::move(b), 0.08});
  return list;
}

}  // namespace

TEST_CASE("fused loop: the single process's iterations and x, with and without Jacobi") {
  for (const Case& c : cases()) {
    for (const char* precond : {"none", "jacobi"}) {
      if (c.slack > 0.02 && std::string(precond) == "none") continue;  // 12,550 iterations
      CAPTURE(c.name);
      CAPTURE(precond);
      CAPTURE(world_size());
      DistributedRequest d;
      d.request = cpu_request(precond, 1e-10);
      d.loop = DistLoop::fused;
      const Solved fused = solve_spread(c.A, c.b, d);
      CHECK(fused.loop == DistLoop::fused);
      d.loop = DistLoop::plain;
      const Solved plain = solve_spread(c.A, c.b, d);
      CHECK(plain.loop == DistLoop::plain);
      // Against the single process's generic loop and its fused (serial) one alike.
      for (CpuLoopAsk alone_loop : {CpuLoopAsk::generic, CpuLoopAsk::serial}) {
        SolveRequest alone_request = d.request;
        alone_request.cpu_loop = alone_loop;
        const Solved alone = solve_alone(c.A, c.b, alone_request);
        CHECK(fused.ok);
        CHECK(alone.ok);
        CHECK(iterations_agree(fused.iterations, alone.iterations, c.slack));
        if (world_rank() == 0)
          CHECK(relative_difference(fused.x, alone.x) < (c.slack > 0.02 ? 1e-1 : 1e-6));
      }
      CHECK(iterations_agree(fused.iterations, plain.iterations, c.slack));
      if (world_rank() == 0) {
        CHECK(fused.true_residual <= 1.5e-10);
        CHECK(relative_difference(fused.x, plain.x) < (c.slack > 0.02 ? 1e-1 : 1e-6));
      }
    }
  }
}

TEST_CASE("fused loop: not offered for single-reduction or a preconditioner with a program") {
  const CsrMatrix<double> A = poisson2d(30);
  const std::vector<double> b = dense_product(A, random_vector(std::size_t(A.rows), 3));
  DistributedRequest d;
  d.loop = DistLoop::fused;
  d.request = cpu_request("ic0", 1e-10);
  const Solved ic0 = solve_spread(A, b, d);
  CHECK(ic0.ok);
  CHECK(ic0.loop == DistLoop::plain);
  d.request = cpu_request("jacobi", 1e-10);
  d.variant = CgVariant::single_reduction;
  const Solved single = solve_spread(A, b, d);
  CHECK(single.ok);
  CHECK(single.loop == DistLoop::plain);
  d.variant = CgVariant::classic;
  const Solved classic = solve_spread(A, b, d);
  CHECK(classic.loop == DistLoop::fused);
  CHECK(iterations_agree(single.iterations, classic.iterations, 0.02));
}

TEST_CASE("fused loop: edge cases (n = 1, a rank without rows, b = 0, breakdown)") {
  DistributedRequest d;
  d.request = cpu_request("jacobi", 1e-12);
  d.loop = DistLoop::fused;
  const CsrMatrix<double> one = poisson2d(1);
  const Solved single_row = solve_spread(one, {2.0}, d);
  CHECK(single_row.ok);
  if (world_rank() == 0) CHECK(single_row.x.at(0) == doctest::Approx(0.5).epsilon(1e-12));
  const CsrMatrix<double> A =
      csr_from_triplets<double>(3, 3, {0, 0, 1, 1, 2}, {0, 1, 0, 1, 2}, {4, -1, -1, 4, 4});
  const Solved three = solve_spread(A, {3, 3, 4}, d);  // 4 ranks: one owns nothing
  CHECK(three.ok);
  CHECK(three.loop == DistLoop::fused);
  if (world_rank() == 0)
    for (double xi : three.x) CHECK(xi == doctest::Approx(1.0).epsilon(1e-10));
  const Solved zero = solve_spread(A, {0, 0, 0}, d);
  CHECK(zero.ok);
  if (world_rank() == 0)
    for (double xi : zero.x) CHECK(xi == 0.0);
  // Indefinite (p.Ap < 0 at the first step): a breakdown reported as the single process reports
  // it, x left at the initial guess.
  const CsrMatrix<double> indefinite =
      csr_from_triplets<double>(3, 3, {0, 1, 2}, {0, 1, 2}, {-1, -2, -3});
  d.request = cpu_request("none", 1e-12);
  const Solved broken = solve_spread(indefinite, {1, 1, 1}, d);
  const Solved broken_alone = solve_alone(indefinite, {1, 1, 1}, d.request);
  CHECK_FALSE(broken.ok);
  CHECK_FALSE(broken_alone.ok);
  CHECK(broken.iterations == broken_alone.iterations);
  if (world_rank() == 0)
    for (double xi : broken.x) CHECK(xi == 0.0);
}

TEST_CASE("fused loop: the halo moves the bytes of the halo, as the plain loop's") {
  const CsrMatrix<double> A = random_spd(600, 6, 9);
  const std::vector<double> b = dense_product(A, random_vector(std::size_t(A.rows), 4));
  DistributedRequest d;
  d.request = cpu_request("jacobi", 1e-10);
  std::size_t per_product[2] = {0, 0};
  for (DistLoop loop : {DistLoop::fused, DistLoop::plain}) {
    d.loop = loop;
    const DistributedOutcome out = solve_distributed(session(), world_rank() == 0 ? &A : nullptr,
                                                     world_rank() == 0 ? &b : nullptr, nullptr, d);
    CHECK(out.distributed.loop == loop);
    if (world_rank() != 0) continue;
    for (const RankSummary& r : out.distributed.per_rank) {
      CAPTURE(r.rank);
      REQUIRE(r.times.products > 0);
      CHECK(r.times.halo_bytes_received ==
            std::size_t(r.times.products) * std::size_t(r.halo_size) * sizeof(double));
    }
    per_product[loop == DistLoop::plain] = out.distributed.halo_bytes_per_product();
  }
  if (world_rank() == 0) CHECK(per_product[0] == per_product[1]);
}

TEST_CASE("waits split: a rank that arrives late is the others' imbalance, not transfer") {
  const CsrMatrix<double> A = poisson2d(20);
  const int ranks = world_size(), rank = world_rank();
  const RowBlocks blocks = partition_by_rows(A.rows, ranks);
  const index_t first = blocks.first(rank), n = blocks.rows(rank);
  const RankBlock block = split_rows(row_block(A, first, n), first, A.rows);
  RankSetup setup;
  setup.backend.device = Device::omp;
  setup.backend.threads = 1;
  setup.precond = parse_precond("jacobi");
  CpuRankOps ops(MPI_COMM_WORLD, block, blocks, setup);
  REQUIRE(ops.has_fused_passes());
  ops.clear_times();
  constexpr auto kLate = std::chrono::milliseconds(40);
  std::vector<double> x(std::size_t(n), 1.0), y(std::size_t(n), 0.0);
  // Rank 0 posts its halo and enters the reduction 40 ms after the others.
  if (rank == 0) std::this_thread::sleep_for(kLate);
  ops.multiply(x.data(), y.data());
  double sum = double(rank);
  if (rank == 0) std::this_thread::sleep_for(kLate);
  ops.reduce(&sum, 1);
  CHECK(sum == doctest::Approx(double(ranks) * (ranks - 1) / 2));
  const RankTimes t = ops.times();
  CHECK(t.halo_imbalance >= 0);
  CHECK(t.halo_imbalance <= t.halo_wait);
  CHECK(t.allreduce_imbalance >= 0);
  CHECK(t.allreduce_imbalance <= t.allreduce);
  const double late = std::chrono::duration<double>(kLate).count();
  if (rank == 0) {  // the late rank waits for nobody
    CHECK(t.allreduce_imbalance < 0.5 * late);
    CHECK(t.halo_imbalance < 0.5 * late);
  } else {  // the others wait for it, twice
    CHECK(t.allreduce_imbalance > 0.5 * late);
    if (!block.halo_columns.empty() && blocks.first(rank) == blocks.rows(0))  // rank 0's neighbour
      CHECK(t.halo_imbalance > 0.5 * late);
  }
}
