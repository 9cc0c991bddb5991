// Whether app/large_pages.cpp's operator new is built into the program: not under a sanitizer,
// whose runtime brings its own (GCC says one is on by __SANITIZE_*__, clang by __has_feature).
#pragma once

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CGSOLVE_SANITIZER_NEW 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define CGSOLVE_SANITIZER_NEW 1
#endif
#endif
