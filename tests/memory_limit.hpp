// Runs a piece of a test in a child process whose memory is capped, so that a reader that
// allocates for what a file claims (gigabytes) fails the test instead of the machine.
//
// The cap is RLIMIT_AS, `megabytes` above what the process maps when it forks (the memory a
// `ulimit -v` would give it). Under AddressSanitizer, whose shadow memory no address-space limit
// can allow for, it is a malloc hook instead that ends the child on any single allocation over
// the cap, before the allocation is touched.
#pragma once

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <functional>
#include <new>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CGSOLVE_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define CGSOLVE_TEST_ASAN 1
#endif

#ifdef CGSOLVE_TEST_ASAN
#if __has_include(<sanitizer/allocator_interface.h>)
#include <sanitizer/allocator_interface.h>
#else
// What the header declares (Ubuntu's g++ 13 ships the runtime without its headers); the ASan
// runtime defines it.
extern "C" int __sanitizer_install_malloc_and_free_hooks(
    void (*malloc_hook)(const volatile void*, std::size_t), void (*free_hook)(const volatile void*));
#endif
#endif

namespace cgs::testing {

// Exit codes of the child besides fn's own result (0..99).
inline constexpr int kOutOfMemory = 101;     // std::bad_alloc escaped fn
inline constexpr int kOtherException = 102;  // any other exception escaped fn
inline constexpr int kOverTheCap = 103;      // ASan builds: an allocation over the cap

namespace detail {
inline std::size_t cap_bytes = 0;
inline void end_if_over_the_cap(const volatile void*, std::size_t size) {
  if (size > cap_bytes) {
    std::fprintf(stderr, "memory_limit: an allocation of %zu bytes, over the cap\n", size);
    std::_Exit(kOverTheCap);
  }
}
inline void ignore_free(const volatile void*) {}

// Bytes the process maps now (VmSize), from /proc/self/statm (pages).
inline std::size_t mapped_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::size_t pages = 0;
  statm >> pages;
  return pages * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
}
}  // namespace detail

// fn's return value (0..99) as the child's exit code, or one of the codes above, or 128 + the
// signal that ended it.
inline int run_with_memory_limit(std::size_t megabytes, const std::function<int()>& fn) {
  std::fflush(nullptr);
  const pid_t child = ::fork();
  if (child < 0) return -1;
  if (child == 0) {
    const std::size_t cap = megabytes << 20;
#ifdef CGSOLVE_TEST_ASAN
    detail::cap_bytes = cap;
    __sanitizer_install_malloc_and_free_hooks(detail::end_if_over_the_cap, detail::ignore_free);
#else
    const rlimit limit{detail::mapped_bytes() + cap, detail::mapped_bytes() + cap};
    if (::setrlimit(RLIMIT_AS, &limit) != 0) std::_Exit(99);
#endif
    int code = kOtherException;
    try {
      code = fn();
    } catch (const std::bad_alloc&) {
      code = kOutOfMemory;
    } catch (...) {
      code = kOtherException;
    }
    std::fflush(nullptr);
    std::_Exit(code);
  }
  int status = 0;
  if (::waitpid(child, &status, 0) != child) return -1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
}

}  // namespace cgs::testing
