// netsolve --study's checkpoint (<study csv>.partial): a study killed part way and run again with
// the same arguments resumes -- the rows it had written are not run again, a row cut short by
// the kill is dropped and run again -- and its CSV is the uninterrupted run's byte for byte; a
// checkpoint of another study is refused (exit 2) and left alone; a finished study leaves none.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "network_test_data.hpp"
#include "run_command.hpp"

namespace {

std::string text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("netsolve --study resumes from its checkpoint after a kill") {
  const std::string dir = std::filesystem::temp_directory_path().string() + "/study-resume-" +
                          std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string study = CGSOLVE_BINARY_DIR "/app/netsolve --network " +
                            cgs::net::test::repo_networks() +
                            "/synthetic/synthetic_200.inp --study closure --duration 24h "
                            "--threads 1 --quiet --study-csv ";
  const auto full = cgs::testing::run_command(study + dir + "/full.csv");
  REQUIRE(full.exit_code == 0);
  CHECK(!std::filesystem::exists(dir + "/full.csv.partial"));  // served, removed

  // Killed once the checkpoint holds its header and 5 rows (or when it ends by itself, which the
  // checks below then catch).
  const std::string partial = dir + "/cut.csv.partial";
  const auto killed = cgs::testing::run_command(
      "bash -c '" + study + dir + "/cut.csv & pid=$!; while kill -0 $pid 2>/dev/null && "
      "[ $(cat " + partial + " 2>/dev/null | wc -l) -lt 6 ]; do sleep 0.005; done; "
      "kill -9 $pid; wait $pid; true'");
  CHECK(killed.exit_code == 0);
  REQUIRE(std::filesystem::exists(partial));
  CHECK(!std::filesystem::exists(dir + "/cut.csv"));
  { std::ofstream(partial, std::ios::app) << "7\t12\t1\t3"; }  // a row cut short
  const auto resumed = cgs::testing::run_command(
      study.substr(0, study.find(" --quiet")) + " --study-csv " + dir + "/cut.csv");
  CHECK(resumed.exit_code == 0);
  CHECK(resumed.output.find("resuming: ") != std::string::npos);
  CHECK(text(dir + "/cut.csv") == text(dir + "/full.csv"));
  CHECK(!std::filesystem::exists(partial));

  // Another study's checkpoint: refused, untouched.
  { std::ofstream(dir + "/other.csv.partial") << "netsolve study checkpoint 0000000000000000\n"; }
  const auto other = cgs::testing::run_command(study + dir + "/other.csv");
  CHECK(other.exit_code == 2);
  CHECK(other.output.find("a checkpoint of another study") != std::string::npos);
  CHECK(text(dir + "/other.csv.partial") == "netsolve study checkpoint 0000000000000000\n");
  std::filesystem::remove_all(dir);
}
