// libFuzzer target: the EPANET .inp reader on text in memory (parse_inp, what read_inp does
// after opening the file), then the connectivity check netsolve runs before solving. An
// InputError is the expected answer to bad input; anything else escaping, a crash or a
// sanitizer report is a finding. The hydraulic solve is not run: a fuzzed network may
// legitimately take long to solve, and this target is about the reader.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "formats/types.hpp"
#include "network/hydraulics.hpp"
#include "network/inp_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  try {
    const cgs::net::Network net = cgs::net::parse_inp(in, "fuzz.inp");
    cgs::net::check_connectivity(net);
  } catch (const cgs::InputError&) {
  }
  return 0;
}
