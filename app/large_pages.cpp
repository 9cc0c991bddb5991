// Large host arrays in transparent huge pages (linked into the programs, not the libraries).
//
// Why: a solve's set-up writes fresh arrays of hundreds of MB (a 9M-row matrix, AMG's strength,
// aggregates and coarse patterns, vectors), and each fresh 4 KiB page costs a fault. On the
// GPU host measured the kernel's THP mode is `madvise` (huge pages only where a program asks), and
// faulting in 540 MB there took 90-145 ms on 16 threads. glibc asks for its own large blocks
// when told to by GLIBC_TUNABLES=glibc.malloc.hugetlb=1, which a program cannot set for
// itself; so the replaceable global operator new asks, for blocks of 4 MiB or more (the
// arrays of std::vector), after malloc has mapped them and before anything touches them.
// Measured in BENCHMARKS 20p. Tuning::huge_pages off (--huge-pages off, CGSOLVE_HUGE_PAGES=0)
// turns it off. Not built under a sanitizer, whose runtime brings its own operator new.

#include "large_pages.hpp"

#include "base/tuning.hpp"

#if !defined(CGSOLVE_SANITIZER_NEW)

#include <cstdint>
#include <cstdlib>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace {

constexpr std::size_t kLargeBlock = std::size_t(4) << 20;
constexpr std::uintptr_t kHugePage = std::uintptr_t(2) << 20;

// Read at every large block (tuning() allocates nothing), so that --huge-pages, parsed after the
// first allocations, holds for the arrays of the solve.
bool huge_pages_wanted() { return cgs::tuning().huge_pages; }

// The whole 2 MiB pages inside [p, p + bytes) may be backed by huge pages when first touched.
void ask_for_huge_pages(void* p, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t begin = (at + kHugePage - 1) & ~(kHugePage - 1);
  const std::uintptr_t end = (at + bytes) & ~(kHugePage - 1);
  if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

void* allocate(std::size_t bytes) {
  for (;;) {
    if (void* p = std::malloc(bytes ? bytes : 1)) {
      if (bytes >= kLargeBlock && huge_pages_wanted()) ask_for_huge_pages(p, bytes);
      return p;
    }
    std::new_handler handler = std::get_new_handler();
    if (!handler) throw std::bad_alloc();
    handler();
  }
}

}  // namespace

// Every form that the default library would send to malloc: its throwing and non-throwing
// new, and the deletes that free them (the aligned forms keep the library's own pair).
void* operator new(std::size_t bytes) { return allocate(bytes); }
void* operator new[](std::size_t bytes) { return allocate(bytes); }
void* operator new(std::size_t bytes, const std::nothrow_t&) noexcept {
  try {
    return allocate(bytes);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t bytes, const std::nothrow_t&) noexcept {
  try {
    return allocate(bytes);
  } catch (...) {
    return nullptr;
  }
}
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

#endif
