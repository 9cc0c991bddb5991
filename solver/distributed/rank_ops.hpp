// What one rank of the distributed CG does to its share of the vectors: the operations of one
// CG iteration on the rank's rows, and the sums over all ranks that CG's scalars need. The
// distributed loops (distributed_cg.hpp) are written against this interface once; the CPU ranks
// (cpu_rank_ops.cpp: OpenMP + MPI) and the GPU ranks (cuda_rank_ops.cu: CUDA + NCCL, or
// host-staged MPI) implement it.
//
// Vectors are the rank's rows only (local_rows() entries), in the device's memory. multiply()
// gets the off-rank entries it needs itself (the halo exchange). dots() is the one place where
// ranks meet: one reduction for all the dot products of a reduction point.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace cgs::dist {

struct DotPair {
  const double* a;
  const double* b;
};

// Seconds spent per kind of work on a rank, summed over the solve, and how often.
struct RankTimes {
  double local_spmv = 0;  // the local block's product (the halo exchange runs meanwhile)
  double halo_wait = 0;   // waiting for the halo after the local product (0: fully hidden)
  double halo_spmv = 0;   // the halo block's product
  double allreduce = 0;   // in the reductions (includes waiting for slower ranks)
  double precond = 0;     // z = M^-1 r on the local block
  double vector_ops = 0;  // updates and local dot products
  long products = 0;      // multiply() calls
  long reductions = 0;    // dots() calls
  std::size_t halo_bytes_received = 0, halo_bytes_sent = 0;  // over the solve
  // The exchange alone, from the packed send buffer to the halo's arrival, where the device can
  // time it apart from the local product it overlaps (GPU ranks: on the communication stream;
  // CPU ranks: 0, not measured). Overlap is complete when halo_wait is ~0 and this is positive.
  double halo_exchange = 0;
  // The waits split (CPU ranks; GPU ranks: 0, not split). Each reduction carries the latest time
  // every rank finished its local product and the time it entered the reduction (clocks aligned
  // by a barrier at set-up), so each rank learns when the last one got there:
  //   halo_imbalance       of halo_wait, the part spent before the last rank had finished its
  //                        local product (without a progress thread the exchange of a halo
  //                        above the eager limit completes only once both sides are in MPI);
  //                        halo_wait - halo_imbalance is the transfer's own time.
  //   allreduce_imbalance  of allreduce, the part before the last rank entered the reduction;
  //                        allreduce - allreduce_imbalance is the reduction's own time.
  double halo_imbalance = 0;
  double allreduce_imbalance = 0;
};

class RankOps {
 public:
  virtual ~RankOps() = default;
  virtual std::size_t local_rows() const = 0;

  virtual double* allocate() = 0;  // a vector of local_rows() zeros
  virtual void release(double* v) = 0;
  virtual void upload(const std::vector<double>& host, double* v) = 0;
  virtual std::vector<double> download(const double* v) = 0;
  virtual void copy(const double* src, double* dst) = 0;

  // y = A x on this rank's rows: the halo exchange posted, the local block multiplied, the
  // exchange waited for, the halo block multiplied.
  virtual void multiply(const double* x, double* y) = 0;
  // z = M^-1 r with M the preconditioner of the rank's local block (pointwise ones are exactly
  // their global form; the others are block-Jacobi over the ranks).
  virtual void precondition(const double* r, double* z) = 0;
  // True for M = I (--precond none), the same on every rank: the loops then let z be r itself
  // instead of copying it.
  virtual bool identity_preconditioner() const = 0;

  // The updates of solver/cg_step.hpp: r = b - Ax; x = next_x(x, alpha, p), r = next_r(r,
  // alpha, q); p = next_p(z, beta, p).
  virtual void residual(const double* b, const double* Ax, double* r) = 0;
  virtual void update_xr(double alpha, const double* p, const double* q, double* x, double* r) = 0;
  virtual void update_p(double beta, const double* z, double* p) = 0;

  // sums[i] = sum over all ranks of pairs[i].a . pairs[i].b (local parts in double), in one
  // reduction; every rank gets the same bits.
  virtual void dots(const DotPair* pairs, int count, double* sums) = 0;

  // The end of a classic iteration in one call: x and r updated, z = M^-1 r, and sums[0] = r.r,
  // sums[1] = r.z over all ranks (one reduction). z may be r (M = I). Here as the separate
  // operations; a device may fuse them (the CPU does for a pointwise M: one pass, not three).
  virtual void update_xr_precondition_dots(double alpha, const double* p, const double* q,
                                           double* x, double* r, double* z, double* sums) {
    update_xr(alpha, p, q, x, r);
    if (z != r) precondition(r, z);
    const DotPair pairs[2] = {{r, r}, {r, z}};
    dots(pairs, 2, sums);
  }

  // The fused classic iteration (distributed_cg.hpp, --dist-loop fused): the vector updates
  // inside the product's pass over the rows, as solver/fused/cpu_passes.hpp does for one
  // process. Offered where has_fused_passes() (the same answer on every rank); the defaults throw.
  virtual bool has_fused_passes() const { return false; }
  // Pass A(k): p_new = next_p(z, beta, p_old) formed inside q = A p_new (the halo exchange sends
  // p_new's entries, formed as they are packed) and x = next_x(x, alpha_prev, p_old); returns
  // this rank's part of p_new . q (no reduction).
  virtual double fused_product(double beta, double alpha_prev, const double* z, const double* p_old,
                               double* p_new, double* q, double* x);
  // Pass B(k): r = next_r(r, alpha, q), z = M^-1 r (pointwise M; z may be r for M = I), and this
  // rank's r.r and r.z in local_sums[0], local_sums[1] (no reduction).
  virtual void fused_residual(double alpha, const double* q, double* r, double* z,
                              double* local_sums);
  // x = next_x(x, alpha, p): the update pass A would have made next, at the last iteration.
  virtual void fused_update_x(double alpha, const double* p, double* x);
  // sums[i] summed over all ranks in one reduction (the local parts already computed).
  virtual void reduce(double* sums, int count);

  virtual RankTimes times() const = 0;
  virtual void clear_times() = 0;
};

namespace detail {
[[noreturn]] inline void no_fused_passes() {
  throw std::logic_error("this rank has no fused passes (check has_fused_passes() first)");
}
}  // namespace detail

inline double RankOps::fused_product(double, double, const double*, const double*, double*, double*,
                                     double*) {
  detail::no_fused_passes();
}
inline void RankOps::fused_residual(double, const double*, double*, double*, double*) {
  detail::no_fused_passes();
}
inline void RankOps::fused_update_x(double, const double*, double*) { detail::no_fused_passes(); }
inline void RankOps::reduce(double*, int) { detail::no_fused_passes(); }

}  // namespace cgs::dist
