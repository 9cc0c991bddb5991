// The batched study engine's linear algebra (netsolve --study ... --device gpu):
// the scenarios of a study run in lockstep, each on its own host thread (its trials assemble their
// matrices and right-hand sides on the same pattern, in parallel on the cores), and the scaled
// correction systems of every scenario that waits for one are solved together in one call.
//
//   BatchCg          the seam: solves a batch of systems that share one sparsity pattern.
//                    make_cpu_batch_cg: a loop over cgsolve's CPU CG (the fallback, and what
//                    the tests run without a GPU); make_gpu_batch_cg: the cluster-resident CG
//                    (solver/cuda/cluster_cg.hpp, ClusterCg::solve_batch), one system per
//                    thread-block cluster, one launch for the whole batch.
//   BatchRendezvous  where the scenario threads meet: each thread's CG solver
//                    (make_batch_member_solver, network/cg_solver.cpp) hands its system in and
//                    waits; the last of the members still running to arrive solves the batch on
//                    BatchCg and wakes the others. A member that has no scenario left leaves.
//
// Each scenario's trials, status checks, convergence test and iterative refinement are the CPU
// study's own (GradientAlgorithm and the CG solver's refinement loop run unchanged on the
// member's thread); only where its inner CG solves runs differs.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "formats/csr.hpp"
#include "network/linear_solver.hpp"
#include "solver/cg_types.hpp"
#include "solver/solver.hpp"

namespace cgs::net {

// One system of a batch: A (its values; the pattern shared by the batch), b, and x, the initial
// guess on entry and the solution on return; result as the CG loop reports it.
struct BatchCgSystem {
  const CsrMatrix<double>* A = nullptr;
  const std::vector<double>* b = nullptr;
  std::vector<double>* x = nullptr;
  CgResult result;
  // The batched Cholesky engines (make_*_batch_cholesky): the order the member's solver was
  // offered (EPANET's; empty: minimum degree), taken from the first system; and on return -1, or
  // the row of A whose pivot was <= 0 (x then unchanged). CG engines ignore both.
  const std::vector<int>* elimination_order = nullptr;
  int failed_row = -1;
};

class BatchCg {
 public:
  virtual ~BatchCg() = default;
  // Every system to options' tolerance (no preconditioner: the study hands in scaled systems).
  // A system whose pattern differs from the first's is an error (std::invalid_argument).
  virtual void solve(const std::vector<BatchCgSystem*>& systems) = 0;
  virtual std::string name() const = 0;
  // Optional, for engines that copy each system into a staging area: the rendezvous calls these
  // on the members' own threads, outside its lock, so that the copies run in parallel instead of
  // on the one thread that runs the batch. expect(members) once, before any system; stage(slot,
  // s) when member s arrives, its position in the coming batch being slot (< members), before
  // solve() is called; collect(slot, s) after that batch, before the member goes on.
  virtual void expect(int members) { (void)members; }
  virtual void stage(int slot, const BatchCgSystem& system) { (void)slot, (void)system; }
  virtual void collect(int slot, BatchCgSystem& system) { (void)slot, (void)system; }
};

// std::invalid_argument unless A has pattern's rows, row pointers and columns.
void check_same_pattern(const CsrMatrix<double>& A, const CsrMatrix<double>& pattern);

// The CPU fallback: one cgsolve Solver (request's plan, CPU device), analysed on the first
// pattern, set_values and solve per system, one system after another. It does exactly what the
// CG solver of a CPU study does per solve, so a batched study on it gives the CPU study's rows.
std::unique_ptr<BatchCg> make_cpu_batch_cg(const SolveRequest& request);

// The GPU engine: the cluster-resident CG in its batch layout (the matrix rows read from L2, each
// cluster's vectors in shared memory), options.tol, options.max_iters. Throws DeviceError where
// this build has no CUDA or there is no usable GPU (the message says which); on the first batch,
// DeviceError where the system does not fit one cluster (with the reason).
std::unique_ptr<BatchCg> make_gpu_batch_cg(const CgOptions& options);

// The batched sparse Cholesky: the first system's pattern analysed once in its
// elimination order (precond::SparseCholesky, EPANET's order of operations), compiled into a flat schedule
// (cholesky_schedule.hpp), and every batch factorised and solved by executing it -- on the GPU in
// one call of three kernels, one thread a system (network/batch_cholesky.hpp), or on the host
// one system after another (the fallback and the tests' reference). Both give precond::SparseCholesky's
// bits, so a batched study's rows equal the direct study's. The GPU one throws DeviceError where
// this build has no CUDA or there is no GPU.
std::unique_ptr<BatchCg> make_cpu_batch_cholesky();
std::unique_ptr<BatchCg> make_gpu_batch_cholesky();

// Where the members' systems are collected. members: the scenario threads that will call solve.
class BatchRendezvous {
 public:
  BatchRendezvous(std::unique_ptr<BatchCg> engine, int members);
  // Blocks until the batch holding this system was solved; rethrows the engine's error (after
  // one, every later call rethrows it at once, so that the members finish quickly).
  CgResult solve(const CsrMatrix<double>& A, const std::vector<double>& b, std::vector<double>& x);
  // The same for a system with its direct-solver fields (elimination_order in, failed_row out).
  void solve(BatchCgSystem& system);
  // A member with no work left: the others no longer wait for it.
  void leave();
  std::string engine_name() const { return engine_->name(); }
  std::exception_ptr error() const;
  // What the batches held, for the summary and the model of the GPU's time (a launch lasts as
  // long as its slowest system: its critical iterations).
  struct Counts {
    long launches = 0;             // batches solved
    long systems = 0;              // systems solved, over all batches
    long iterations = 0;           // CG iterations, all systems
    long critical_iterations = 0;  // the most iterations of a system in each batch, summed
  };
  Counts counts() const;

