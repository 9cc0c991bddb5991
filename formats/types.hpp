// Basic types shared by every format, backend and solver.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "base/input_error.hpp"

namespace cgs {

// 32-bit row and column indices, as the formats and kernels store them.
// Offsets into padded arrays (ELL, HLL) are 64-bit: padding can pass 2^31.
using index_t = std::int32_t;
using offset_t = std::int64_t;

enum class Format { coo, csr, ell, hll };
enum class Precision { single, double_ };

std::string to_string(Format format);
Format parse_format(const std::string& name);  // throws std::invalid_argument

}  // namespace cgs
