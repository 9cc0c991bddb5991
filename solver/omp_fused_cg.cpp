#include "solver/omp_fused_cg.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <optional>
#include <vector>

#include "solver/fused_cpu_passes.hpp"
#include "solver/serial_fused_cg.hpp"
#include "solver/team_barrier.hpp"

namespace cgs {
namespace {

using Clock = std::chrono::steady_clock;

// One part's partial sums, on a cache line of its own.
struct alignas(64) Partial {
  double pq = 0, rr = 0, rz = 0;
};

// Every thread adds the partials in the same order, so every thread gets the same bits and
// takes the same decisions without another barrier. p.q and (r.r, r.z) live in separate fields:
// a thread may already write its next r.r while a slower one still sums p.q.
double sum_pq(const std::vector<Partial>& partial) {
  double pq = 0;
  for (const Partial& p : partial) pq += p.pq;
  return pq;
}

fused::Sums sum_rr_rz(const std::vector<Partial>& partial) {
  fused::Sums s;
  for (const Partial& p : partial) {
    s.rr += p.rr;
    s.rz += p.rz;
  }
  return s;
}

// The team loop for one stored format. Part p covers rows [part_begin(p), part_begin(p + 1)).
template <typename T, typename Matrix>
void run_team(const Matrix& A, const std::vector<fused::RowRange>& parts, fused::Vectors<T> v,
              double rr_threshold, long max_iters, fused::Outcome& out) {
  const int part_count = int(parts.size());
  std::vector<Partial> partial(part_count);
  std::optional<TeamBarrier> barrier;  // sized for the team OpenMP actually gives
#pragma omp parallel num_threads(part_count) firstprivate(v)
  {
    const int team = omp_get_num_threads(), me = omp_get_thread_num();
#pragma omp single
    barrier.emplace(team);  // (the end of single waits for it)
    std::uint64_t barriers_passed = 0;
    auto sync = [&] { barrier->wait(me, ++barriers_passed); };
    // Each thread takes the parts me, me + team, ...: all of them when the team is full.
    auto for_my_parts = [&](auto&& body) {
      for (int part = me; part < part_count; part += team) body(parts[part], partial[part]);
    };
    auto update_my_x = [&](T alpha) {
      for_my_parts([&](const fused::RowRange& rows, Partial&) {
        fused::update_x(rows.first, rows.last, alpha, v.p_new, v.x);
      });
    };

    for_my_parts([&](const fused::RowRange& rows, Partial& sums) {
      const fused::Sums s = fused::start_pass(A, rows, v);
      sums.rr = s.rr;
      sums.rz = s.rz;
    });
    sync();
    fused::Sums s = sum_rr_rz(partial);
    double rz = s.rz;
    bool done = s.rr <= rr_threshold;
    if (me == 0) out.record(0, s.rr, rr_threshold);

    T alpha_prev = 0, beta = 0;
    for (long k = 1; k <= max_iters && !done; ++k) {
      for_my_parts([&](const fused::RowRange& rows, Partial& sums) {
        sums.pq = fused::pass_a(A, rows, v, beta, alpha_prev);
      });
      sync();
      const double pq = sum_pq(partial);
      if (fused::breaks_down(pq, rz)) {  // every thread sees the same pq and leaves together
        if (me == 0) out.breakdown(k, pq, rz);
        break;
      }
      const T alpha = T(rz / pq);
      for_my_parts([&](const fused::RowRange& rows, Partial& sums) {
        const fused::Sums mine = fused::pass_b(rows.first, rows.last, alpha, v);
        sums.rr = mine.rr;
        sums.rz = mine.rz;
      });
      sync();
      s = sum_rr_rz(partial);
      const double rz_old = rz;
      rz = s.rz;
      if (!std::isfinite(s.rr)) {
        update_my_x(alpha);
        if (me == 0) out.breakdown(k, pq, s.rr);
        break;
      }
      done = s.rr <= rr_threshold;
      if (me == 0) out.record(k, s.rr, rr_threshold);
      if (done || k == max_iters) {
        update_my_x(alpha);
        break;
      }
      beta = T(rz / rz_old);
      alpha_prev = alpha;
      std::swap(v.p_old, v.p_new);
    }
  }
}

template <typename T, typename Matrix>
std::vector<fused::RowRange> part_ranges(const SpmvBackend<T>& backend, const Matrix& A) {
  std::vector<fused::RowRange> ranges;
  const int parts = backend.parts();
  for (int p = 0; p < parts; ++p) {
    const index_t last = p + 1 < parts ? backend.part_begin(p + 1) : backend.rows();
    ranges.push_back(fused::row_range(A, backend.part_begin(p), last));
  }
  return ranges;
}

template <typename T>
CgResult team_conjugate_gradient(SpmvBackend<T>& backend, const T* inv_diag, const T* b, T* x,
                                 const CgOptions& options) {
  const index_t n = backend.rows();
  const fused::Limits limits = fused::limits(b, n, options);
  if (limits.rhs_norm == 0) return fused::zero_rhs(n, x);

  fused::Workspace<T> w(n, inv_diag != nullptr);
  fused::Outcome out(options, limits.rhs_norm, limits.max_iters);
  Clock::time_point begin;
  fused::visit(backend.host_matrix(), [&](const auto& matrix) {
    const std::vector<fused::RowRange> parts = part_ranges(backend, matrix);
    begin = Clock::now();
    run_team(matrix, parts, w.vectors(b, inv_diag, x), limits.rr_threshold, limits.max_iters, out);
  });
  return out.result(std::chrono::duration<double>(Clock::now() - begin).count());
}

std::string micro(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f us", seconds * 1e6);
  return text;
}

template <typename T>
CgResult run_loop(SpmvBackend<T>& A, bool team, const T* inv_diag, const T* b, T* x,
                  const CgOptions& options) {
  if (team) return team_conjugate_gradient(A, inv_diag, b, x, options);
  return serial_fused_conjugate_gradient(A.host_matrix(), A.rows(), inv_diag, b, x, options);
}

// The fastest of a few short solves from x = 0 (tol 0, kTrialIterations iterations), per
// iteration, after one to warm up; infinity when no iteration ran (b = 0, a breakdown at once).
template <typename T>
double time_loop(SpmvBackend<T>& A, bool team, const T* inv_diag, const T* b) {
  constexpr int kTrialIterations = 10, kTimedTrials = 3;
  CgOptions trial;
  trial.tol = 0;
  trial.atol = 0;
  trial.max_iters = kTrialIterations;
  std::vector<T> x(std::size_t(A.rows()));
  double fastest = std::numeric_limits<double>::infinity();
  for (int run = 0; run <= kTimedTrials; ++run) {
    std::fill(x.begin(), x.end(), T(0));
    const CgResult r = run_loop(A, team, inv_diag, b, x.data(), trial);
    if (run > 0 && r.iterations > 0) fastest = std::min(fastest, r.solve_seconds / r.iterations);
  }
  return fastest;
}

}  // namespace

template <typename T>
ResolvedCpuLoop resolve_fused_cpu_loop(SpmvBackend<T>& A, const T* inv_diag, const T* b,
                                       FusedCpuLoop choice) {
  if (!has_fused_cpu_loop(A))
    throw std::invalid_argument("the fused CPU CG loop needs a CPU backend, not " + A.name());
  if (A.device() != Device::omp) return {false, ""};  // the serial device: nothing to say
  if (choice == FusedCpuLoop::serial) return {false, "asked for"};
  if (A.parts() <= 1) return {false, "one thread"};
  if (choice == FusedCpuLoop::team) return {true, ""};
  const long work = long(A.nnz()) + A.rows();
  if (!team_choice_is_timed(work)) {
    if (work < kNeverTeamWork) return {false, "n too small for threads"};
    return {true, ""};
  }
  const double serial = time_loop(A, false, inv_diag, b), team = time_loop(A, true, inv_diag, b);
  // The team must win clearly: one thread is the steadier choice (nothing to wait for when the
  // machine gets busy), and short trials of loops a microsecond apart can pick either.
  constexpr double kTeamMustBeFaster = 0.9;
  if (team < kTeamMustBeFaster * serial) return {true, ""};
  return {false, "a team of " + std::to_string(A.parts()) + " timed " + micro(team) + " against " +
                     micro(serial) + " per iteration (it must be 10% faster)"};
}

template <typename T>
CgResult run_fused_cpu_loop(SpmvBackend<T>& A, const ResolvedCpuLoop& resolved, const T* inv_diag,
                            const T* b, T* x, const CgOptions& options, std::string* loop) {
  if (loop)
    *loop = resolved.team || resolved.serial_because.empty()
                ? "fused"
                : "fused (serial: " + resolved.serial_because + ")";
  return run_loop(A, resolved.team, inv_diag, b, x, options);
}

template <typename T>
CgResult omp_fused_conjugate_gradient(SpmvBackend<T>& A, const T* inv_diag, const T* b, T* x,
                                      const CgOptions& options, std::string* loop,
                                      FusedCpuLoop choice) {
  const ResolvedCpuLoop resolved = resolve_fused_cpu_loop(A, inv_diag, b, choice);
  return run_fused_cpu_loop(A, resolved, inv_diag, b, x, options, loop);
}

#define CGS_FUSED_CPU_LOOP(T)                                                             \
  template ResolvedCpuLoop resolve_fused_cpu_loop(SpmvBackend<T>&, const T*, const T*,    \
                                                  FusedCpuLoop);                          \
  template CgResult run_fused_cpu_loop(SpmvBackend<T>&, const ResolvedCpuLoop&, const T*, \
                                       const T*, T*, const CgOptions&, std::string*);
CGS_FUSED_CPU_LOOP(float)
CGS_FUSED_CPU_LOOP(double)
#undef CGS_FUSED_CPU_LOOP

template CgResult omp_fused_conjugate_gradient(SpmvBackend<float>&, const float*, const float*,
                                               float*, const CgOptions&, std::string*,
                                               FusedCpuLoop);
template CgResult omp_fused_conjugate_gradient(SpmvBackend<double>&, const double*, const double*,
                                               double*, const CgOptions&, std::string*,
                                               FusedCpuLoop);

}  // namespace cgs
