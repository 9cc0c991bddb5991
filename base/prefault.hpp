// Large host arrays made fresh at every set-up (a level's strength, aggregates, the next operator
// downloaded from the device) pay one page fault for every 4 KB the first time they are written,
// and std::vector's resize, assign and copy write them on one thread: a 108 MB
// vector took 60-65 ms to resize before a 10 ms copy from the device into it
// (BENCHMARKS 20j). reserve_prefaulted(v, n) reserves room for n elements and has the kernel
// map its pages writable on every core first (madvise MADV_POPULATE_WRITE over each thread's
// share of the pages), so that the resize or copy that follows runs at memory speed. It leaves
// v's elements as they are (only capacity changes) and does nothing where the call is not
// supported (older kernels, other systems) or where v already has the room.
#pragma once

#include <cstddef>
#include <vector>

namespace cgs {

// The pages wholly inside [data, data + bytes) mapped writable, each thread a share (prefault.cpp).
void prefault_pages(void* data, std::size_t bytes);

template <typename T>
void reserve_prefaulted(std::vector<T>& v, std::size_t n) {
  if (v.capacity() >= n) return;
  v.reserve(n);
  prefault_pages(v.data(), n * sizeof(T));
}

}  // namespace cgs
