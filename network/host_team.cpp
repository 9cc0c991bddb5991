#include "network/host_team.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace cgs::net {
namespace {

// A short poll (a pause is up to ~140 cycles on recent x86: about 3 us in all) before a futex
// wait: a run that follows at once is caught without a system call, and a thread waiting for one
// that is off the core (a loaded machine) gives the core up soon. 2,000 polls cost a loaded
// 2-core machine 0.09 s of a 0.15 s BWSN_Network_2 run on 2 threads.
constexpr int kSpins = 64;

void pause() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

// Until `value` differs from `old` (acquire).
template <typename T>
T wait_while(const std::atomic<T>& value, T old) {
  for (int i = 0; i < kSpins; ++i) {
    const T now = value.load(std::memory_order_acquire);
    if (now != old) return now;
    pause();
  }
  T now;
  while ((now = value.load(std::memory_order_acquire)) == old)
    value.wait(old, std::memory_order_acquire);
  return now;
}

}  // namespace

HostTeam::HostTeam(int size) : size_(size < 1 ? 1 : size) {
  for (int member = 1; member < size_; ++member)
    threads_.emplace_back([this, member] { serve(member); });
}

HostTeam::~HostTeam() {
  stop_ = true;
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void HostTeam::serve(int member) {
  unsigned seen = 0;
  for (;;) {
    seen = wait_while(generation_, seen);
    if (stop_) return;
    call_(context_, member);
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pending_.notify_one();
  }
}

void HostTeam::run_erased(void (*call)(void*, int), void* context) {
  if (size_ == 1) return call(context, 0);
  call_ = call;
  context_ = context;
  pending_.store(size_ - 1, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  call(context, 0);
  int left;
  while ((left = pending_.load(std::memory_order_acquire)) != 0) wait_while(pending_, left);
}

void HostTeam::share(int items, int member, int members, int& begin, int& end) {
  const long per = items / members, extra = items % members;
  begin = static_cast<int>(member * per + (member < extra ? member : extra));
  end = static_cast<int>(begin + per + (member < extra ? 1 : 0));
}

HostTeam* TeamSlot::get(int size) {
  if (size <= 1) return nullptr;
  if (!team_ || team_->size() != size) team_ = std::make_unique<HostTeam>(size);
  return team_.get();
}

}  // namespace cgs::net
