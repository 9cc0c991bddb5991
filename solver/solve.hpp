// One call from a matrix and right-hand side to a solution: the path cgsolve and netsolve share.
//
// solve_system() sorts rows if asked (P A P^T, b permuted in, x permuted back out), casts to the
// requested precision, builds the SpMV backend and the device's vector operations, copies the
// system to the device once, runs (preconditioned) CG, copies x back once, and checks the true
// residual ||b - A x|| / ||b|| on the host in double against the original matrix.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "formats/csr.hpp"
#include "formats/row_order.hpp"
#include "solver/cg.hpp"
#include "solver/cuda/fused_cg.hpp"
#include "solver/omp_fused_cg.hpp"
#include "spmv/backend.hpp"

namespace cgs {

enum class Preconditioner { none, jacobi };
std::string to_string(Preconditioner p);

struct SolveOptions {
  BackendOptions backend;  // format, device, threads, kernel, hack size, ELL guard
  Precision precision = Precision::double_;
  bool sort_rows = false;
  // Reverse Cuthill-McKee first (formats/row_order.hpp): rows that share entries get nearby
  // numbers. Sorting by length, if asked, then reorders what RCM left equal.
  bool reorder_rcm = false;
  Preconditioner preconditioner = Preconditioner::none;
  CgOptions cg;  // check_every <= 0 picks the device's default
  // On the OpenMP device: one thread team for the whole solve (solver/omp_fused_cg.hpp) instead
  // of the generic loop of solver/cg.hpp, which opens a parallel region per operation.
  bool fused_cpu_loop = true;
  // Which fused loop on the OpenMP device: automatic (serial or team, timed when not obvious;
  // see solver/omp_fused_cg.hpp), or serial or team as asked.
  FusedCpuLoop fused_cpu_choice = FusedCpuLoop::automatic;
  // That choice already resolved (by the inspector, once for all its candidates): used as is.
  std::optional<ResolvedCpuLoop> resolved_cpu_loop;
  // On the GPU: the fused loops of solver/cuda/fused_cg.hpp (persistent kernel or CUDA graph)
  // or the generic loop; automatic picks the fastest measured. A backend whose kernel has no
  // row function (CSR vector kernels, COO, cuSPARSE) always runs the generic loop.
  GpuLoop gpu_loop = GpuLoop::automatic;
  // --format auto / --kernel auto: the inspector of solver/autotune.hpp times a few candidates
  // on the matrix first and picks format, kernel and sorting (auto_format: all three, so
  // sort_rows is its decision; auto_kernel alone: the GPU kernel of backend.format).
  bool auto_format = false;
  bool auto_kernel = false;
  // The host recomputes b - A x in double after the solve (true_relative_residual); the
  // inspector's short timing solves skip it (NaN), since only their time matters.
  bool true_residual = true;
};

struct SolveTimes {
  // The --format/--kernel auto inspector's cost (0 without it): what the user would not have
  // paid with the same choice made by hand, i.e. timing the candidates and building the ones
  // that lost. Building the winner is in sort/convert, as for a hand choice (the solve runs on
  // it), and starting the OpenMP team, which the solve would otherwise pay in its first
  // parallel region, is in thread_start_seconds.
  double autotune_seconds = 0;
  double thread_start_seconds = 0;  // OpenMP team start-up, when the inspector started it
  double sort_seconds = 0;          // building the permutation and P A P^T
  double convert_seconds = 0;       // CSR -> format, on the host (GPU: and the backend's set-up)
  double upload_seconds = 0;        // matrix and vectors to the device's memory
  double solve_seconds = 0;         // the CG loop, device clock
  double download_seconds = 0;      // x back to the host
  double spmv_total_seconds = 0;
  double spmv_mean_seconds = 0, spmv_median_seconds = 0, spmv_min_seconds = 0;
  double other_per_iteration_seconds = 0;  // (solve - spmv total) / iterations
};

struct SolveReport {
  CgResult cg;
  double true_relative_residual = 0;  // ||b - A x|| / ||b|| in double on the original matrix
  std::string backend_name;           // e.g. "csr/omp"
  // The CG loop that ran: "persistent", "graph" or "generic" on the GPU, "fused" or "generic"
  // on the CPU; and why a fused GPU loop was not used, when one was asked for (else empty).
  std::string cg_loop, cg_loop_note;
  index_t nnz = 0;
  // What --format/--kernel auto chose (autotuned false without it): the format, kernel (empty =
  // the format's default) and row order that ran, and why, in one line.
  bool autotuned = false;
  Format auto_format = Format::csr;
  std::string auto_kernel;
  bool auto_sort_rows = false;
  std::string auto_reason;
  SolveTimes times;
  double spmv_gflops() const;  // 2 nnz / median SpMV time
};

// x holds the initial guess on entry (resized to zeros if empty) and the solution on return.
SolveReport solve_system(const CsrMatrix<double>& A, const std::vector<double>& b,
                         std::vector<double>& x, const SolveOptions& options);

// An SpMV backend built for a solve: A's rows in the permutation's order (empty: file order),
// converted to the format in precision T, in the device's memory; and what building it took.
template <typename T>
struct BuiltBackend {
  std::unique_ptr<SpmvBackend<T>> backend;
  RowPermutation permutation;
  double sort_seconds = 0;     // the permutation and P A P^T
  double convert_seconds = 0;  // cast, conversion, backend set-up (on the GPU not the copy)
};

// The first half of solve_system: sorts (options.sort_rows) and builds options.backend.
template <typename T>
BuiltBackend<T> build_backend(const CsrMatrix<double>& A, const SolveOptions& options);

// The second half: the solve on a backend built for A (by build_backend, or the inspector's
// winner), without sorting or converting again; options.sort_rows is ignored (the permutation
// says). The backend is not changed and can be solved with again. A PreparedSolve run once.
template <typename T>
SolveReport solve_with_backend(const CsrMatrix<double>& A, const std::vector<double>& b,
                               std::vector<double>& x, const SolveOptions& options,
                               BuiltBackend<T>& built);

namespace detail {
template <typename T>
class PreparedLoop;  // the CG loop with its vectors in place (solve.cpp)
}

// A solve on a built backend, set up once and run as often as wanted (the inspector times
// several short solves per candidate; on the GPU the set-up costs far more than they do).
// The constructor does everything that does not depend on the initial guess: b permuted, the
// Jacobi diagonal, the device's vector operations, b and 1/diag(A) in the device's memory, the
// fused GPU loop (make_fused_cg: work vectors, pinned memory) or the host copies for the fused
// CPU loop. run() does the rest, as solve_with_backend. A, b and built must outlive it, and
// the backend is not changed.
template <typename T>
class PreparedSolve {
 public:
  PreparedSolve(const CsrMatrix<double>& A, const std::vector<double>& b,
                const SolveOptions& options, BuiltBackend<T>& built);
  ~PreparedSolve();
  PreparedSolve(const PreparedSolve&) = delete;
  PreparedSolve& operator=(const PreparedSolve&) = delete;

  // x: the initial guess (zeros if empty) in, the solution out, in A's row order. The report
  // is solve_system's; its upload time includes the set-up's (b, 1/diag(A), the matrix).
  SolveReport run(std::vector<double>& x);

 private:
  const CsrMatrix<double>& A_;
  const std::vector<double>& b_;
  const BuiltBackend<T>& built_;
  bool true_residual_;
  std::unique_ptr<detail::PreparedLoop<T>> loop_;
};

// How often the host reads the CG scalars: --check-every, or the device's default when it is 0
// (every iteration on the CPU, where they are on the host anyway; 16 on the GPU).
int effective_check_every(const SolveOptions& options);

// y = A x on the host in double (the independent reference used for the true residual).
std::vector<double> multiply(const CsrMatrix<double>& A, const std::vector<double>& x);
double norm2(const std::vector<double>& v);

}  // namespace cgs
