// The cluster-resident CG loop (`--gpu-loop cluster`): a small system held whole in the
// shared memory of one thread-block cluster (Hopper: up to 16 blocks, 227 KB each), so that an
// iteration meets at two cluster barriers instead of two grid-wide syncs, and the matrix and the
// vectors never leave the SMs. Each block owns a contiguous range of rows: their CSR rows
// (columns recoded as block and local row) and their entries of r, z, p (two buffers) and q.
// The SpMV reads other blocks' entries of z and p through distributed shared memory.
//
// The CG is solver/cg_step.hpp's, in the persistent loop's two passes (fused_cg_impl.cuh):
//   pass A(k): the decision of iteration k - 1; p_k = z + beta p_{k-1} computed on the fly
//              inside q = A p_k; x += alpha_{k-1} p_{k-1}; p.q          -> cluster barrier
//   pass B(k): alpha_k; r -= alpha_k q; z = d .* r; r.r, r.z             -> cluster barrier
// so its iterations and answers are the persistent loop's to rounding. Every block reduces the
// blocks' partial sums in rank order (the same bits everywhere, no atomics). Preconditioners:
// the pointwise ones (none, Jacobi) in any cluster; a program (solver/precond/program.hpp: ic0,
// fsai, bjacobi, cheb) in a cluster of ONE block, its operations run after pass B between
// __syncthreads (as the persistent loop runs them between grid syncs): the block-local exact
// level-scheduled IC(0), a level costing a chain of shared-memory loads and a block
// barrier instead of a grid sync (a run of levels of at most 32 rows: one warp, __syncwarp); each
// triangular solve's levels run as one sweep, its rows waiting on a counter of rows done instead
// of a barrier a level (cluster_program.cuh, "A sweep"). The
// program's work vectors live in shared memory beside CG's; its operations, index and value arrays
// (two packed buffers, device_program.hpp) are copied there too where they fit, then the matrix;
// what does not fit is read from L2.
//
// The same kernel solves a batch of systems of one pattern (one system per cluster, values and
// right-hand sides per system): the engine for many small solves at once (scenario studies).
//
// Files, by variant: cluster_cg_kernel.cuh (the two passes, the default) and
// one_reduction_cg_kernel.cuh (opt-in); their shared parts in cluster_common.cuh (layout,
// arguments, sums, the sliced row) and cluster_program.cuh (a program in the block); the host
// side (fit, launch, results) in cluster_cg.cu, which includes them and instantiates the kernels.
// Tuning fields (base/tuning.hpp): cluster_*.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "solver/cg_types.hpp"
#include "solver/precond/device_program.hpp"
#include "spmv/views.hpp"

namespace cgs {

// What a program needs in the block: its work vectors' lengths, and the bytes of its operations
// and packed arrays (0 where not known yet: the planner knows the work vectors only).
struct ClusterProgramShape {
  std::vector<std::size_t> work;
  std::size_t op_bytes = 0, index_bytes = 0, value_bytes = 0;
};

// Whether a system of n rows and nnz entries fits one cluster of this device, and with how many
// blocks; reason says why not (or which size was taken).
struct ClusterFit {
  bool fits = false;
  int blocks = 0;                  // blocks per cluster (1, 2, 4, 8 or 16)
  int threads = 1024;              // threads a block (one system: 512; cluster_common.cuh)
  std::size_t bytes = 0;           // shared memory per block
  bool matrix_in_shared = true;    // false: a batch's blocks hold vectors, the rows stay in L2
  bool program = false;            // a program runs between the passes (one block)
  bool program_in_shared = false;  // its operations and arrays all copied to shared memory
  bool lean = false;  // a batch's lean layout: x, d and r in global memory (Layout)
  // One system, opt-in (Tuning::cluster_reductions = 1): the one-reduction iteration (one pass,
  // one cluster barrier; one_reduction_cg_kernel.cuh says where it loses).
  bool one_reduction = false;
  std::string reason;
};

// `row_ptr` (host, n + 1 entries) lets it size each block's rows exactly. blocks > 0 asks for
// that many blocks per cluster (benchmarks; Tuning::cluster_blocks does the
// same for the CLI); 0 chooses: for one system the most blocks (16 where the device allows),
// matrix and vectors in shared memory; for a batch (`batch`) the fewest blocks that hold
// a system's vectors, the matrix read from L2 by every cluster, so that the most run at once.
// `program` (one system only): one block, its vectors and the program's work vectors in shared
// memory, the rest there as room allows.
template <typename T>
ClusterFit cluster_fit(index_t n, const index_t* row_ptr, int blocks = 0, bool batch = false,
                       const ClusterProgramShape* program = nullptr);

// One cluster loop over a CSR matrix on the device, with the pointwise preconditioner d (device
// memory, n entries; null: none).
template <typename T>
class ClusterCg {
 public:
  virtual ~ClusterCg() = default;
  virtual const ClusterFit& fit() const = 0;
  // One system: b, x in device memory, x the initial guess. Like FusedGpuLoop::solve (no
  // progress calls: the whole solve is one launch, the host looks at the end).
  virtual CgResult solve(const T* b, T* x, const CgOptions& options) = 0;
  // `count` systems at once, one per cluster (count 1 with a program): b and x hold count vectors
  // of n (device memory); values (count x nnz, device) and d (count x n) per system, or null for
  // A's values and the d given at construction. Results per system; SpMV samples and history only
  // for system 0.
  virtual std::vector<CgResult> solve_batch(const T* b, T* x, int count, const T* values,
                                            const T* d, const CgOptions& options) = 0;
};

// Throws DeviceError when the system does not fit a cluster (with fit's reason). `batch`: laid
// out for solve_batch (see cluster_fit); either layout solves one system or many. `program`
// (device memory, it must outlive the loop; then d is null): the preconditioner's program, run
// in one block; its values are read at every solve (update_values may change them).
template <typename T>
std::unique_ptr<ClusterCg<T>> make_cluster_cg(
    const CsrView<T>& A, index_t n, const T* d, int blocks = 0, bool batch = false,
    const precond::DeviceProgramView<T>* program = nullptr);

}  // namespace cgs
