// AMG's Lanczos start vector (the estimate of rho(D_F^-1 A_F) behind P's damping), counter-based:
// entry i is a hash of (i, seed) alone, so every host core and every GPU thread makes its share
// of the vector independently and the same. spectrum.hpp's lanczos_start draws one mt19937_64
// stream instead, serially: ~9M draws at poisson2d:3000, most of a fresh GPU set-up's spectra
// phase besides the products (BENCHMARKS 20e).
#pragma once

#include <cstdint>
#include <vector>

#include "formats/csr.hpp"

#if defined(__CUDACC__)
#define CGS_AMG_HD __host__ __device__ inline
#else
#define CGS_AMG_HD inline
#endif

namespace cgs::precond::amg {

inline constexpr std::uint64_t kLanczosSeed = 20261126;

// Entry i before normalization: splitmix64 of the seeded index, its top 53 bits mapped to
// [-1, 1). splitmix64 (Steele, Lea, Flood 2014) passes BigCrush on consecutive counters, so the
// entries are as good as a random stream's (a weaker hash of the index once cost Chebyshev
// iterations through a low estimate: spectrum.cpp).
CGS_AMG_HD double lanczos_start_entry(index_t i, std::uint64_t seed = kLanczosSeed) {
  std::uint64_t z = seed + (std::uint64_t(i) + 1) * 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return double(z >> 11) * (2.0 / 9007199254740992.0) - 1.0;  // 2^53
}

// The whole start vector at unit norm, on every host core; its norm summed in a fixed order (the
// same bits whatever the thread count). The device's (amg_gpu.cu) has the same entries and a norm
// summed in its own order: equal to rounding.
std::vector<double> hashed_lanczos_start(index_t n);

}  // namespace cgs::precond::amg
