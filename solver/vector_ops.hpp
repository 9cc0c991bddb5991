// What a device provides for the generic CG loop (solver/generic_cg.hpp) besides the SpMV and
// the preconditioner: memory, the vector updates and reductions, each fused with the decision of
// solver/cg_step.hpp it leads to, and timers. CPU (solver/cpu_ops.cpp) and CUDA
// (solver/cuda/cuda_ops.cu) implement it.
//
// The solve's cg::State lives with the device: on the GPU in device memory, so an iteration
// needs no host round trip; the host reads it through read_state(), which waits. All reductions
// accumulate in double, also when the vectors are float. Once the state says the solve stopped,
// every update leaves the vectors as they are (iterations may still be issued until the host
// looks, when it reads the state only every few iterations).
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "solver/cg_step.hpp"
#include "spmv/backend.hpp"

namespace cgs {

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

  // A new solve: b.b, then cg::begin(). r.r of iteration k is recorded for k < history_capacity.
  virtual void begin(const T* b, double tol, double atol, long long max_iters,
                     std::size_t history_capacity) = 0;
  // r = b - Ax and r.r. With a pointwise preconditioner (`pointwise`; d null: the identity, z
  // is r) also z = d .* r and r.z, then cg::started(). Otherwise r.r waits for dot_rz().
  virtual void residual(const T* b, const T* Ax, T* r, bool pointwise, const T* d, T* z) = 0;
  // r.z after the preconditioner's apply, then cg::started() (k = 0) or cg::stepped() (k > 0).
  virtual void dot_rz(const T* r, const T* z, long k) = 0;
  // p.q, then cg::step().
  virtual void dot_pq(const T* p, const T* q, long k) = 0;
  // x += alpha p; r -= alpha q; r.r; with a pointwise preconditioner also z and r.z and then
  // cg::stepped(). Nothing once the solve stopped (or step() found a breakdown).
  virtual void update_xr(const T* p, const T* q, T* x, T* r, bool pointwise, const T* d, T* z,
                         long k) = 0;
  // p = z + beta p (z is r for the identity), unless the solve stopped.
  virtual void update_p(const T* z, T* p) = 0;

  // Waits for the device.
  virtual cg::State read_state() = 0;
  virtual std::vector<double> history() = 0;  // r.r per iteration recorded since begin()

  // Timing on the device's own clock (CUDA events on the GPU). mark_spmv_begin/end bracket
  // one SpMV of the solve; spmv_seconds() returns the time of each bracketed product.
  virtual void mark_solve_begin() = 0;
  virtual void mark_solve_end() = 0;
  virtual double solve_seconds() = 0;  // between the last begin/end pair (waits)
  virtual void mark_spmv_begin() = 0;
  virtual void mark_spmv_end() = 0;
  virtual std::vector<double> spmv_seconds() = 0;  // waits
  // Time every k-th product only: a pair of CUDA events costs about 3 us of launch time in a
  // loop of about 20 us (BENCHMARKS.md §8: 15-20% when every product was timed).
  virtual int spmv_sample_every() const { return 1; }
  virtual void clear_spmv_seconds() = 0;  // forget the products timed so far

  // Checks the last asynchronous error (GPU); throws DeviceError.
  virtual void check_errors() {}
};

// The VectorOps for a device: CPU (serial, or OpenMP with `threads`, 0 = all) or CUDA.
template <typename T>
std::unique_ptr<VectorOps<T>> make_vector_ops(Device device, std::size_t n, int threads);

// A vector in a device's memory, released when it goes out of scope.
template <typename T>
class DeviceVector {
 public:
  DeviceVector(VectorOps<T>& ops, std::size_t n) : ops_(&ops), data_(ops.allocate(n)), n_(n) {}
  DeviceVector(const DeviceVector&) = delete;
  DeviceVector& operator=(const DeviceVector&) = delete;
  ~DeviceVector() { ops_->release(data_); }
  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return n_; }

 private:
  VectorOps<T>* ops_;
  T* data_;
  std::size_t n_;
};

}  // namespace cgs
