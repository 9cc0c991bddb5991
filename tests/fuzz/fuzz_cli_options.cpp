// libFuzzer target: cgsolve's option values (--precond, --format, --kernel, --gpu-loop,
// --device) and netsolve's --duration, through the code the command lines run
// (cli_options_harness.hpp says what runs and what counts as a finding).
#include <cstddef>
#include <cstdint>
#include <string>

#include "cli_options_harness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 256) return 0;  // command-line values: longer ones add nothing but time
  cgs::fuzz::run_cli_options(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
