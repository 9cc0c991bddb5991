// The fuzz_eps harness (tests/fuzz/eps_harness.hpp) outside libFuzzer: every reproducer of a past
// finding (tests/fuzz/regressions/fuzz_eps) runs clean, and every seed the target starts from
// (tests/fuzz/corpus/fuzz_inp, the networks cut from the shared ones) reaches the simulation, so
// the fuzzer starts past the reader.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "fuzz/eps_harness.hpp"

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

TEST_CASE("fuzz_eps: every seed network the reader takes is connected and steps through time") {
  // Not every seed is read: net3-cut.inp is a reader seed (it names a node it cut). Those the
  // reader takes (the DEMAND MODEL PDA ones too, since pressure-driven analysis landed) must get past
  // the connectivity check into the stepping, where this target looks for findings.
  int simulated = 0;
  for (const auto& entry : fs::directory_iterator(kFuzz / "corpus" / "fuzz_inp")) {
    CAPTURE(entry.path().string());
    EpsOutcome outcome;
    CHECK_NOTHROW(outcome = run_bounded_eps(read_text(entry.path())));
    if (!outcome.parsed) continue;
    CHECK(outcome.simulated);
    CHECK(outcome.steps >= 2);  // every seed has a duration: at least two periods
    simulated += outcome.simulated;
  }
  CHECK(simulated >= 10);
}

TEST_CASE("fuzz_eps: the bounds end a long run quietly, and bad input is InputError's") {
  // A 1-second step over 2 hours would be 7,200 periods: the step bound ends it.
  const std::string network =
      "[RESERVOIRS]\nR 100\n[TANKS]\nT 50 10 0 20 30 0\n[JUNCTIONS]\nJ 10 5\n"
      "[PIPES]\nP1 R J 1000 12 100\nP2 J T 500 8 100\n"
      "[TIMES]\nDURATION 48:00\nHYDRAULIC TIMESTEP 0:00:01\n";
  const EpsOutcome outcome = run_bounded_eps(network);
  CHECK(outcome.simulated);
  CHECK(outcome.bounded);
  CHECK(outcome.steps == eps_bounds::kMaxSteps);
  const EpsOutcome refused = run_bounded_eps("[PIPES]\nP1 R J 1000 12 100\n");
  CHECK_FALSE(refused.parsed);
  CHECK_FALSE(refused.simulated);
}

TEST_CASE("fuzz_eps: every reproducer of a past finding runs clean") {
  const fs::path dir = kFuzz / "regressions" / "fuzz_eps";
  if (!fs::exists(dir)) return;
  for (const auto& entry : fs::directory_iterator(dir)) {
    CAPTURE(entry.path().string());
    CHECK_NOTHROW(run_bounded_eps(read_text(entry.path())));
  }
}

}  // namespace
}  // namespace cgs::fuzz
