#include "base/prefault.hpp"

#include <omp.h>

#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace cgs {

void prefault_pages(void* data, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
  if (bytes < (std::size_t(1) << 22)) return;  // below 4 MB the faults cost little
  const std::uintptr_t page = std::uintptr_t(sysconf(_SC_PAGESIZE));
  const std::uintptr_t at = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t begin = (at + page - 1) & ~(page - 1), end = (at + bytes) & ~(page - 1);
  if (end <= begin) return;
  const std::int64_t pages = std::int64_t((end - begin) / page);
#pragma omp parallel
  {
    // Each thread's share of whole pages (madvise's range must be page-aligned); an error (a
    // kernel without MADV_POPULATE_WRITE) leaves the pages to be faulted on first write.
    const int t = omp_get_thread_num(), team = omp_get_num_threads();
    const std::int64_t first = pages * t / team, last = pages * (t + 1) / team;
    if (last > first)
      (void)madvise(reinterpret_cast<void*>(begin + std::uintptr_t(first) * page),
                    std::size_t(last - first) * page, MADV_POPULATE_WRITE);
  }
#else
  (void)data;
  (void)bytes;
#endif
}

}  // namespace cgs
