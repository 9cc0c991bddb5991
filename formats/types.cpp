#include "formats/types.hpp"

namespace cgs {

namespace {
std::string located(const std::string& file, long line, const std::string& message) {
  if (file.empty()) return message;
  if (line <= 0) return file + ": " + message;
  return file + ":" + std::to_string(line) + ": " + message;
}
}  // namespace

InputError::InputError(std::string file, long line, const std::string& message)
    : std::runtime_error(located(file, line, message)), file_(std::move(file)), line_(line) {}

std::string to_string(Format format) {
  switch (format) {
    case Format::coo: return "coo";
    case Format::csr: return "csr";
    case Format::ell: return "ell";
    case Format::hll: return "hll";
  }
  return "?";
}

Format parse_format(const std::string& name) {
  if (name == "coo") return Format::coo;
  if (name == "csr") return Format::csr;
  if (name == "ell" || name == "ellpack") return Format::ell;
  if (name == "hll") return Format::hll;
  throw InputError("unknown format '" + name + "' (expected coo, csr, ell or hll)");
}

}  // namespace cgs
