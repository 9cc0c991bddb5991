// The batched sparse Cholesky on the device (network/batch_cholesky_gpu.cu) against the schedule's
// host executor (network/cholesky_schedule.hpp, itself equal to precond::SparseCholesky bit for bit:
// tests/network/test_cholesky_schedule.cpp) on EPANET's trial systems with perturbed values, a
// failing pivot in one system of the batch, batch sizes 1, 31, 33 and 1000; and the GPU study on
// the batched Cholesky against the CPU direct study (Net3 fire flow, closure, PDA).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "gpu_test_util.hpp"
#include "network/batch_cg.hpp"
#include "network/batch_cholesky.hpp"
#include "network/cholesky_schedule.hpp"
#include "network/inp_reader.hpp"
#include "network/schedule_test_systems.hpp"
#include "network/study.hpp"
#include "network/study_test_util.hpp"

using namespace cgs;
using namespace cgs::net;

namespace {

std::unique_ptr<LinearSolver> direct() { return make_direct_solver(); }

// System s of a batch: A perturbed by seed s (system `failing`: row `bad_row`'s diagonal -1).
CsrMatrix<double> batch_member(const CsrMatrix<double>& A, int s, int failing, index_t bad_row) {
  CsrMatrix<double> M = test::perturbed(A, 1000u + static_cast<unsigned>(s));
  return s == failing ? test::with_diagonal(std::move(M), bad_row, -1.0) : M;
}

}  // namespace

TEST_CASE("GPU batch Cholesky: the host executor's factor and solution bit for bit, per system") {
  CGS_REQUIRE_GPU_OR_SKIP();
  for (const test::TrialSystem& system : test::trial_systems()) {
    CAPTURE(system.name);
    precond::SparseCholesky analysis;
    analysis.analyse(system.A, precond::minimum_degree_order(system.A));
    const CholeskySchedule schedule = compile_schedule(analysis, system.A.nnz());
    const auto device = make_batch_cholesky(schedule.view());
    CholeskyScheduleExecutor host(schedule);
    const bool large = system.A.rows > 10000;
    for (const int count : {1, 31, 33, large ? 300 : 1000}) {
      CAPTURE(count);
      const int failing = count > 1 ? count / 2 : -1;  // one system of the batch fails
      const index_t bad_row = system.A.rows / 3;
      const std::size_t n = system.A.rows, nnz = system.A.values.size();
      std::vector<double> values(nnz * count), b(n * count), x(n * count, -5.0);
      for (int s = 0; s < count; ++s) {
        const CsrMatrix<double> M = batch_member(system.A, s, failing, bad_row);
        std::copy(M.values.begin(), M.values.end(), values.begin() + s * nnz);
        for (std::size_t i = 0; i < n; ++i) b[s * n + i] = system.b[i] * (1.0 + 0.01 * s);
      }
      std::vector<int> failed(count, -7);
      device->factorize_solve(values.data(), b.data(), x.data(), count, failed.data());
      CHECK(device->kernel_ms() > 0);
      int mismatches = 0;
      for (int s = 0; s < count; ++s) {
        CAPTURE(s);
        const CsrMatrix<double> M = batch_member(system.A, s, failing, bad_row);
        int host_failed = -1;
        const bool ok = host.factorize(M, &host_failed);
        CHECK(ok == (s != failing));
        CHECK(failed[s] == (ok ? -1 : host_failed));
        const std::vector<double> got(x.begin() + s * n, x.begin() + (s + 1) * n);
        if (!ok) {
          CHECK(got == std::vector<double>(n, -5.0));  // a failed system's x is left as it was
          continue;
        }
        std::vector<double> want;
        host.solve(std::vector<double>(b.begin() + s * n, b.begin() + (s + 1) * n), want);
        mismatches += got != want;
        if (s % 97 == 0) CHECK(gputest::relative_difference(got, want) <= 1e-13);
      }
      CHECK(mismatches == 0);  // the same operations in the same order, no contraction
    }
  }
}

TEST_CASE("GPU batch Cholesky study: the CPU direct study's rows (Net3 fire flow, closure, PDA)") {
  CGS_REQUIRE_GPU_OR_SKIP();
  struct Case {
    StudyKind kind;
    bool pda;
    int batch_size;
  };
  for (const Case c : {Case{StudyKind::fireflow, false, 0}, Case{StudyKind::closure, false, 0},
                       Case{StudyKind::fireflow, true, 0}, Case{StudyKind::closure, false, 7}}) {
    CAPTURE(to_string(c.kind));
    CAPTURE(c.pda);
    CAPTURE(c.batch_size);
    Network net = read_inp(std::string(CGSOLVE_SOURCE_DIR) + "/data/networks/Net3.inp");
    if (c.pda) {
      net.options.demand.model = DemandModel::pda;
      net.options.demand.required_pressure = 20;
    }
    const StudyOptions o = test::study_options(c.kind);
    StudyOptions g = o;
    g.run.batch = c.batch_size;
    g.run.gpu = true;
    g.run.batch_engine = BatchEngineChoice::cholesky;
    const StudyResults cpu = run_study(net, direct, o);
    const StudyResults gpu = run_study(net, direct, g);
    CHECK(gpu.solver_name.find("on the GPU, one thread a system") != std::string::npos);
    CHECK(gpu.batch.launches > 0);
    const int compared = test::check_same_rows(net, c.kind, gpu, cpu);
    CHECK(compared >= static_cast<int>(gpu.scenarios.size()) * 3 / 4);
    // The same factorisation to the bit: the same CSV.
    CHECK(test::study_csv_text(net, gpu, g) == test::study_csv_text(net, cpu, o));
  }
}
