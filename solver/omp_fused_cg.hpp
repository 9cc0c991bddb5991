// The fused CPU CG loops, and which one runs.
//
// The generic conjugate_gradient (solver/cg.hpp) calls the SpMV and four vector operations per
// iteration, each its own call (on the OpenMP device, its own parallel region: five fork/joins
// per iteration, which dominate on the small systems of water networks). The fused loops make an
// iteration two passes over the rows (solver/fused_cpu_passes.hpp) with the format's row
// products inlined:
// - serial (solver/serial_fused_cg.hpp): one thread, no OpenMP at all; the serial device, and
//   the OpenMP device when a team does not pay for the system (below);
// - team: one OpenMP team for the whole solve; each thread owns the rows of one SpMV part and
//   the threads meet at two barriers per iteration, after p.q and after r.r and r.z.
// Same algorithm and scalars as the generic loop, so the iterates agree up to rounding; the
// scalars are on the host, so convergence is checked at every iteration (converged_at exact,
// no iteration past it). spmv_seconds stays empty: the product is not a step of its own.
#pragma once

#include <string>

#include "solver/cg.hpp"

namespace cgs {

enum class FusedCpuLoop { automatic, serial, team };

// On the OpenMP device, `automatic` runs systems below kNeverTeamWork stored entries plus rows
// serially and above kAlwaysTeamWork in a team; in between it times both (a few 10-iteration
// solves each, well under a millisecond on the EPANET systems) and runs the team only when it
// is at least 10% faster. No formula of the size did: a team iteration's fixed cost (barriers,
// and the cache lines of p that the neighbouring threads wrote) is 2-4 us with 16 threads on an
// H200 host, but 10-20 us with 2 threads on a 2-core VM, where an EPANET system whose rows reach
// all over the vector (Exnet, 8,612 entries and rows) ran 2.4x slower in a team, while a 2D
// Poisson matrix of half its size ran faster with 16 threads on the host (bench/teamsweep).
inline constexpr long kNeverTeamWork = 1000;
inline constexpr long kAlwaysTeamWork = 200000;

// Whether `automatic` has to time the loops for a system of `work` entries plus rows (else the
// size decides at once).
inline bool team_choice_is_timed(long work) {
  return work >= kNeverTeamWork && work < kAlwaysTeamWork;
}

// Which loop a solve runs: the team, or serially and why (empty on the serial device).
struct ResolvedCpuLoop {
  bool team = false;
  std::string serial_because;
};

// Whether the fused loops can run on this backend: a CPU backend that exposes its matrix.
template <typename T>
bool has_fused_cpu_loop(const SpmvBackend<T>& A) {
  return !A.host_matrix().empty();
}

// Which loop `choice` means for this system (see kNeverTeamWork); b and inv_diag (null: plain
// CG) as for the solve, since `automatic` may time short solves on them.
template <typename T>
ResolvedCpuLoop resolve_fused_cpu_loop(SpmvBackend<T>& A, const T* inv_diag, const T* b,
                                       FusedCpuLoop choice = FusedCpuLoop::automatic);

// The resolved loop. Vectors are host memory; x holds the initial guess. `loop`, if given, says
// which ran: "fused", or "fused (serial: ...)" and why.
template <typename T>
CgResult run_fused_cpu_loop(SpmvBackend<T>& A, const ResolvedCpuLoop& resolved, const T* inv_diag,
                            const T* b, T* x, const CgOptions& options,
                            std::string* loop = nullptr);

// Both in one: the fused loop for a CPU backend (has_fused_cpu_loop).
template <typename T>
CgResult omp_fused_conjugate_gradient(SpmvBackend<T>& A, const T* inv_diag, const T* b, T* x,
                                      const CgOptions& options, std::string* loop = nullptr,
                                      FusedCpuLoop choice = FusedCpuLoop::automatic);

}  // namespace cgs
