// What a fuzz harness throws when it sees a finding that is not a crash (a wrong answer, a run
// that does not move on). The libFuzzer target lets it escape, so std::terminate aborts and
// libFuzzer keeps the input; the ordinary tests that replay reproducers (tests/*/test_*fuzz*.cpp)
// see it as an exception with the reason.
#pragma once

#include <stdexcept>

namespace cgs::fuzz {

struct Finding : std::logic_error {
  using std::logic_error::logic_error;
};

}  // namespace cgs::fuzz
