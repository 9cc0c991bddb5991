// netsolve run as a process: outputs never destroy inputs.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "run_command.hpp"

namespace fs = std::filesystem;

namespace {

const std::string kNetsolve = CGSOLVE_BINARY_DIR "/app/netsolve";
const std::string kData = CGSOLVE_SOURCE_DIR "/data";

using cgs::testing::Run;
using cgs::testing::run_command;

Run netsolve(const std::string& arguments) {
  const std::string command = kNetsolve + " " + arguments;
  return run_command(command);
}

}  // namespace

TEST_CASE("netsolve refuses an output that names its network or reference files") {
  const fs::path dir =
      fs::temp_directory_path() / ("netsolve-app-test-" + std::to_string(::getpid()));
  fs::create_directories(dir / "ref");
  const fs::path network = dir / "Net1.inp";
  fs::copy_file(kData + "/networks/Net1.inp", network);
  fs::copy_file(kData + "/networks/reference/Net1_nodes.csv", dir / "ref" / "Net1_nodes.csv");
  fs::copy_file(kData + "/networks/reference/Net1_links.csv", dir / "ref" / "Net1_links.csv");
  fs::create_symlink(network, dir / "alias.inp");
  const auto size = fs::file_size(network);
  const std::string base =
      "--network " + network.string() + " --reference " + (dir / "ref").string();
  for (const std::string& output :
       {"--nodes " + network.string(), "--links " + (dir / "alias.inp").string(),
        "--report " + (dir / "." / "Net1.inp").string(),
        "--nodes " + (dir / "ref" / "Net1_nodes.csv").string(),
        "--export-systems " + network.string()}) {
    CAPTURE(output);
    const Run r = netsolve(base + " " + output);
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("refusing to overwrite") != std::string::npos);
  }
  CHECK(fs::file_size(network) == size);
  CHECK(netsolve(base + " --quiet --nodes " + (dir / "nodes.csv").string()).exit_code == 0);
  fs::remove_all(dir);
}

TEST_CASE("netsolve's report holds every tuning field; one that differs is in the summary") {
  const fs::path dir =
      fs::temp_directory_path() / ("netsolve-tuning-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string json = (dir / "r.json").string();
  const std::string base =
      "--network " + kData + "/networks/Net1.inp --duration 0 --report " + json;
  Run r = netsolve(base);
  REQUIRE(r.exit_code == 0);
  {
    std::ifstream in(json);
    const nlohmann::json t = nlohmann::json::parse(in)["tuning"];
    CHECK(t.size() == 17);
    CHECK(t["huge_pages"] == true);
    CHECK(t["netsolve_debug"] == false);
  }
  CHECK(r.output.find("tuning:") == std::string::npos);
  r = netsolve(base + " --huge-pages off");
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("tuning: huge_pages = off") != std::string::npos);
  std::ifstream in(json);
  CHECK(nlohmann::json::parse(in)["tuning"]["huge_pages"] == false);
  fs::remove_all(dir);
}
