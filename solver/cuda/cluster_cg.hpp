// The cluster-resident CG loop (`--gpu-loop cluster`, issue 27): a small system held whole in the
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
// level-scheduled IC(0) of issue 21, a level costing a chain of shared-memory loads and a block
// barrier instead of a grid sync (a run of levels of at most 32 rows: one warp, __syncwarp). The
// program's work vectors live in shared memory beside CG's; its operations, index and value arrays
// (two packed buffers, device_program.hpp) are copied there too where they fit, then the matrix;
// what does not fit is read from L2.
//
// The same kernel solves a batch of systems of one pattern (one system per cluster, values and
// right-hand sides per system): the engine for many small solves at once (scenario studies).
#pragma once

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "formats/types.hpp"
#include "solver/cg_types.hpp"
#include "solver/precond/device_program.hpp"
#include "spmv/views.hpp"

namespace cgs {

// The pointwise kernel's variants (BENCHMARKS.md §13b), chosen when the loop is built by the
// environment variable CGSOLVE_CLUSTER_VARIANT, so that one benchmark script measures them all.
// Every variant takes solver/cg_step.hpp's decisions; they differ in how a pass waits:
//   base    the loop measured in §13 (two passes, generic loads, thread 0 decides behind a block
//           barrier);
//   select  base, the pass's p buffers picked by a select instead of an array indexed at run
//           time (which lived in local memory: 17% of the stall samples); every variant below
//           has it too;
//   loads   the SpMV's loads through ld.shared / ld.shared::cluster, a row's entries in flight
//           together (4 at a time);
//   decide  every thread sums the cluster's partials (xor butterfly) and takes the decision
//           itself: one block barrier less per reduction, no single-thread chain; the aligned
//           PTX cluster barrier;
//   fast    loads + decide;
//   onered  Chronopoulos-Gear CG: ONE pass and one cluster barrier an iteration (r.r, r.z and
//           w.z reduced together, p.Ap from them), the neighbours' new z recomputed from their
//           previous r, w and s (double-buffered); fast's loads and decision; the residual
//           replaced every 50 iterations; three more vectors in shared memory (the batch then
//           needs more blocks a system).
// A program (one block) always runs the base variant.
enum class ClusterVariant { base, select, loads, decide, fast, onered };

inline const char* to_string(ClusterVariant v) {
  switch (v) {
    case ClusterVariant::select: return "select";
    case ClusterVariant::loads: return "loads";
    case ClusterVariant::decide: return "decide";
    case ClusterVariant::fast: return "fast";
    case ClusterVariant::onered: return "onered";
    case ClusterVariant::base: break;
  }
  return "base";
}

inline std::vector<ClusterVariant> all_cluster_variants() {
  return {ClusterVariant::base,   ClusterVariant::select, ClusterVariant::loads,
          ClusterVariant::decide, ClusterVariant::fast,   ClusterVariant::onered};
}

// A variant by name; throws InputError naming the choices (cgsolve: a bad-input exit).
inline ClusterVariant parse_cluster_variant(const std::string& name) {
  for (ClusterVariant v : all_cluster_variants())
    if (name == to_string(v)) return v;
  throw InputError("CGSOLVE_CLUSTER_VARIANT=" + name +
                   ": expected base, select, loads, decide, fast or onered");
}

// CGSOLVE_CLUSTER_VARIANT, base where unset or empty (the default until the lead has measured
// the others on an H100).
inline ClusterVariant cluster_variant_from_environment() {
  const char* text = std::getenv("CGSOLVE_CLUSTER_VARIANT");
  return text && *text ? parse_cluster_variant(text) : ClusterVariant::base;
}

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
  std::size_t bytes = 0;           // shared memory per block
  bool matrix_in_shared = true;    // false: a batch's blocks hold vectors, the rows stay in L2
  bool program = false;            // a program runs between the passes (one block)
  bool program_in_shared = false;  // its operations and arrays all copied to shared memory
  ClusterVariant variant = ClusterVariant::base;  // the kernel (its layout: onered's vectors)
  std::string reason;
};

// `row_ptr` (host, n + 1 entries) lets it size each block's rows exactly. The variant is
// CGSOLVE_CLUSTER_VARIANT's (base with a program). blocks > 0 asks for
// that many blocks per cluster (benchmarks; CGSOLVE_CLUSTER_BLOCKS in the environment does the
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
