// The distributed solve on the ranks of this mpirun (1, 2 or 4 in CTest) against the
// single-process solve of the same system: the same iterations (within 2% and 1: the sums are
// rounded in another order) and the same x to the tolerance.
#include <doctest/doctest.h>

#include <string>

#include "distributed_test_util.hpp"
#include "formats/generators.hpp"
#include "solver/distributed/mpi_comm.hpp"
#include "test_matrices.hpp"

using namespace cgs;
using namespace cgs::dist;
using namespace cgs::testing;

namespace {

const std::string kData = CGSOLVE_SOURCE_DIR "/data";

struct System {
  std::string name;
  CsrMatrix<double> A;
  std::vector<double> b;
};

std::vector<System> systems() {
  std::vector<System> list;
  auto add = [&](std::string name, CsrMatrix<double> A, std::vector<double> b = {}) {
    if (b.empty()) b = dense_product(A, random_vector(std::size_t(A.rows), 5));
    list.push_back({std::move(name), std::move(A), std::move(b)});
  };
  add("poisson2d 40x40", poisson2d(40));
  const CsrMatrix<double> exnet = read_matrix_market(kData + "/systems/Exnet_EXN_step3.mtx.gz");
  add("EPANET Exnet", exnet,
      read_vector_market(kData + "/systems/Exnet_EXN_step3_b.mtx.gz", exnet.rows));
  add("random irregular SPD", random_spd(700, 5, 21));
  return list;
}

bool iterations_agree(long spread, long alone, double slack = 0.02) {
  return std::abs(spread - alone) <= std::max(1.0, slack * double(alone));
}

bool is_epanet(const System& s) { return s.name.find("EPANET") != std::string::npos; }

// The EPANET system is so ill-conditioned (plain CG: 12,550 iterations for 1,891 unknowns) that
// the order of a sum moves the iteration count by several percent: the project's own
// single-process loops differ by 6% on it (fused 2,121, generic 2,001 with Jacobi), and so do
// 2 and 4 ranks (2,015 and 2,123). On it the count is held to 8% and x to what the tolerance
// implies whatever the conditioning: ||A (x - x_alone)|| <= ||r|| + ||r_alone|| <= 2 tol ||b||.
// The other systems: 2% (and 1), and x itself to 1e-6.
// Unpreconditioned, the fused distributed loop (its p.q summed as the local rows' part plus the
// halo rows' part, another rounding) took 13,888 and 13,950 iterations on 2 and 4 ranks against
// the generic loop's 12,550 (the plain loop: 12,009 and 12,643; the single process's fused loop
// 12,231): on this system alone the count is held to 15% there.
void check_against_alone(const System& s, const DistributedRequest& d) {
  const Solved alone = solve_alone(s.A, s.b, d.request);
  const Solved spread = solve_spread(s.A, s.b, d);
  const bool chaotic =
      is_epanet(s) && d.request.precond.is("none") && spread.loop == DistLoop::fused;
  CHECK(spread.ok == alone.ok);
  CHECK(iterations_agree(spread.iterations, alone.iterations,
                         chaotic        ? 0.15
                         : is_epanet(s) ? 0.08
                                        : 0.02));
  if (world_rank() != 0) return;  // x and the report are rank 0's
  REQUIRE(spread.x.size() == alone.x.size());
  const double tol = d.request.cg.tol;
  CHECK(spread.true_residual <= 1.5 * tol);
  std::vector<double> difference(spread.x.size());
  for (std::size_t i = 0; i < difference.size(); ++i) difference[i] = spread.x[i] - alone.x[i];
  CHECK(norm2(multiply(s.A, difference)) <= 2.5 * tol * norm2(s.b));
  if (!is_epanet(s)) CHECK(relative_difference(spread.x, alone.x) < 1e-6);
}

}  // namespace

TEST_CASE("distributed CG equals the single-process CG (classic, no preconditioner)") {
  for (const System& s : systems()) {
    for (DistLoop loop : {DistLoop::fused, DistLoop::plain}) {
      CAPTURE(s.name);
      CAPTURE(world_size());
      CAPTURE(to_string(loop));
      DistributedRequest d;
      d.request = cpu_request("none", 1e-10);
      d.loop = loop;
      check_against_alone(s, d);
    }
  }
}

