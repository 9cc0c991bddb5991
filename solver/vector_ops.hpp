// What a device must provide for CG besides SpMV: memory, fused vector updates, reductions
// and timers. CPU (solver/cpu_ops.*) and CUDA (spmv/cuda/cuda_ops.*) implement it; the CG
// algorithm in solver/cg.hpp is written once against it.
//
// The CG scalars (dot products, alpha, beta) live with the device: on the GPU they stay in
// device memory, so an iteration needs no host round trip. The host reads them only through
// read_scalars(), which waits for the device. All reductions accumulate in double, also when
// the vectors are float.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "spmv/backend.hpp"

namespace cgs {

struct CgScalars {
  double rr = 0;           // r.r of the latest residual
  double rz = 0;           // r.z (equals rr without preconditioner)
  double pq = 0;           // p.(A p) of the latest iteration
  double bb = 0;           // b.b
  long breakdown_at = -1;  // iteration where p.Ap <= 0 or a non-finite value appeared; -1 none
  long converged_at = -1;  // first iteration with rr <= the threshold; -1 not yet
};

template <typename T>
class VectorOps {
 public:
  virtual ~VectorOps() = default;
  virtual Device device() const = 0;
  virtual std::size_t size() const = 0;  // n, the length of every vector

  // Memory in the device's space.
  virtual T* allocate(std::size_t n) = 0;
  virtual void release(T* p) = 0;
  virtual void upload(const T* host, T* device_dst, std::size_t n) = 0;
  virtual void download(const T* device_src, T* host, std::size_t n) = 0;
  virtual void copy(const T* src, T* dst) = 0;  // n entries, device to device

  // Resets the scalars and sets the convergence threshold on r.r (converged_at is recorded
  // by the first iteration whose r.r <= rr_threshold). When history_capacity > 0, r.r of
  // iteration k (k = 0 for the initial residual) is recorded for k < history_capacity.
  virtual void reset(double rr_threshold, std::size_t history_capacity) = 0;

  // bb = b.b
  virtual void norm_b(const T* b) = 0;

  // Start of CG: r = b - Ax; z = inv_diag .* r (when inv_diag is not null); rr = r.r;
  // rz = r.z (or rr); history[0] = rr; converged_at = 0 if rr <= threshold.
  virtual void start(const T* b, const T* Ax, const T* inv_diag, T* r, T* z) = 0;

  // pq = p.q
  virtual void dot_pq(const T* p, const T* q) = 0;

  // Iteration `iteration` (1-based), fused in one pass:
  //   alpha = rz / pq; x += alpha p; r -= alpha q; z = inv_diag .* r (if inv_diag);
  //   rz_old = rz; rr = r.r; rz = r.z (or rr); history[iteration] = rr;
  //   converged_at = iteration if it is the first with rr <= threshold.
  // If pq <= 0 or any scalar is not finite, breakdown_at = iteration and x, r stay unchanged.
  // Once breakdown_at or converged_at is set, update_xrz and update_p change nothing (iterations
  // still run until the host reads the scalars, when check_every > 1).
  virtual void update_xrz(const T* p, const T* q, const T* inv_diag, T* x, T* r, T* z,
                          long iteration) = 0;

  // beta = rz / rz_old; p = z + beta p. (z is r without preconditioner.)
  virtual void update_p(const T* z, T* p) = 0;

  // Waits for the device and returns the scalars.
  virtual CgScalars read_scalars() = 0;
  // r.r per iteration, as recorded since reset() (waits for the device).
  virtual std::vector<double> history() = 0;

  // Timing on the device's own clock (CUDA events on the GPU). mark_spmv_begin/end bracket
  // one SpMV of the solve; spmv_seconds() returns the time of each bracketed product.
  virtual void mark_solve_begin() = 0;
  virtual void mark_solve_end() = 0;
  virtual double solve_seconds() = 0;  // between the last begin/end pair (waits)
  virtual void mark_spmv_begin() = 0;
  virtual void mark_spmv_end() = 0;
  virtual std::vector<double> spmv_seconds() = 0;  // waits

  // Checks the last asynchronous error (GPU); throws DeviceError.
  virtual void check_errors() {}
};

// The VectorOps for a device: CPU (serial, or OpenMP with `threads`, 0 = all) or CUDA.
template <typename T>
std::unique_ptr<VectorOps<T>> make_vector_ops(Device device, std::size_t n, int threads);

}  // namespace cgs
