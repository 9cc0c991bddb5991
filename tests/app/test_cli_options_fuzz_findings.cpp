// The fuzz_cli_options harness (tests/fuzz/cli_options_harness.hpp) outside libFuzzer: its seeds
// get the answers they should (so the target starts from values that reach the solve), every
// reproducer of a past finding (tests/fuzz/regressions/fuzz_cli_options) runs clean, and the loop
// names refuse what CLI11's validators would have let through.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "cli_options.hpp"
#include "fuzz/cli_options_harness.hpp"
#include "spmv/cuda/cuda_backends.hpp"

namespace cgs::fuzz {
namespace {

namespace fs = std::filesystem;

const fs::path kFuzz = CGSOLVE_SOURCE_DIR "/tests/fuzz";

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST_CASE("fuzz_cli_options: the seeds solve, or are refused for the reason they should be") {
  const bool gpu = cuda_device_available(nullptr);
  const OptionsOutcome on_gpu = gpu ? OptionsOutcome::converged : OptionsOutcome::no_device;
  const std::pair<const char*, OptionsOutcome> seeds[] = {
      {"jacobi-csr-cpu", OptionsOutcome::converged},
      {"ic0-ell-serial", OptionsOutcome::converged},
      {"fsai-hll-cpu", OptionsOutcome::converged},
      {"auto-auto-cpu", OptionsOutcome::converged},
      {"ic0-parts-omp", OptionsOutcome::converged},
      {"none-coo-gpu", on_gpu},
      {"cheb-csr-stream-gpu", on_gpu},
      {"bjacobi-hll-kernel-auto", on_gpu},
  };
  for (const auto& seed : seeds) {
    CAPTURE(seed.first);
    const CliOptionsOutcome outcome = run_cli_options(read_text(kFuzz / "corpus" /
                                                                "fuzz_cli_options" / seed.first));
    CHECK(static_cast<int>(outcome.solve) == static_cast<int>(seed.second));
    CHECK(outcome.duration_given);
    CHECK(outcome.duration_read);
  }
  const CliOptionsOutcome durations = run_cli_options("none\ncsr\n\nauto\ncpu\n90min");
  CHECK(durations.duration == 5400);
  CHECK(run_cli_options("none\ncsr\n\nauto\ncpu\n-1h").duration_read == false);
  CHECK(run_cli_options("nonsense").solve == OptionsOutcome::refused);
  CHECK(run_cli_options("none\nbcsr").solve == OptionsOutcome::refused_by_cli);
  CHECK(run_cli_options("none\ncsr\nscalar\nauto\ncpu").solve == OptionsOutcome::refused);
}

TEST_CASE("fuzz_cli_options: every reproducer of a past finding runs clean") {
  const fs::path dir = kFuzz / "regressions" / "fuzz_cli_options";
  if (!fs::exists(dir)) return;
  for (const auto& entry : fs::directory_iterator(dir)) {
    CAPTURE(entry.path().string());
    CHECK_NOTHROW(run_cli_options(read_text(entry.path())));
  }
}

TEST_CASE("--cpu-loop and --gpu-loop values: the named loops, anything else refused by name") {
  CHECK(parse_cpu_loop("fused") == CpuLoopAsk::automatic);
  CHECK(parse_cpu_loop("fused-team") == CpuLoopAsk::team);
  CHECK(parse_gpu_loop("cluster") == GpuLoopAsk::cluster);
  CHECK(parse_gpu_loop("auto") == GpuLoopAsk::automatic);
  // Before, resolve() took any unknown name for auto; CLI11's validator was the only guard.
  CHECK_THROWS_WITH_AS(parse_gpu_loop("persistant"),
                       doctest::Contains("--gpu-loop: unknown loop 'persistant'"), InputError);
  CHECK_THROWS_WITH_AS(parse_cpu_loop(""), doctest::Contains("--cpu-loop: unknown loop ''"),
                       InputError);
}

}  // namespace
}  // namespace cgs::fuzz
