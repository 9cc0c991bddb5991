// How close --format auto comes to the best combination a benchmark measured (issue 6, target
// 5: within 10%). Header-only so that tests/solver can check the verdict without the benchmarks.
#pragma once

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace cgs::bench {

constexpr double kAutoTolerance = 0.10;  // "within 10% of the best measured combination"

struct Measurement {
  std::string label;   // the combination, e.g. "cgsolve csr/omp fused loop sorted"
  double seconds = 0;  // its time (per CG iteration, or per product); NaN = not measured
};

struct AutoVerdict {
  double best_seconds = std::numeric_limits<double>::quiet_NaN();
  std::string best_label;
  double ratio = std::numeric_limits<double>::quiet_NaN();  // auto / best (< 1: auto was faster)
  std::string verdict = "n/a";  // "yes" within the tolerance, "no", "n/a" nothing to compare
};

// Compares auto's time with the fastest finite, positive measurement.
inline AutoVerdict judge_auto(double auto_seconds, const std::vector<Measurement>& measured,
                              double tolerance = kAutoTolerance) {
  AutoVerdict v;
  for (const Measurement& m : measured) {
    if (std::isfinite(m.seconds) && m.seconds > 0 && !(m.seconds >= v.best_seconds)) {
      v.best_seconds = m.seconds;
      v.best_label = m.label;
    }
  }
  if (!std::isfinite(v.best_seconds) || !std::isfinite(auto_seconds) || auto_seconds <= 0) return v;
  v.ratio = auto_seconds / v.best_seconds;
  v.verdict = v.ratio <= 1 + tolerance ? "yes" : "no";
  return v;
}

// "k of N within 10%" ("n/a" verdicts are not counted).
inline std::string count_within(const std::vector<std::string>& verdicts) {
  int within = 0, judged = 0;
  for (const std::string& v : verdicts) {
    judged += v != "n/a";
    within += v == "yes";
  }
  return std::to_string(within) + " of " + std::to_string(judged) + " within " +
         std::to_string(int(std::lround(100 * kAutoTolerance))) + "%";
}

}  // namespace cgs::bench
