// A dissemination barrier for the fused CPU CG team (solver/fused/cpu_team.cpp).
//
// Why not `#pragma omp barrier`: a team iteration of the fused loop is two barriers, and on the
// small systems of water networks they are most of it. libgomp's barrier is centralised: every
// thread increments one counter, so with 16 threads 16 read-modify-writes of one cache line
// follow each other (about 2 us a barrier; bench/teamsweep). Here, in each of
// ceil(log2 T) rounds, thread i raises a flag of its own for thread i + 2^r and waits for the
// one thread i - 2^r raised for it: every thread has heard from every other after the last
// round, and no cache line is written by more than one thread.
//
// Memory order: every flag is stored with release and read with acquire, and a thread stores
// its round-r flag only after it has read its round-(r-1) one, so all writes of every thread
// before the barrier happen before all reads after it (the chains of the dissemination
// pattern reach every pair of threads).
//
// Waiting spins, then yields the core: on a machine with more threads than free cores (tests
// run in parallel, a shared host) a spinning thread must not keep the one it waits for off the CPU.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace cgs {

class TeamBarrier {
 public:
  explicit TeamBarrier(int threads) : threads_(std::max(1, threads)) {
    while ((1 << rounds_) < threads_) ++rounds_;
    flags_ = std::vector<Flag>(std::size_t(threads_) * std::size_t(std::max(1, rounds_)));
  }
  TeamBarrier(const TeamBarrier&) = delete;
  TeamBarrier& operator=(const TeamBarrier&) = delete;

  int threads() const { return threads_; }

  // Thread `me` (0 .. threads - 1) arrives at its `epoch`-th barrier (1, 2, ...: each thread
  // counts its own, and all threads pass the same barriers in the same order).
  void wait(int me, std::uint64_t epoch) {
    for (int round = 0, distance = 1; round < rounds_; ++round, distance *= 2) {
      flag((me + distance) % threads_, round).store(epoch, std::memory_order_release);
      spin_until_reached(flag(me, round), epoch);
    }
  }

 private:
  struct alignas(64) Flag {
    std::atomic<std::uint64_t> value{0};
  };

  std::atomic<std::uint64_t>& flag(int thread, int round) {
    return flags_[std::size_t(thread) * std::size_t(rounds_) + std::size_t(round)].value;
  }

  // >=, not ==: a partner already in the next barrier may have raised the flag again.
  static void spin_until_reached(const std::atomic<std::uint64_t>& flag, std::uint64_t epoch) {
    constexpr int kSpinsBeforeYield = 4000;
    for (int spins = 0; flag.load(std::memory_order_acquire) < epoch; ++spins) {
      if (spins < kSpinsBeforeYield)
        pause();
      else
        std::this_thread::yield();
    }
  }

  static void pause() {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#endif
  }

  int threads_;
  int rounds_ = 0;
  std::vector<Flag> flags_;
};

}  // namespace cgs
