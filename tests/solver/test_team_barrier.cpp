// The fused CPU team's barrier (solver/fused/team_barrier.hpp): nobody passes before everybody has
// arrived, and what every thread wrote before it is seen by every thread after it.
#include <doctest/doctest.h>
#include <omp.h>

#include <cstdint>
#include <vector>

#include "solver/fused/team_barrier.hpp"

using namespace cgs;

namespace {

// Each round every thread writes round * 1000 + its id to its own slot, meets the others, and
// checks every slot; a second barrier keeps the next round's writes from racing the checks.
// Returns the number of wrong values seen (0 when the barrier works).
long count_violations(int threads, int rounds) {
  std::vector<long> slot(std::size_t(threads) * 16, -1);  // 16 longs apart: own cache lines
  TeamBarrier barrier(threads);
  long violations = 0;
#pragma omp parallel num_threads(threads) reduction(+ : violations)
  {
    const int me = omp_get_thread_num();
    if (omp_get_num_threads() == threads) {
      std::uint64_t epoch = 0;
      for (int round = 0; round < rounds; ++round) {
        slot[std::size_t(me) * 16] = long(round) * 1000 + me;
        barrier.wait(me, ++epoch);
        for (int other = 0; other < threads; ++other)
          violations += slot[std::size_t(other) * 16] != long(round) * 1000 + other;
        barrier.wait(me, ++epoch);
      }
    }
  }
  return violations;
}

}  // namespace

TEST_CASE("the team barrier: every write before it is seen after it, for any team size") {
  // 1 (no rounds), powers of two and not, and more threads than this machine's cores (the
  // waiting threads must yield, or this takes seconds).
  for (int threads : {1, 2, 3, 5, 8}) {
    CAPTURE(threads);
    CHECK(TeamBarrier(threads).threads() == threads);
    CHECK(count_violations(threads, 2000) == 0);
  }
}
