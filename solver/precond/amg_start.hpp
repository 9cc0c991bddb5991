// AMG's Lanczos start vector (the estimate of rho(D_F^-1 A_F) behind P's damping): spectrum.hpp's
// counter-based start (entry i a splitmix64 hash of i and a seed, made by every host core and
// every GPU thread alike) with AMG's own seed, so that its hierarchy does not move when
// Chebyshev's start does. (It replaced a serial mt19937_64 stream: ~9M draws at poisson2d:3000,
// most of a fresh GPU set-up's spectra phase besides the products, BENCHMARKS 20e.)
#pragma once

#include <cstdint>
#include <vector>

#include "formats/csr.hpp"
#include "solver/precond/spectrum.hpp"

namespace cgs::precond::amg {

inline constexpr std::uint64_t kLanczosSeed = 20261126;

// Entry i before normalization (the device kernel's, amg_gpu.cu).
CGS_HD double lanczos_start_entry(index_t i, std::uint64_t seed = kLanczosSeed) {
  return precond::lanczos_start_entry(i, seed);
}

// The whole start vector at unit norm, on every host core; its norm summed in a fixed order (the
// same bits whatever the thread count). The device's has the same entries and a norm summed in
// its own order: equal to rounding.
inline std::vector<double> hashed_lanczos_start(index_t n) { return lanczos_start(n, kLanczosSeed); }

}  // namespace cgs::precond::amg
