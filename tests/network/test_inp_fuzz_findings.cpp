// What fuzzing the .inp reader found (tests/fuzz/fuzz_inp.cpp), each with its reproducer
// (tests/fuzz/regressions/fuzz_inp, replayed by the fuzz target too) and the clean error it gets
// now. UndefinedBehaviorSanitizer (scripts/sanitize.sh) is what sees the undefined conversions
// if they come back; here the messages are checked.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "formats/types.hpp"
#include "network/hydraulics.hpp"
#include "network/inp_reader.hpp"

namespace cgs::net {
namespace {

namespace fs = std::filesystem;

const std::string kRegressions = CGSOLVE_SOURCE_DIR "/tests/fuzz/regressions/fuzz_inp";

Network parse(const std::string& text) {
  std::istringstream in(text);
  return parse_inp(in, "net.inp");
}

const std::string kNetwork =
    "[RESERVOIRS]\nR 100\n[JUNCTIONS]\nJ 10 5\n[PIPES]\nP R J 1000 12 100\n";

TEST_CASE("fuzz finding: counts in [OPTIONS] beyond int were converted with undefined behaviour") {
  // "Trials 9e12" went through static_cast<int>; TRIALS + UNBALANCED CONTINUE n and
  // trial + CHECKFREQ could overflow int in the trial loop.
  CHECK_THROWS_WITH_AS(read_inp(kRegressions + "/ub-trials-9e12-to-int.inp"),
                       doctest::Contains(":2: TRIALS must be between 1 and 100000000"), InputError);
  const std::pair<std::string, std::string> cases[] = {
      {"TRIALS 9e18", "TRIALS must be between 1 and 100000000"},
      {"TRIALS 0.5", "TRIALS must be between 1 and 100000000"},
      {"UNBALANCED CONTINUE 1e10", "UNBALANCED CONTINUE must be between 0 and 100000000"},
      {"UNBALANCED CONTINUE -1", "UNBALANCED CONTINUE must be between 0 and 100000000"},
      {"CHECKFREQ 3e9", "CHECKFREQ must be between 0 and 100000000"},
      {"MAXCHECK -2147483649", "MAXCHECK must be between 0 and 100000000"},
  };
  // Plain variables, not structured bindings: clang 14 cannot capture those in CAPTURE's lambda.
  for (const auto& option_message : cases) {
    const std::string& option = option_message.first;
    const std::string& message = option_message.second;
    CAPTURE(option);
    CHECK_THROWS_WITH_AS(parse(kNetwork + "[OPTIONS]\n" + option + "\n"),
                         doctest::Contains(("net.inp:8: " + message).c_str()), InputError);
  }
  const Network net = parse(kNetwork + "[OPTIONS]\nTRIALS 100000000\nUNBALANCED CONTINUE 7.9\n");
  CHECK(net.options.max_trials == 100'000'000);
  CHECK(net.options.extra_trials == 7);  // truncated, as EPANET does
}

TEST_CASE("fuzz finding: time values that are NaN, Inf or too large for a long are refused") {
  // Found with the count above: parse_time let NaN, Inf and 1e300 hours through to lround.
  const std::string cases[] = {"[TIMES]\nDURATION 1e300\n",
                               "[TIMES]\nDURATION nan\n",
                               "[TIMES]\nDURATION inf HOURS\n",
                               "[TIMES]\nPATTERN TIMESTEP 1:nan\n",
                               "[TIMES]\nSTART CLOCKTIME 1e10 DAYS\n",
                               "[CONTROLS]\nLINK P OPEN AT TIME 1e20\n"};
  for (const std::string& text : cases) {
    CAPTURE(text);
    // [TIMES] says "invalid option value", [CONTROLS] "invalid time": both name line 8.
    CHECK_THROWS_WITH_AS(parse(kNetwork + text), doctest::Contains("net.inp:8: invalid"),
                         InputError);
  }
  const Network net = parse(kNetwork + "[TIMES]\nDURATION 1000000000\n");
  CHECK(net.times.duration == 3'600'000'000'000L);
}

TEST_CASE("fuzz finding: a PDA option word alone read past its record for the message") {
  // fuzz_eps (2026-11-25): "MINIMUM" with nothing after it, as the file's last record, built
  // its "missing fields" message from a second token that was not there (a read past the
  // span, into the token vector's reserved capacity: an allocation of 0x7ffe00000005 bytes).
  // Since issue 48 a keyword without its value changes nothing, as in EPANET 2.3.5 (runepanet
  // runs these): read to the end, the option at its default.
  const Network bare = read_inp(kRegressions + "/oob-bare-minimum-option-name.inp");
  CHECK(bare.options.demand.minimum_pressure == 0);
  for (const char* word : {"MINIMUM", "REQUIRED", "PRESSURE EXPONENT"}) {
    CAPTURE(word);
    CHECK_NOTHROW(parse(kNetwork + "[OPTIONS]\n" + word + "\n"));
  }
}

TEST_CASE("every reproducer of a past .inp finding reads to a clean error") {
  for (const auto& entry : fs::directory_iterator(kRegressions)) {
    CAPTURE(entry.path().string());
    try {
      const Network net = read_inp(entry.path().string());
      check_connectivity(net);
    } catch (const InputError& error) {
      CHECK(error.file() == entry.path().string());
    }
  }
}

}  // namespace
}  // namespace cgs::net
