// app/large_pages.cpp (linked into this test program as into cgsolve): blocks of 4 MiB or more
// from operator new are marked for transparent huge pages, smaller ones are left alone. Read
// back from the kernel's own account of the mappings (/proc/self/smaps, THPeligible).
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "base/tuning.hpp"
#include "large_pages.hpp"  // CGSOLVE_SANITIZER_NEW: whether it is built

namespace {

// The kernel's THP mode: "always", "madvise", "never", or "" where it cannot be read.
std::string thp_mode() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string text;
  std::getline(in, text);
  const auto open = text.find('['), close = text.find(']');
  return open == std::string::npos || close == std::string::npos
             ? std::string()
             : text.substr(open + 1, close - open - 1);
}

// THPeligible of the mapping that holds `p` (-1 where smaps does not say).
int thp_eligible(const void* p) {
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  std::ifstream in("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    std::uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> begin >> dash >> end && dash == '-') {
      inside = begin <= at && at < end;
      continue;
    }
    if (inside && line.rfind("THPeligible:", 0) == 0) return std::stoi(line.substr(12));
  }
  return -1;
}

// The first 2 MiB boundary in a block: madvise splits the mapping there, and the part before it
// (the block's first bytes) is not marked.
const void* first_huge_page(const void* p) {
  constexpr std::uintptr_t kHuge = std::uintptr_t(2) << 20;
  return reinterpret_cast<const void*>((reinterpret_cast<std::uintptr_t>(p) + kHuge - 1) &
                                       ~(kHuge - 1));
}

}  // namespace

TEST_CASE("large pages: operator new marks blocks of 4 MiB or more for huge pages, not smaller") {
#if defined(CGSOLVE_SANITIZER_NEW)
  MESSAGE("skipped: a sanitizer's operator new is in use (large_pages.cpp is not built)");
#else
  if (!cgs::tuning().huge_pages) {
    MESSAGE("skipped: the tuning turns the huge pages off (CGSOLVE_HUGE_PAGES=0)");
    return;
  }
  const std::string mode = thp_mode();
  if (mode != "madvise" && mode != "always") {
    MESSAGE("skipped: transparent huge pages are '" << mode << "' here");
    return;
  }
  // Pages are untouched (reserve), as when a vector is about to be filled.
  std::vector<double> large;
  large.reserve((std::size_t(64) << 20) / sizeof(double));
  const int large_eligible = thp_eligible(first_huge_page(large.data()));
  if (large_eligible < 0) {
    MESSAGE("skipped: this kernel's smaps has no THPeligible");
    return;
  }
  CHECK(large_eligible == 1);
  auto odd = std::make_unique<char[]>((std::size_t(4) << 20) + 12345);  // new[], odd size
  CHECK(thp_eligible(first_huge_page(odd.get())) == 1);
  if (mode == "madvise") {  // only blocks that asked: one of 1 MiB (its own mapping) did not
    std::vector<char> small;
    small.reserve(std::size_t(1) << 20);
    CHECK(thp_eligible(small.data()) == 0);
  }
#endif
}

TEST_CASE("large pages: Tuning::huge_pages off leaves large blocks alone") {
#if defined(CGSOLVE_SANITIZER_NEW)
  MESSAGE("skipped: a sanitizer's operator new is in use (large_pages.cpp is not built)");
#else
  if (thp_mode() != "madvise") {
    MESSAGE("skipped: only the madvise mode tells a marked block from another");
    return;
  }
  cgs::Tuning off = cgs::tuning();
  off.huge_pages = false;
  const cgs::ScopedTuning scope(off);
  std::vector<double> large;
  large.reserve((std::size_t(64) << 20) / sizeof(double));
  const int eligible = thp_eligible(first_huge_page(large.data()));
  if (eligible < 0) {
    MESSAGE("skipped: this kernel's smaps has no THPeligible");
    return;
  }
  CHECK(eligible == 0);
#endif
}
