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

  void begin(const T* b, double tol, double atol, long long max_iters,
             std::size_t history_capacity) override {
    double bb = 0;
#pragma omp parallel for reduction(+ : bb) num_threads(threads_) if (threads_ > 1)
    for (std::int64_t i = 0; i < n_; ++i) bb += double(b[i]) * double(b[i]);
    s_ = cg::begin(bb, tol, atol, max_iters);
    history_capacity_ = history_capacity;
    history_.clear();
    spmv_seconds_.clear();
  }

  void residual(const T* b, const T* Ax, T* r, bool pointwise, const T* d, T* z) override {
    double rr = 0, rz = 0;
#pragma omp parallel for reduction(+ : rr, rz) num_threads(threads_) if (threads_ > 1)
    for (std::int64_t i = 0; i < n_; ++i) {
      r[i] = b[i] - Ax[i];
      rr += double(r[i]) * double(r[i]);
      if (d) {
        z[i] = d[i] * r[i];
        rz += double(r[i]) * double(z[i]);
      }
    }
    rr_pending_ = rr;
    if (pointwise) finish_rz(d ? rz : rr, 0);
  }

  void dot_rz(const T* r, const T* z, long k) override {
    if (k > 0 && s_.stopped) return;
    double rz = 0;
#pragma omp parallel for reduction(+ : rz) num_threads(threads_) if (threads_ > 1)
    for (std::int64_t i = 0; i < n_; ++i) rz += double(r[i]) * double(z[i]);
    finish_rz(rz, k);
  }

  void dot_pq(const T* p, const T* q, long k) override {
    if (s_.stopped) return;
    double pq = 0;
#pragma omp parallel for reduction(+ : pq) num_threads(threads_) if (threads_ > 1)
    for (std::int64_t i = 0; i < n_; ++i) pq += double(p[i]) * double(q[i]);
    cg::step(s_, pq, k);
  }

  void update_xr(const T* p, const T* q, T* x, T* r, bool pointwise, const T* d, T* z,
                 long k) override {
    if (s_.stopped) return;  // converged earlier, or step() found a breakdown
    const T alpha = T(s_.alpha);
    double rr = 0, rz = 0;
#pragma omp parallel for reduction(+ : rr, rz) num_threads(threads_) if (threads_ > 1)
    for (std::int64_t i = 0; i < n_; ++i) {
      x[i] = cg::next_x(x[i], alpha, p[i]);
      r[i] = cg::next_r(r[i], alpha, q[i]);
      rr += double(r[i]) * double(r[i]);
      if (d) {
        z[i] = d[i] * r[i];
        rz += double(r[i]) * double(z[i]);
      }
    }
    rr_pending_ = rr;
    if (pointwise) finish_rz(d ? rz : rr, k);
  }

  void update_p(const T* z, T* p) override {
    if (s_.stopped) return;
    const T beta = T(s_.beta);
#pragma omp parallel for num_threads(threads_) if (threads_ > 1)
    for (std::int64_t i = 0; i < n_; ++i) p[i] = cg::next_p(z[i], beta, p[i]);
  }

  cg::State read_state() override { return s_; }
  std::vector<double> history() override { return history_; }

  void mark_solve_begin() override { solve_begin_ = Clock::now(); }
  void mark_solve_end() override { solve_end_ = Clock::now(); }
  double solve_seconds() override { return seconds_between(solve_begin_, solve_end_); }
  void mark_spmv_begin() override { spmv_begin_ = Clock::now(); }
  void mark_spmv_end() override {
    spmv_seconds_.push_back(seconds_between(spmv_begin_, Clock::now()));
  }
  std::vector<double> spmv_seconds() override { return spmv_seconds_; }
  void clear_spmv_seconds() override { spmv_seconds_.clear(); }

 private:
  void copy_n(const T* src, T* dst, std::size_t n) {
    if (n) std::memcpy(dst, src, n * sizeof(T));
  }

  // r.r (kept from the update) and r.z known: the decision of iteration k, and its history.
  void finish_rz(double rz, long k) {
    if (k == 0)
      cg::started(s_, rr_pending_, rz);
    else
      cg::stepped(s_, rr_pending_, rz, k);
    if (std::size_t(k) < history_capacity_) history_.push_back(rr_pending_);
  }

  std::int64_t n_;
  int threads_;
  Device device_;
  cg::State s_{};
  double rr_pending_ = 0;
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
