// The fused CPU CG loop on one OpenMP team (solver/fused/cpu_loop.hpp).
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>
#include <vector>

#include "solver/cg_result.hpp"
#include "solver/fused/cpu_loop.hpp"
#include "solver/fused/cpu_passes.hpp"
#include "solver/fused/cpu_solve.hpp"
#include "solver/fused/spmv_timer.hpp"
#include "solver/fused/team_barrier.hpp"

namespace cgs::fused {
namespace {


// One part's partial sums, on a cache line of its own.
struct alignas(64) Partial {
  double pq = 0, rr = 0, rz = 0;
};

// Every thread adds the partials in the same order, so every thread gets the same bits and
// takes the same decisions (each on its own copy of the cg::State) without another barrier.
// p.q and (r.r, r.z) live in separate fields: a thread may already write its next r.r while a
// slower one still sums p.q.
double sum_pq(const std::vector<Partial>& partial) {
  double pq = 0;
  for (const Partial& p : partial) pq += p.pq;
  return pq;
}

Sums sum_rr_rz(const std::vector<Partial>& partial) {
  Sums s;
  for (const Partial& p : partial) {
    s.rr += p.rr;
    s.rz += p.rz;
  }
  return s;
}

// The team loop for one stored format. Part p covers rows [parts[p], parts[p + 1]).
template <typename T, typename View>
void run_team(const View& A, const std::vector<index_t>& bounds, Vectors<T> v,
              const precond::HostProgram<T>* program, cg::State& state, Monitor& monitor,
              SpmvTimer& timer) {
  const int part_count = int(bounds.size()) - 1;
  std::vector<Partial> partial(part_count);          // by part
  std::vector<Partial> program_partial(part_count);  // by thread: the program's r.z
  std::optional<TeamBarrier> barrier;                // sized for the team OpenMP actually gives
#pragma omp parallel num_threads(part_count) firstprivate(v)
  {
    const int team = omp_get_num_threads(), me = omp_get_thread_num();
#pragma omp single
    barrier.emplace(team);  // (the end of single waits for it)
    std::uint64_t barriers_passed = 0;
    auto sync = [&] { barrier->wait(me, ++barriers_passed); };
    // Each thread takes the parts me, me + team, ...: all of them when the team is full.
    auto for_my_parts = [&](auto&& body) {
      for (int part = me; part < part_count; part += team)
        body(bounds[part], bounds[part + 1], partial[part]);
    };
    // r.z: from pass B (pointwise preconditioners), or from the preconditioner's program, run
    // an operation at a time between barriers (each thread an even share of its items).
    auto rz_total = [&](double rz_from_passes) {
      if (!program) return rz_from_passes;
      double rz = 0;
      for (int i = 0; i < program->size(); ++i) {
        rz += program->run_part(i, me, team);
        if (i + 1 == program->size()) program_partial[me].rz = rz;
        sync();
      }
      double total = 0;
      for (int t = 0; t < team; ++t) total += program_partial[t].rz;
      return total;
    };
    // A pass giving r.r and r.z over this thread's parts (start_pass, pass_b); the team's totals.
    auto rr_rz_pass = [&](auto&& pass) {
      for_my_parts([&](index_t first, index_t last, Partial& sums) {
        const Sums mine = pass(first, last);
        sums.rr = mine.rr;
        sums.rz = mine.rz;
      });
      sync();
      const Sums total = sum_rr_rz(partial);
      return std::pair<double, double>(total.rr, rz_total(total.rz));
    };
    cg::State s = state;  // every thread decides on its own copy, to the same bits

    const auto [rr0, rz0] =
        rr_rz_pass([&](index_t first, index_t last) { return start_pass(A, first, last, v); });
    bool stop = cg::started(s, rr0, rz0);
    if (me == 0) monitor.record(0, s);

    T alpha_prev = 0, beta = 0;
    for (long k = 1; !stop; ++k) {
      const bool timed = me == 0 && timer.wanted(k);
      if (timed) timer.begin();
      for_my_parts([&](index_t first, index_t last, Partial& sums) {
        sums.pq = pass_a(A, first, last, v, beta, alpha_prev);
      });
      sync();
      if (timed) timer.end(k);
      if (!cg::step(s, sum_pq(partial), k)) break;  // every thread leaves together
      const T alpha = T(s.alpha);
      const auto [rr, rz] =
          rr_rz_pass([&](index_t first, index_t last) { return pass_b(first, last, alpha, v); });
      stop = cg::stepped(s, rr, rz, k);
      if (me == 0) monitor.record(k, s);
      if (stop) {
        for_my_parts([&](index_t first, index_t last, Partial&) {
          update_x(first, last, alpha, v.p_new, v.x);
        });
        break;
      }
      beta = T(s.beta);
      alpha_prev = alpha;
      std::swap(v.p_old, v.p_new);
    }
    if (me == 0) state = s;
  }
}

}  // namespace

template <typename T>
CgResult team_loop(const Rows<T>& rows, index_t n, Preconditioner<T>& M, const T* b, T* x,
                   const CgOptions& options) {
  return solve_fused(rows, n, M, b, x, options,
                     [&](const auto& A, const Vectors<T>& v, const precond::HostProgram<T>* program,
                         cg::State& s, Monitor& monitor, SpmvTimer& timer) {
                       run_team(A, rows.parts, v, program, s, monitor, timer);
                     });
}

template CgResult team_loop(const Rows<float>&, index_t, Preconditioner<float>&, const float*,
                            float*, const CgOptions&);
template CgResult team_loop(const Rows<double>&, index_t, Preconditioner<double>&, const double*,
                            double*, const CgOptions&);

}  // namespace cgs::fused

namespace cgs {

template <typename T>
CgResult fused_cpu_conjugate_gradient(const Rows<T>& rows, index_t n, Preconditioner<T>& M,
                                      const T* b, T* x, const CgOptions& options, bool team) {
  if (team && rows.parts.size() > 2) return fused::team_loop(rows, n, M, b, x, options);
  return fused::serial_loop(rows, n, M, b, x, options);
}

template CgResult fused_cpu_conjugate_gradient(const Rows<float>&, index_t, Preconditioner<float>&,
                                               const float*, float*, const CgOptions&, bool);
template CgResult fused_cpu_conjugate_gradient(const Rows<double>&, index_t,
                                               Preconditioner<double>&, const double*, double*,
                                               const CgOptions&, bool);

}  // namespace cgs
