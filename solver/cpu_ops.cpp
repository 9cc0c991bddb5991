#include "solver/cpu_ops.hpp"

#include <omp.h>

#include <chrono>
#include <cmath>
#include <cstring>

namespace cgs {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

template <typename T>
class CpuVectorOps final : public VectorOps<T> {
 public:
  CpuVectorOps(std::size_t n, int threads, Device device)
      : n_(static_cast<std::int64_t>(n)), threads_(threads), device_(device) {}

  Device device() const override { return device_; }
  std::size_t size() const override { return std::size_t(n_); }

  T* allocate(std::size_t n) override { return n ? new T[n]() : nullptr; }
  void release(T* p) override { delete[] p; }
  void upload(const T* host, T* dst, std::size_t n) override { copy_n(host, dst, n); }
  void download(const T* src, T* host, std::size_t n) override { copy_n(src, host, n); }
  void copy(const T* src, T* dst) override { copy_n(src, dst, std::size_t(n_)); }

  void reset(double rr_threshold, std::size_t history_capacity) override {
    s_ = CgScalars{};
    rz_old_ = 0;
    threshold_ = rr_threshold;
    history_capacity_ = history_capacity;
    history_.clear();
    spmv_seconds_.clear();
  }

  void norm_b(const T* b) override {
    double bb = 0;
#pragma omp parallel for reduction(+ : bb) num_threads(threads_) if (threads_ > 1)
    for (std::int64_t i = 0; i < n_; ++i) bb += double(b[i]) * double(b[i]);
    s_.bb = bb;
  }

  void start(const T* b, const T* Ax, const T* inv_diag, T* r, T* z) override {
    double rr = 0, rz = 0;
#pragma omp parallel for reduction(+ : rr, rz) num_threads(threads_) if (threads_ > 1)
    for (std::int64_t i = 0; i < n_; ++i) {
      r[i] = b[i] - Ax[i];
      rr += double(r[i]) * double(r[i]);
      if (inv_diag) {
        z[i] = inv_diag[i] * r[i];
        rz += double(r[i]) * double(z[i]);
      }
    }
    s_.rr = rr;
    s_.rz = inv_diag ? rz : rr;
    record(0);
  }

  void dot_pq(const T* p, const T* q) override {
    double pq = 0;
#pragma omp parallel for reduction(+ : pq) num_threads(threads_) if (threads_ > 1)
    for (std::int64_t i = 0; i < n_; ++i) pq += double(p[i]) * double(q[i]);
    s_.pq = pq;
  }

  void update_xrz(const T* p, const T* q, const T* inv_diag, T* x, T* r, T* z,
                  long iteration) override {
    // After a breakdown, or once converged (later iterations run when check_every > 1), the
    // vectors stay frozen: an exact r = 0 would otherwise read as a breakdown.
    if (s_.breakdown_at >= 0 || s_.converged_at >= 0) return;
    if (!(s_.pq > 0) || !std::isfinite(s_.pq) || !std::isfinite(s_.rz)) {
      s_.breakdown_at = iteration;  // p.Ap <= 0: A is not positive definite
      return;
    }
    const T alpha = T(s_.rz / s_.pq);
    double rr = 0, rz = 0;
#pragma omp parallel for reduction(+ : rr, rz) num_threads(threads_) if (threads_ > 1)
    for (std::int64_t i = 0; i < n_; ++i) {
      x[i] += alpha * p[i];
      r[i] -= alpha * q[i];
      rr += double(r[i]) * double(r[i]);
      if (inv_diag) {
        z[i] = inv_diag[i] * r[i];
        rz += double(r[i]) * double(z[i]);
      }
    }
    rz_old_ = s_.rz;
    s_.rr = rr;
    s_.rz = inv_diag ? rz : rr;
    if (!std::isfinite(rr)) s_.breakdown_at = iteration;
    record(iteration);
  }

  void update_p(const T* z, T* p) override {
    if (s_.breakdown_at >= 0 || s_.converged_at >= 0) return;
    const T beta = T(s_.rz / rz_old_);
#pragma omp parallel for num_threads(threads_) if (threads_ > 1)
    for (std::int64_t i = 0; i < n_; ++i) p[i] = z[i] + beta * p[i];
  }

  CgScalars read_scalars() override { return s_; }
  std::vector<double> history() override { return history_; }

  void mark_solve_begin() override { solve_begin_ = Clock::now(); }
  void mark_solve_end() override { solve_end_ = Clock::now(); }
  double solve_seconds() override { return seconds_between(solve_begin_, solve_end_); }
  void mark_spmv_begin() override { spmv_begin_ = Clock::now(); }
  void mark_spmv_end() override {
    spmv_seconds_.push_back(seconds_between(spmv_begin_, Clock::now()));
  }
  std::vector<double> spmv_seconds() override { return spmv_seconds_; }

 private:
  void copy_n(const T* src, T* dst, std::size_t n) {
    if (n) std::memcpy(dst, src, n * sizeof(T));
  }

  // History and the first iteration at which the tolerance holds.
  void record(long iteration) {
    if (std::size_t(iteration) < history_capacity_) history_.push_back(s_.rr);
    if (s_.converged_at < 0 && s_.rr <= threshold_) s_.converged_at = iteration;
  }

  std::int64_t n_;
  int threads_;
  Device device_;
  CgScalars s_;
  double rz_old_ = 0, threshold_ = 0;
  std::size_t history_capacity_ = 0;
  std::vector<double> history_, spmv_seconds_;
  Clock::time_point solve_begin_, solve_end_, spmv_begin_;
};

}  // namespace

template <typename T>
std::unique_ptr<VectorOps<T>> make_cpu_vector_ops(std::size_t n, int threads, Device device) {
  if (device == Device::serial) threads = 1;
  if (threads <= 0) threads = omp_get_max_threads();
  return std::make_unique<CpuVectorOps<T>>(n, threads, device);
}

template std::unique_ptr<VectorOps<float>> make_cpu_vector_ops(std::size_t, int, Device);
template std::unique_ptr<VectorOps<double>> make_cpu_vector_ops(std::size_t, int, Device);

}  // namespace cgs
