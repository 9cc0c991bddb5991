// What the two library APIs (api/solver_api.cpp, api/network_api.cpp) share: the programs' options
// parsed by the programs' own definitions (so values are checked, and refused, with the same
// words), and the engine's exceptions turned into the API's.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <utility>
#include <vector>

#include "base/input_error.hpp"
#include "cgsolve/api.hpp"
#include "spmv/backend.hpp"

namespace cgsolve::detail {

using Args = std::vector<std::pair<std::string, std::string>>;

// Parses name/value pairs ("--tol", "1e-8"; a flag with an empty value) with `app`'s options;
// CLI11's message as InputError otherwise.
inline void parse_args(CLI::App& app, const Args& args) {
  std::vector<std::string> argv;  // CLI11 takes them last first
  for (auto it = args.rbegin(); it != args.rend(); ++it) {
    if (!it->second.empty()) argv.push_back(it->second);
    argv.push_back(it->first);
  }
  try {
    app.parse(argv);
  } catch (const CLI::ParseError& e) {
    throw InputError(e.what());
  }
}

std::string number_text(double v);

// Runs f, the engine's exceptions rethrown as the API's with the programs' messages.
template <typename F>
auto translating(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const cgs::InputError& e) {
    throw InputError(e.what());
  } catch (const cgs::DeviceError& e) {
    throw DeviceError(std::string("GPU not available: ") + e.what());
  } catch (const std::invalid_argument& e) {
    throw InputError(e.what());
  }
}

}  // namespace cgsolve::detail
