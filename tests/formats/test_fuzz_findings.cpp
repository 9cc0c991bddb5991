// Every reproducer of a past Matrix Market finding (tests/fuzz/regressions/fuzz_matrix_market*,
// replayed by the fuzz targets too) read through the path readers, as a matrix and as a vector,
// inside a 200 MB memory cap: a matrix or vector, or an InputError naming the file, and nothing
// else. What each one was is in tests/fuzz/README.md; the specific messages are checked in
// test_matrix_market_claims.cpp.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "formats/matrix_market.hpp"
#include "memory_limit.hpp"

namespace fs = std::filesystem;
using namespace cgs;

TEST_CASE("every reproducer of a past Matrix Market finding reads, or fails cleanly, in 200 MB") {
  int files = 0;
  for (const auto& entry :
       fs::directory_iterator(CGSOLVE_SOURCE_DIR "/tests/fuzz/regressions/fuzz_matrix_market")) {
    const std::string path = entry.path().string();
    CAPTURE(path);
    ++files;
    auto clean = [&](auto read) {
      return testing::run_with_memory_limit(200, [&] {
        try {
          read();
        } catch (const InputError& error) {
          return error.file() == path ? 0 : 1;
        }
        return 0;
      });
    };
    CHECK(clean([&] { read_matrix_market(path); }) == 0);
    CHECK(clean([&] { read_vector_market(path); }) == 0);
  }
  CHECK(files > 0);
}
