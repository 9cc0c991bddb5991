// netsolve run as a process on the networks in data/networks: the solver choice, exit codes, the
// report.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "network/linear_solver.hpp"
#include "network_test_data.hpp"

namespace fs = std::filesystem;

namespace {

const std::string kNetsolve = CGSOLVE_BINARY_DIR "/app/netsolve";

struct Run {
  int exit_code;
  std::string output;  // stdout and stderr together
};

Run netsolve(const std::string& arguments) {
  const std::string command = kNetsolve + " " + arguments + " 2>&1";
  std::FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string output;
  char buffer[4096];
  while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

fs::path scratch_dir() {
  fs::path dir = fs::temp_directory_path() / ("netsolve-cli-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

const std::string kNet1 = cgs::net::test::repo_networks() + "/Net1.inp";
const std::string kReference = cgs::net::test::repo_networks() + "/reference";

}  // namespace

TEST_CASE("netsolve solves with the direct solver by default and says which backend ran") {
  const Run r = netsolve("--network " + kNet1 + " --reference " + kReference);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.output, cgs::net::cholmod_available() ? "direct: CHOLMOD" : "direct: Eigen"));
  CHECK(contains(r.output, ": match"));
}

TEST_CASE("netsolve --solver cg still solves with CG") {
  const Run r = netsolve("--network " + kNet1 + " --solver cg --device serial " + "--reference " +
                         kReference);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.output, "cg/csr/serial"));
  CHECK(contains(r.output, ": match"));
}

TEST_CASE("netsolve refuses an unknown solver") {
  const Run r = netsolve("--network " + kNet1 + " --solver lu");
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "--solver"));
}

TEST_CASE("netsolve's JSON report names the solver") {
  const fs::path report = scratch_dir() / "run.json";
  const Run r = netsolve("--network " + kNet1 + " --quiet --report " + report.string());
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.empty());
  std::ifstream in(report);
  const auto j = nlohmann::json::parse(in);
  CHECK(j["solver"]["kind"] == "direct");
  CHECK(j["solver"]["backend"] == (cgs::net::cholmod_available() ? "cholmod" : "eigen"));
  CHECK(contains(j["solver"]["name"].get<std::string>(), "direct:"));
  fs::remove_all(report.parent_path());
}
