// The spectrum of a symmetrically scaled matrix S = diag(s) A diag(s), estimated by Lanczos:
// what Chebyshev (its interval) and AMG (the prolongator's damping, its smoothers' intervals)
// need. Deterministic: a fixed start vector and sums in a fixed order, so every set-up of one
// matrix gives the same bounds bit for bit, whatever the thread count.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "formats/csr.hpp"
#include "solver/cg_step.hpp"  // CGS_HD

namespace cgs::precond {

// Whether a loop over n rows (or entries) is worth a thread team: below this, starting the team
// and its barriers cost more than the loop (and on a loaded machine far more).
inline bool worth_threads(index_t n) { return n > 100000; }

struct Interval {
  double a, b;        // b: 1.1 x the largest Ritz value, never above Gershgorin; a: the smallest
  double ritz_max;    // the largest Ritz value after the steps
  double gershgorin;  // max_i sum_j |S_ij|, an upper bound of the spectrum
};

// Which entries of A the estimate sees: all of them, or (AMG's filtered matrix A_F) the
// diagonal replaced by `diagonal` and the off-diagonal entries where strong[k] is 0 dropped,
// without a copy of A.
struct EntryFilter {
  const std::vector<char>* strong = nullptr;      // per entry of A; null: every entry
  const std::vector<double>* diagonal = nullptr;  // per row; with strong only
};

// `steps` Lanczos steps (at most n) on diag(scale) A diag(scale), on every host core; with
// steps = 0 no Lanczos: b = ritz_max = the Gershgorin bound, a = b / 2. start: the unit start
// vector (n entries), or null for lanczos_start(n).
Interval spectrum_bounds(const CsrMatrix<double>& A, const std::vector<double>& scale, int steps,
                         const EntryFilter& filter = {},
                         const std::vector<double>* start = nullptr);

inline constexpr std::uint64_t kLanczosStartSeed = 20261123;

// The pieces of spectrum_bounds's Lanczos that another device's Lanczos shares (amg_gpu.cu,
// spectrum_gpu.cu), so that both start alike and read their tridiagonal alike: the start vector
// (entry i a function of i alone, lanczos_start_entry, made on every core, and on the device
// by the same function; then scaled to unit norm), and the smallest and largest eigenvalues of
// the tridiagonal with diagonal alpha and off-diagonal beta (beta.size() == alpha.size() - 1).
std::vector<double> lanczos_start(index_t n, std::uint64_t seed = kLanczosStartSeed);
// Entry i of the start vector before its scaling: splitmix64 of (seed + (i + 1) golden) as a
// uniform number in [-1, 1), the same bits on every core and on the device (integer arithmetic,
// then an exact scaling; the 53 high bits). A counter-based hash instead of one mt19937_64
// stream, which was serial over n (0.1 s of cheb:8's set-up at 9M rows). splitmix64
// (Steele, Lea, Flood 2014) passes BigCrush on consecutive counters. AMG's damping estimate uses
// its own seed (amg_start.hpp).
CGS_HD double lanczos_start_entry(index_t i, std::uint64_t seed = kLanczosStartSeed) {
  std::uint64_t z = seed + std::uint64_t(i) * 0x9e3779b97f4a7c15ull + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return double(z >> 11) * 0x1.0p-52 - 1.0;
}
std::pair<double, double> ritz_extremes(const std::vector<double>& alpha,
                                        const std::vector<double>& beta);
// The interval both Lanczos loops (host and device) report from their tridiagonal and the
// Gershgorin bound: b = 1.1 x the largest Ritz value, never above Gershgorin; a the smallest.
Interval interval_from_lanczos(const std::vector<double>& alpha, const std::vector<double>& beta,
                               double gershgorin);

}  // namespace cgs::precond