 private:
  void run_batch(std::unique_lock<std::mutex>& lock);
  bool complete() const {
    return !waiting_.empty() && static_cast<int>(waiting_.size()) == members_ && staging_ == 0;
  }

  std::unique_ptr<BatchCg> engine_;
  mutable std::mutex mutex_;
  std::condition_variable solved_;
  int members_;
  std::vector<BatchCgSystem*> waiting_;
  int staging_ = 0;  // members between their arrival and the end of their stage()
  long generation_ = 0;
  Counts counts_;
  std::exception_ptr error_;
};

// A member's leave() when it goes out of scope (a member that stops on an exception leaves too).
class BatchMembership {
 public:
  explicit BatchMembership(BatchRendezvous* rendezvous) : rendezvous_(rendezvous) {}
  ~BatchMembership() {
    if (rendezvous_) rendezvous_->leave();
  }
  BatchMembership(const BatchMembership&) = delete;
  BatchMembership& operator=(const BatchMembership&) = delete;

 private:
  BatchRendezvous* rendezvous_;
};

// A member's linear solver: netsolve's CG solver (cg_solver.cpp: symmetric Jacobi scaling,
// iterative refinement to the componentwise backward error, its acceptance test) whose inner CG
// solves go through the rendezvous. The tolerance of each inner solve is the engine's.
std::unique_ptr<LinearSolver> make_batch_member_solver(std::shared_ptr<BatchRendezvous> batch,
                                                       const RefinementOptions& refinement = {});

// A member's direct solver for the batched Cholesky engines: each solve is one system of the
// batch (the factorisation and both sweeps done by the engine), a pivot <= 0 reported as
// NativeSolver reports it; the fallback orders after such a pivot (solve_in_file_order) run on
// the member's own thread with a native solver, as in the CPU study.
std::unique_ptr<LinearSolver> make_batch_direct_member_solver(
    std::shared_ptr<BatchRendezvous> batch);

}  // namespace cgs::net
