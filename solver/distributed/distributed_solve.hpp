// The distributed solve as the program sees it, without MPI in sight (this header builds
// without MPI; distributed_solve.cpp needs it, no_mpi.cpp answers in its absence):
//   MpiSession    MPI started when the process was launched by mpirun (or asked for), ended at
//                 exit;
//   solve_distributed  rank 0 holds A, b, x0; the rows are partitioned, scattered, split into
//                 local and halo blocks, solved by the distributed CG (distributed_cg.hpp) on
//                 every rank, and x gathered back to rank 0 in A's own order.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "formats/csr.hpp"
#include "formats/stats.hpp"
#include "solver/distributed/distributed_cg.hpp"
#include "solver/distributed/partition.hpp"
#include "solver/distributed/rank_ops.hpp"
#include "solver/plan.hpp"
#include "solver/solver.hpp"

namespace cgs::dist {

bool mpi_built();  // this cgsolve was built with MPI
// The environment of an MPI launcher (mpirun/mpiexec of Open MPI or MPICH, srun with PMI):
// the world size it started, or 0 when there is none.
int launcher_world_size();

class MpiSession {
 public:
  // Starts MPI (InputError when built without it). Ends it at destruction.
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  int rank() const { return rank_; }
  int size() const { return size_; }
  // Rank 0's error message (empty: none) on every rank, so all ranks stop together.
  std::string share_error(const std::string& rank0_error) const;
  // Ends every rank of the job (a failure on one rank that the others cannot know of).
  [[noreturn]] void abort(int code) const;

 private:
  int rank_ = 0, size_ = 1;
};

struct DistributedRequest {
  SolveRequest request;  // no "auto" (format, kernel, preconditioner)
  PartitionKind partition = PartitionKind::contiguous;
  CgVariant variant = CgVariant::classic;
  int replace_every = 0;            // 0: residual replacement by the criterion (distributed_cg.hpp)
  DistLoop loop = DistLoop::fused;  // asked for (distributed_cg.hpp)
};

// One rank's share and where its time went.
struct RankSummary {
  int rank = 0;
  long rows = 0, local_nnz = 0, halo_nnz = 0, halo_size = 0, neighbours = 0;
  RankTimes times;
};

struct DistributedReport {
  int ranks = 1;
  PartitionKind partition = PartitionKind::contiguous;
  CgVariant variant = CgVariant::classic;
  int replace_every = 0;
  long replacements = 0, fallbacks = 0;  // single-reduction (distributed_cg.hpp)
  DistLoop loop = DistLoop::plain;       // the loop that ran
  double partition_seconds = 0, scatter_seconds = 0, setup_seconds = 0;
  std::vector<RankSummary> per_rank;
  // Sums and maxima over the ranks that the report prints.
  std::size_t halo_bytes_per_product() const;  // all ranks' halos, one exchange
  long reductions_per_iteration(long iterations) const;
};

struct DistributedOutcome {
  SolveReport solve;  // rank 0: the report as a single process gives it; the others: cg only
  DistributedReport distributed;
  std::vector<double> x;  // rank 0: the solution in A's order; others: empty
};

// Collective. On rank 0: A (square, symmetric), b and x0 (empty: zeros); on the others null.
// The result is complete on rank 0 (the others get their own RankSummary only).
DistributedOutcome solve_distributed(const MpiSession& session, const CsrMatrix<double>* A,
                                     const std::vector<double>* b, const std::vector<double>* x0,
                                     const DistributedRequest& request);

// The same for a generated stencil matrix (formats/generators.hpp: poisson2d, poisson3d, banded):
// every rank generates its own rows (equal row blocks: a stencil's rows are all about as long),
// b = A * ones row by row and x0 = 0, so no rank ever holds more than its rows. Rank 0 gets x
// and, in `stats`, the whole matrix's statistics combined from the ranks' (the deviation of the
// row lengths is the ranks' mean). Nothing (on every rank) when the spec is not such a stencil.
bool generated_per_rank(const std::string& spec);
DistributedOutcome solve_distributed_generated(const MpiSession& session, const std::string& spec,
                                               const DistributedRequest& request,
                                               MatrixStats* stats);

// The plan the ranks run, for the report: the request resolved as make_plan would resolve it,
// without timing anything (each rank's block is smaller than A).
Plan distributed_plan(const DistributedRequest& request, index_t rows, int ranks);

}  // namespace cgs::dist
