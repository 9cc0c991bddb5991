// A team of host threads for a run's parallel loops (a trial's head loss coefficients, the
// factorisation's subtrees: hydsolver.cpp, cholesky_subtrees.hpp). run(f) calls f(0) on the
// caller and f(1) .. f(size - 1) on the team's threads, and returns once every call has returned.
//
// Between calls the threads sleep (a futex wait after a short spin), and so does the caller
// while it waits for them. On a machine shared with other work (2 cores and a build; tests in
// parallel) a thread that spins keeps the one it waits for off the core: with OpenMP's spinning
// waits, a 2-thread run of Net3 on a loaded 2-core machine took 0.7 s where one thread takes 2 ms.
#pragma once

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

namespace cgs::net {

class HostTeam {
 public:
  explicit HostTeam(int size);  // size - 1 threads are started
  ~HostTeam();
  HostTeam(const HostTeam&) = delete;
  HostTeam& operator=(const HostTeam&) = delete;
  int size() const { return size_; }
  template <typename F>
  void run(F& f) {  // f(int member); no allocation (a std::function may allocate)
    run_erased([](void* context, int member) { (*static_cast<F*>(context))(member); }, &f);
  }
  // Member `member`'s share of `items` items, split evenly in order: [begin, end).
  static void share(int items, int member, int members, int& begin, int& end);

 private:
  int size_;
  std::vector<std::thread> threads_;
  void (*call_)(void*, int) = nullptr;
  void* context_ = nullptr;
  std::atomic<unsigned> generation_{0};  // one more per run (and at the end)
  std::atomic<int> pending_{0};          // the team's threads still in this run's job
  bool stop_ = false;
  void serve(int member);
  void run_erased(void (*call)(void*, int), void* context);
};

// A team made when first asked for, of the size asked; copies start without one (each owner's
// copy makes its own: a team runs one job at a time).
class TeamSlot {
 public:
  TeamSlot() = default;
  TeamSlot(const TeamSlot&) {}
  TeamSlot& operator=(const TeamSlot&) { return *this; }
  TeamSlot(TeamSlot&&) = default;
  TeamSlot& operator=(TeamSlot&&) = default;
  // A team of `size` (nullptr for size <= 1: the caller runs alone).
  HostTeam* get(int size);

 private:
  std::unique_ptr<HostTeam> team_;
};

}  // namespace cgs::net
