// Basic types shared by every format, backend and solver.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace cgs {

// 32-bit row and column indices, as the formats and kernels store them.
// Offsets into padded arrays (ELL, HLL) are 64-bit: padding can pass 2^31.
using index_t = std::int32_t;
using offset_t = std::int64_t;

enum class Format { coo, csr, ell, hll };
enum class Precision { single, double_ };

std::string to_string(Format format);
Format parse_format(const std::string& name);  // throws std::invalid_argument

// Bad input (a file, a value, an option): the program reports it and exits 2.
// `file` and `line` are empty/0 when the problem has no place in a file.
class InputError : public std::runtime_error {
 public:
  InputError(std::string file, long line, const std::string& message);
  explicit InputError(const std::string& message) : InputError("", 0, message) {}
  const std::string& file() const { return file_; }
  long line() const { return line_; }

 private:
  std::string file_;
  long line_;
};

}  // namespace cgs
