#include "formats/types.hpp"

namespace cgs {

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
