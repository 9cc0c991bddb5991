// A rank of the distributed CG on the CPU: the local block through the project's CPU backends
// (any --format, OpenMP threads per rank), the halo block by a plain CSR loop, the local block's
// preconditioner, vector updates in OpenMP loops, and MPI for the halo and the reductions.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>

#include "solver/distributed/mpi_comm.hpp"
#include "solver/distributed/rank_ops.hpp"
#include "solver/precond/preconditioner.hpp"
#include "spmv/backend.hpp"
#include "spmv/views.hpp"

namespace cgs::dist {

struct RankSetup {
  BackendOptions backend;  // format, device (omp or serial), threads (resolved, > 0)
  PrecondSpec precond;
};

class CpuRankOps final : public RankOps {
 public:
  // Collective (the halo plan is agreed with the neighbours). block must outlive this.
  CpuRankOps(MPI_Comm comm, const RankBlock& block, const RowBlocks& blocks,
             const RankSetup& setup);
  ~CpuRankOps() override;

  std::size_t local_rows() const override { return n_; }
  double* allocate() override;
  void release(double* v) override;
  void upload(const std::vector<double>& host, double* v) override;
  std::vector<double> download(const double* v) override;
  void copy(const double* src, double* dst) override;
  void multiply(const double* x, double* y) override;
  void precondition(const double* r, double* z) override;
  bool identity_preconditioner() const override { return identity_; }
  void residual(const double* b, const double* Ax, double* r) override;
  void update_xr(double alpha, const double* p, const double* q, double* x, double* r) override;
  void update_p(double beta, const double* z, double* p) override;
  void dots(const DotPair* pairs, int count, double* sums) override;
  void update_xr_precondition_dots(double alpha, const double* p, const double* q, double* x,
                                   double* r, double* z, double* sums) override;
  bool has_fused_passes() const override { return fused_; }
  double fused_product(double beta, double alpha_prev, const double* z, const double* p_old,
                       double* p_new, double* q, double* x) override;
  void fused_residual(double alpha, const double* q, double* r, double* z,
                      double* local_sums) override;
  void fused_update_x(double alpha, const double* p, double* x) override;
  void reduce(double* sums, int count) override;
  RankTimes times() const override { return times_; }
  void clear_times() override {
    times_ = RankTimes{};
    pending_halo_wait_ = 0;
  }

  const MpiHalo& halo() const { return halo_; }
  std::string backend_name() const;
  const PrecondReport* precond_report() const;

 private:
  void multiply_halo_block(double* y) const;
  // y += H h on the rows with halo entries; returns the sum of p_i (H h)_i over them.
  double add_halo_product(double* y, const double* p);
  // The halo exchange waited for, its time split later (see allreduce_timed).
  void wait_for_halo();
  // Each thread's share of [0, length) summed into partial[thread * kMaxDots + d] by `body`,
  // then added in thread order: the same bits on every run with the same thread count.
  template <typename Body>
  void sum_by_thread(std::int64_t length, int count, double* sums, Body body);
  // The same over the local backend's thread parts (balanced by nonzeros; one part without).
  template <typename Body>
  void sum_by_part(int count, double* sums, Body body);
  // The sum over ranks, carrying each rank's latest local-product end and its arrival (maxima)
  // to split the waits into imbalance and the rest (RankTimes).
  void allreduce_timed(double* values, int count);
  double now() const;  // seconds since the ranks' common origin (a barrier at set-up)
  static constexpr int kMaxDots = 4;

  MPI_Comm comm_;
  const RankBlock& block_;
  std::size_t n_;
  int threads_;
  bool identity_;
  MpiHalo halo_;
  // The rows with halo entries (on a grid a thin layer of the rows: the halo product visits only
  // them, not a pass over every row).
  std::vector<index_t> halo_rows_;
  std::unique_ptr<SpmvBackend<double>> local_;  // null on a rank without rows
  std::unique_ptr<Preconditioner<double>> precond_;
  std::optional<Rows<double>> rows_;  // the local block's rows for the fused passes
  std::vector<index_t> parts_;        // their thread parts' bounds
  const double* diagonal_ = nullptr;  // the pointwise M's diagonal (null: M = I)
  bool fused_ = false;                // fused passes on every rank
  RankTimes times_;
  MPI_Op sum_then_max_ = MPI_OP_NULL;
  std::chrono::steady_clock::time_point origin_;
  double product_ready_ = 0;      // when the latest local product ended (now())
  double pending_halo_wait_ = 0;  // its halo wait, not yet split
};

}  // namespace cgs::dist
