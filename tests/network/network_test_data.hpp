// Where the network tests find their data: the small files copied into data/networks/, and the
// full collection in ../shared/data beside the repository (absent: those tests skip, saying so).
#pragma once

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

namespace cgs::net::test {

inline std::string repo_networks() { return std::string(CGSOLVE_SOURCE_DIR) + "/data/networks"; }

inline std::string shared_data() { return std::string(CGSOLVE_SOURCE_DIR) + "/../shared/data"; }

inline bool have_shared_data() {
  const bool present = std::filesystem::is_directory(shared_data() + "/networks");
  if (!present)
    MESSAGE("skipped: " << shared_data() << " is absent (EPANET networks and references)");
  return present;
}

}  // namespace cgs::net::test
