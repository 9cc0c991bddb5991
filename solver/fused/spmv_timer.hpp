// The SpMV time of a fused CPU loop, taken inside the loop: the pass that computes q = A p (with
// the p and x updates fused into it) between two clock reads that one thread makes at the
// barriers the loop already has.
//
// A clock read costs some 20 ns; an iteration of a tiny system costs well under a microsecond
// (LFAT5, n = 14: 0.06 us serially), where timing every iteration would cost most of it. So the
// first kCalibration iterations are all timed, and from then on only every `every`-th, with
// `every` chosen so that the two reads cost at most 1% of the time between two timed passes;
// the report says when it sampled.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include "solver/cg_types.hpp"

namespace cgs::fused {

class SpmvTimer {
 public:
  using Clock = std::chrono::steady_clock;

  explicit SpmvTimer(bool enabled) : enabled_(enabled) {}

  // Whether iteration k's pass is timed.
  bool wanted(long k) const { return enabled_ && (k <= kCalibration || k % every_ == 0); }
  void begin() { start_ = Clock::now(); }
  void end(long k) {
    samples_.push_back(std::chrono::duration<double>(Clock::now() - start_).count());
    if (k == kCalibration) choose_stride();
  }

  SpmvTimes result(const char* what) {
    SpmvTimes t;
    if (!enabled_ || samples_.empty()) return t;
    // The calibration iterations are timed densely; keep only those the stride would have
    // picked, so that every iteration weighs the same in the statistics.
    for (std::size_t i = 0; i < samples_.size(); ++i) {
      const long k = i < std::size_t(kCalibration) ? long(i) + 1 : 0;
      if (k == 0 || k % every_ == 0) t.samples.push_back(samples_[i]);
    }
    if (t.samples.empty()) t.samples = samples_;
    t.every = int(every_);
    t.what = what;
    return t;
  }

 private:
  static constexpr long kCalibration = 32;

  void choose_stride() {
    std::vector<double> s = samples_;
    std::nth_element(s.begin(), s.begin() + s.size() / 2, s.end());
    const double pass = s[s.size() / 2];
    // 2 reads <= 1% of (every * pass); the pass is less than an iteration, so this is safe.
    every_ = std::max(1L, long(std::ceil(2 * read_cost() / (0.01 * std::max(pass, 1e-12)))));
  }

  // The cost of one clock read, measured once per process.
  static double read_cost() {
    static const double cost = [] {
      constexpr int kReads = 2000;
      const auto start = Clock::now();
      Clock::time_point last = start;
      for (int i = 0; i < kReads; ++i) last = Clock::now();
      return std::chrono::duration<double>(last - start).count() / kReads;
    }();
    return cost;
  }

  bool enabled_;
  long every_ = 1;
  Clock::time_point start_;
  std::vector<double> samples_;
};

}  // namespace cgs::fused
