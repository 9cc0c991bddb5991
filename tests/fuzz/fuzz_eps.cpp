// libFuzzer target: a short extended-period simulation of a fuzzed small network (eps_harness.hpp
// says what runs, the bounds, and what counts as a finding). fuzz_inp covers the reader alone;
// this one reaches the stepping: patterns, controls, rules, tanks and the time steps.
#include <cstddef>
#include <cstdint>
#include <string>

#include "eps_harness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 8192) return 0;  // a small network: the seeds are ~1-7 kB
  cgs::fuzz::run_bounded_eps(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