TEST_CASE("distributed Jacobi equals the single-process Jacobi; ic0 runs as block-Jacobi") {
  for (const System& s : systems()) {
    CAPTURE(s.name);
    DistributedRequest d;
    d.request = cpu_request("jacobi", 1e-10);
    check_against_alone(s, d);
    // ic0 per rank: on one rank exactly ic0; on more a weaker preconditioner, still solving.
    d.request = cpu_request("ic0", 1e-10);
    const Solved spread = solve_spread(s.A, s.b, d);
    CHECK(spread.ok);
    if (world_rank() == 0) CHECK(spread.true_residual <= 1.5e-10);
    if (world_size() == 1) {
      const Solved alone = solve_alone(s.A, s.b, d.request);
      CHECK(iterations_agree(spread.iterations, alone.iterations, is_epanet(s) ? 0.08 : 0.02));
    }
  }
}

// The EPANET system is the hard case: unpreconditioned, classic CG needs 12,550 iterations for
// 1,891 unknowns, and Chronopoulos-Gear's p.Ap recurrence cancels (docs/DISTRIBUTED.md), so
// single-reduction is checked on it with Jacobi only, where the two agree to the iteration without
// residual replacement and within 10% with it (2,111 against 2,001 on this machine: each
// replacement perturbs the recurrences of a system this ill-conditioned).
TEST_CASE("single-reduction CG matches classic CG: iterations within 2%, same x") {
  constexpr int kNever = 1 << 30;
  for (const System& s : systems()) {
    CAPTURE(s.name);
    const bool epanet = is_epanet(s);
    for (const char* precond : {"none", "jacobi"}) {
      if (epanet && std::string(precond) == "none") continue;
      CAPTURE(precond);
      DistributedRequest d;
      d.request = cpu_request(precond, 1e-10);
      const Solved classic = solve_spread(s.A, s.b, d);
      d.variant = CgVariant::single_reduction;
      for (int replace_every : {0, kNever}) {  // by the criterion; never
        CAPTURE(replace_every);
        d.replace_every = replace_every;
        const Solved single = solve_spread(s.A, s.b, d);
        CHECK(single.ok);
        // EPANET: the criterion's replacements perturb it (2,111 against 2,001 on one rank).
        CHECK(iterations_agree(single.iterations, classic.iterations, epanet ? 0.1 : 0.02));
        if (world_rank() == 0) {
          CHECK(relative_difference(single.x, classic.x) < (epanet ? 1e-1 : 1e-6));
          CHECK(single.true_residual <= 1.5e-10);
        }
      }
    }
  }
}

TEST_CASE("the formats and row orders of the single process work per rank") {
  const System s{"poisson2d 30x30", poisson2d(30), {}};
  const std::vector<double> b = dense_product(s.A, random_vector(900, 9));
  DistributedRequest d;
  d.request = cpu_request("jacobi", 1e-10);
  const Solved reference = solve_alone(s.A, b, d.request);
  for (Format format : {Format::csr, Format::ell, Format::hll, Format::coo}) {
    CAPTURE(to_string(format));
    d.request.backend.format = format;
    d.request.sort_rows = format == Format::hll;
    d.request.rcm = format == Format::ell;
    const Solved spread = solve_spread(s.A, b, d);
    CHECK(iterations_agree(spread.iterations, reference.iterations));
    if (world_rank() == 0) CHECK(relative_difference(spread.x, reference.x) < 1e-6);
  }
}

TEST_CASE("METIS partition: the same answer as row blocks") {
  if (!metis_available()) return;
  const CsrMatrix<double> A = random_spd(600, 4, 33);
  const std::vector<double> b = dense_product(A, random_vector(600, 2));
  DistributedRequest d;
  d.request = cpu_request("jacobi", 1e-10);
  const Solved blocks = solve_spread(A, b, d);
  d.partition = PartitionKind::metis;
  const Solved metis = solve_spread(A, b, d);
  CHECK(iterations_agree(metis.iterations, blocks.iterations));
  if (world_rank() == 0) CHECK(relative_difference(metis.x, blocks.x) < 1e-6);
}

