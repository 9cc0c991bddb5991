#include "spmv/parallel_copy.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace cgs {

void parallel_copy(void* dst, const void* src, std::size_t bytes) {
  constexpr std::size_t kSlice = std::size_t(1) << 20;
  const std::int64_t slices = std::int64_t((bytes + kSlice - 1) / kSlice);
  auto* to = static_cast<char*>(dst);
  const auto* from = static_cast<const char*>(src);
#pragma omp parallel for schedule(static) if (slices >= 2)
  for (std::int64_t s = 0; s < slices; ++s) {
    const std::size_t offset = std::size_t(s) * kSlice;
    std::memcpy(to + offset, from + offset, std::min(kSlice, bytes - offset));
  }
}

}  // namespace cgs
