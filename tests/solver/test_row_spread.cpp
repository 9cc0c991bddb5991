// The default GPU plan on irregular rows (issue 28): cheap row statistics (formats/stats.hpp's
// RowSpread) send CSR to the load-balanced stream kernel in the generic loop where a row
// function would serialise long rows, and leave regular matrices (grids, EPANET's systems) alone.
// The plan is made without a GPU: choosing needs no device.
#include <doctest/doctest.h>

#include <string>

#include "formats/generators.hpp"
#include "formats/matrix_market.hpp"
#include "formats/stats.hpp"
#include "solver/plan.hpp"
#include "test_matrices.hpp"

using namespace cgs;
using namespace cgs::testing;

namespace {

// The plan's GPU kernel and its reasons (the loop is chosen on the device: it asks for its
// occupancy).
Plan gpu_plan(const CsrMatrix<double>& A, GpuLoopAsk loop = GpuLoopAsk::automatic) {
  SolveRequest r;
  r.backend.device = Device::gpu;
  r.backend.format = Format::csr;
  r.gpu_loop = loop;
  Plan plan = plan_as_asked(r);
  plan.kernel = choose_gpu_kernel(r, compute_stats(A, 32), row_spread(A), plan);
  return plan;
}

// The whole plan (kernel and loop): for the kernels whose loop needs no device query.
Plan whole_gpu_plan(const CsrMatrix<double>& A) {
  SolveRequest r;
  r.backend.device = Device::gpu;
  r.backend.format = Format::csr;
  return make_plan(r, A);
}

bool says(const Plan& plan, const std::string& text) {
  for (const std::string& reason : plan.reasons)
    if (reason.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("row spread: one row with half the nonzeros, a power-law graph, regular matrices") {
  const RowSpread half = row_spread(testing::hub_and_chain(1000));
  CHECK(half.longest == 1000);
  CHECK(half.long_share > 0.15);  // 999 of about 5,000 entries
  CHECK(half.irregular());
  CHECK(row_spread(generate_matrix("gen:powerlaw:20000")).irregular());
  CHECK_FALSE(row_spread(poisson2d(40)).irregular());
  CHECK_FALSE(row_spread(generate_matrix("gen:waternet:5000")).irregular());
  CHECK_FALSE(row_spread(read_matrix_market(std::string(CGSOLVE_SOURCE_DIR) +
                                            "/data/systems/Exnet_EXN_step3.mtx.gz"))
                  .irregular());
  CHECK_FALSE(row_spread(read_matrix_market(std::string(CGSOLVE_SOURCE_DIR) +
                                            "/data/matrices/bcsstk13.mtx"))
                  .irregular());
  // n = 1 and an empty matrix's rows: nothing long.
  CHECK_FALSE(row_spread(poisson2d(1)).irregular());
}

TEST_CASE("the default GPU plan takes the load-balanced kernel where rows are long, and says so") {
  for (const CsrMatrix<double>& A :
       {testing::hub_and_chain(1000), generate_matrix("gen:powerlaw:20000")}) {
    const Plan plan = whole_gpu_plan(A);
    // Up to 1M nonzeros: the balanced kernel in the fused graph loop (BENCHMARKS.md 12h).
    CHECK(plan.kernel == "balanced");
    CHECK(plan.loop == Loop::graph);
    CHECK(says(plan, "load-balanced"));
    CHECK(says(plan, "would serialise"));
    CHECK(says(plan, "a warp per unit of nonzeros"));
    CHECK(says(plan, "ran faster as graph kernels"));
  }
  // Past 1M nonzeros (1.4M here): stream in the generic loop.
  const Plan big = whole_gpu_plan(generate_matrix("gen:powerlaw:200000"));
  CHECK(big.kernel == "stream");
  CHECK(big.loop == Loop::generic);
  CHECK(says(big, "over 1,000,000 nonzeros the generic loop with stream"));
  // Regular rows of 42 entries on average (bcsstk13): the generic loop's stream kernel too.
  const Plan long_rows =
      gpu_plan(read_matrix_market(std::string(CGSOLVE_SOURCE_DIR) + "/data/matrices/bcsstk13.mtx"));
  CHECK(long_rows.kernel == "stream");
  CHECK(says(long_rows, "mean row length 41.8"));
  // Asked for a loop, the plan keeps it and picks that loop's kernel as before.
  CHECK(gpu_plan(testing::hub_and_chain(1000), GpuLoopAsk::generic).kernel == "scalar");
  CHECK(make_plan(
            [] {
              SolveRequest r;
              r.backend.device = Device::gpu;
              r.gpu_loop = GpuLoopAsk::generic;
              return r;
            }(),
            testing::hub_and_chain(1000))
            .loop == Loop::generic);
}

TEST_CASE(
    "HLL on power-law rows: the tail kernel in the generic loop; the plan says where it cuts") {
  SolveRequest r;
  r.backend.device = Device::gpu;
  r.backend.format = Format::hll;
  const Plan plan = make_plan(r, generate_matrix("gen:powerlaw:20000"));
  CHECK(plan.kernel == "thread");
  CHECK(plan.loop == Loop::generic);
  // The tail from the row lengths on the GPU too (its kernel ran on an H100, BENCHMARKS §12b).
  CHECK(says(plan, "continue in a CSR tail summed in load-balanced pieces (HYB)"));
  r.backend.hll_tail = 10;
  CHECK(says(make_plan(r, generate_matrix("gen:powerlaw:20000")),
             "rows over 10 entries continue in a CSR tail"));
  r.backend.hll_tail = -1;
  // On the CPU the plan names the tail too; a regular grid has none.
  r.backend.device = Device::serial;
  CHECK(says(make_plan(r, testing::hub_and_chain(1000)), "(1 of them,"));
  CHECK_FALSE(says(make_plan(r, poisson2d(30)), "tail"));
  r.backend.hll_tail = 5;
  CHECK(says(make_plan(r, poisson2d(30)), "rows over 5 entries continue in a CSR tail"));
}