TEST_CASE("edge cases: more ranks than rows, a rank without rows, n = 1, b = 0") {
  DistributedRequest d;
  d.request = cpu_request("jacobi", 1e-12);
  for (index_t m : {1, 2}) {  // n = 1 and n = 4 (with 4 ranks one row each; a 2x2 below)
    CAPTURE(m);
    const CsrMatrix<double> A = poisson2d(m);
    const std::vector<double> b = dense_product(A, std::vector<double>(A.rows, 1.0));
    const Solved spread = solve_spread(A, b, d);
    CHECK(spread.ok);
    if (world_rank() == 0)
      for (double xi : spread.x) CHECK(xi == doctest::Approx(1.0).epsilon(1e-10));
  }
  // Three rows on four ranks: at least one rank owns nothing and still takes part.
  const CsrMatrix<double> A =
      csr_from_triplets<double>(3, 3, {0, 0, 1, 1, 2}, {0, 1, 0, 1, 2}, {4, -1, -1, 4, 4});
  const Solved three = solve_spread(A, {3, 3, 4}, d);
  CHECK(three.ok);
  if (world_rank() == 0) {
    REQUIRE(three.x.size() == 3);
    for (double xi : three.x) CHECK(xi == doctest::Approx(1.0).epsilon(1e-10));
  }
  const Solved zero = solve_spread(A, {0, 0, 0}, d);
  CHECK(zero.ok);
  if (world_rank() == 0)
    for (double xi : zero.x) CHECK(xi == 0.0);
}

TEST_CASE("halo exchange: each rank receives exactly its halo, and nothing more moves") {
  const CsrMatrix<double> A = random_spd(400, 6, 5);
  const int ranks = world_size(), rank = world_rank();
  const RowBlocks blocks = partition_by_nonzeros(A.row_ptr, ranks);
  const index_t first = blocks.first(rank), n = blocks.rows(rank);
  RankBlock b = split_rows(row_block(A, first, n), first, A.rows);
  if (n > 0) reorder_locally(b, reverse_cuthill_mckee(b.local));  // sends must follow it
  MpiHalo halo(MPI_COMM_WORLD, b, blocks);
  // x_i = global row number: the halo then holds the global columns it was sent.
  std::vector<double> x(static_cast<std::size_t>(n));
  for (index_t k = 0; k < n; ++k)
    x[k] = double(first + (b.order.empty() ? k : b.order.new_to_old[k]));
  halo.start(x.data());
  halo.finish();
  REQUIRE(halo.halo_size() == b.halo_columns.size());
  for (std::size_t h = 0; h < b.halo_columns.size(); ++h)
    CHECK(halo.values()[h] == double(b.halo_columns[h]));
  CHECK(halo.bytes_received() == b.halo_columns.size() * sizeof(double));
  // What all ranks send is what all ranks receive: no entry moves that no halo names.
  double moved[2] = {double(halo.bytes_sent()), double(halo.bytes_received())};
  allreduce_sum(MPI_COMM_WORLD, moved, 2);
  CHECK(moved[0] == moved[1]);
  for (const HaloSend& send : halo.sends()) CHECK(send.rank != rank);
}

TEST_CASE("generated per rank: each rank's own rows give the answer of the scattered matrix") {
  const std::string spec = "gen:poisson3d:12";
  REQUIRE(generated_per_rank(spec));
  CHECK_FALSE(generated_per_rank("gen:waternet:500"));
  const CsrMatrix<double> A = generate_matrix(spec);
  const std::vector<double> b = dense_product(A, std::vector<double>(A.rows, 1.0));
  DistributedRequest d;
  d.request = cpu_request("jacobi", 1e-10);
  const Solved scattered = solve_spread(A, b, d);
  MatrixStats stats;
  const DistributedOutcome generated = solve_distributed_generated(session(), spec, d, &stats);
  CHECK(iterations_agree(generated.solve.cg.iterations, scattered.iterations));
  if (world_rank() == 0) {
    CHECK(relative_difference(generated.x, scattered.x) < 1e-8);
    CHECK(stats.rows == A.rows);
    CHECK(stats.nnz == A.nnz());
    CHECK(stats.min_row_length == 4);
    CHECK(stats.max_row_length == 7);
  }
}
