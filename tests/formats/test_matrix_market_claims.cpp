// A size line is a claim, not a budget: tiny files that declare 2e9 rows, columns or entries
// are refused at their size line or read as far as they go, inside a 200 MB memory cap
// (tests/memory_limit.hpp), never with bad_alloc. tests/app/test_hostile_inputs.cpp does the
// same through cgsolve under `ulimit -v`.
#include <doctest/doctest.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "formats/matrix_market.hpp"
#include "memory_limit.hpp"

namespace fs = std::filesystem;
using namespace cgs;

namespace {

constexpr std::size_t kCapMegabytes = 200;

struct Claim {
  std::string what;
  std::string text;
  long line;            // where the error is
  const char* message;  // part of it
};

const std::string kCoordinate = "%%MatrixMarket matrix coordinate real general\n";
const std::string kSymmetric = "%%MatrixMarket matrix coordinate real symmetric\n";
const std::string kPattern = "%%MatrixMarket matrix coordinate pattern general\n";
const std::string kArray = "%%MatrixMarket matrix array real general\n";

const std::vector<Claim> kMatrixClaims = {
    {"2e9 rows, 5 entries",
     kCoordinate + "2000000000 2000000000 5\n1 1 1\n2 2 1\n3 3 1\n4 4 1\n5 5 1\n", 2,
     "declares 2000000000 rows"},
    {"2e9 rows and 2e9 entries in 60 bytes",
     kSymmetric + "2000000000 2000000000 2000000000\n1 1 1\n", 2, "has room for only"},
    {"2e9 x 0 array", kArray + "2000000000 0\n", 2, "declares 2000000000 rows"},
    {"a row of 2e9 array values", kArray + "1 2000000000\n1\n2\n", 4,
     "too few entries (expected 2000000000, found 2)"},
    {"2e9 columns and entries", kCoordinate + "3 2000000000 2000000000\n1 1999999999 1\n", 3,
     "too few entries (expected 2000000000, found 1)"},
    {"2e9 entries in 10 rows", kPattern + "10 10 2000000000\n1 1\n", 3, "too few entries"},
    {"0 x 2147483647 array with a value (a fuzzer's find: it walked 2^31 empty columns)",
     kArray + "0 2147483647\n1.5\n", 3, "more entries than the 0 declared"},
    {"1.25e9 rows, padded with zeros (a fuzzer's find)",
     kPattern + "00000000000000000001251927264 1 3\n 3\n", 2, "declares 1251927264 rows"},
};

const std::vector<Claim> kVectorClaims = {
    {"2e9 array values", kArray + "2000000000 1\n1\n2\n", 4,
     "too few entries (expected 2000000000, found 2)"},
    {"a 1 x 2e9 array", kArray + "1 2000000000\n1\n", 3, "too few entries"},
    {"2e9 coordinate rows", kCoordinate + "2000000000 1 2\n7 1 1\n2000000000 1 1\n", 2,
     "declares 2000000000 rows"},
    {"2e9 coordinate columns", kCoordinate + "1 2000000000 2000000000\n1 5 1\n", 2,
     "declares 2000000000 columns but the file (76 bytes) has room for only 39 entries"},
    {"1.25e9 entries (the fuzzer's first find)",
     kPattern + "00000000000000000001251927264 1 3\n 3\n", 2, "declares 1251927264 rows"},
};

std::string gzip(const std::string& text) {
  z_stream stream{};
  REQUIRE(deflateInit2(&stream, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&stream, text.size()), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  stream.avail_in = static_cast<uInt>(text.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&stream, Z_FINISH) == Z_STREAM_END);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

std::string write_file(const std::string& name, const std::string& bytes) {
  const fs::path path = fs::temp_directory_path() / (std::to_string(::getpid()) + "_" + name);
  std::ofstream(path, std::ios::binary) << bytes;
  return path.string();
}

// 0 when `read` throws the expected InputError, inside the cap; else what went wrong.
int expect_error(const std::string& name, long line, const char* message,
                 const std::function<void()>& read) {
  return testing::run_with_memory_limit(kCapMegabytes, [&] {
    try {
      read();
      return 1;  // read without error
    } catch (const InputError& error) {
      const std::string expected = name + ":" + std::to_string(line) + ": ";
      const std::string what = error.what();
      if (what.rfind(expected, 0) != 0 || what.find(message) == std::string::npos) {
        std::fprintf(stderr, "unexpected message: %s\n", what.c_str());
        return 2;
      }
      return 0;
    }
  });
}

}  // namespace

TEST_CASE("a matrix whose size line claims 2e9 rows or entries allocates nothing for the claim") {
  for (const Claim& c : kMatrixClaims) {
    CAPTURE(c.what);
    CHECK(expect_error("m.mtx", c.line, c.message,
                       [&] { read_matrix_market_bytes(c.text, "m.mtx"); }) == 0);
    CHECK(expect_error("m.mtx.gz", c.line, c.message,
                       [&] { read_matrix_market_bytes(gzip(c.text), "m.mtx.gz"); }) == 0);
    const std::string path = write_file("claim.mtx.gz", gzip(c.text));
    CHECK(expect_error(path, c.line, c.message, [&] { read_matrix_market(path); }) == 0);
    fs::remove(path);
  }
}

TEST_CASE("a vector whose size line claims 2e9 entries allocates nothing for the claim") {
  for (const Claim& c : kVectorClaims) {
    CAPTURE(c.what);
    CHECK(expect_error("b.mtx", c.line, c.message,
                       [&] { read_vector_market_bytes(c.text, "b.mtx"); }) == 0);
    const std::string path = write_file("claim_b.mtx", c.text);
    CHECK(expect_error(path, c.line, c.message, [&] { read_vector_market(path); }) == 0);
    fs::remove(path);
  }
}

TEST_CASE("a vector read for a matrix must have its length, checked before anything is read") {
  const std::string b = kCoordinate + "2000000000 1 1\n5 1 1\n";
  CHECK(expect_error("b.mtx", 2, "the vector has 2000000000 entries but the matrix has 3 rows",
                     [&] { read_vector_market_bytes(b, "b.mtx", 3); }) == 0);
  CHECK(expect_error("b.mtx", 2, "the vector has 4 entries but the matrix has 3 rows", [&] {
          read_vector_market_bytes(kArray + "4 1\n1\n2\n3\n4\n", "b.mtx", 3);
        }) == 0);
  // A sparse right-hand side as long as its matrix is trusted, however few entries it has.
  const std::vector<double> x =
      read_vector_market_bytes(kCoordinate + "3000000 1 1\n2999999 1 -1.5\n", "b.mtx", 3'000'000);
  CHECK(x.size() == 3'000'000);
  CHECK(x[2'999'998] == -1.5);
  CHECK_THROWS_WITH_AS(
      read_vector_market_bytes(kCoordinate + "3000000 1 1\n2999999 1 -1.5\n", "b.mtx"),
      doctest::Contains("b.mtx:2: the size line declares 3000000 rows"), InputError);
}

TEST_CASE("up to 2^20 rows beyond what the entries fill are allowed, and every file in data/") {
  const CsrMatrix<double> A =
      read_matrix_market_bytes(kCoordinate + "1048577 1048577 1\n1 1 1\n", "m.mtx");
  CHECK(A.rows == 1048577);
  CHECK(A.nnz() == 1);
  CHECK_THROWS_WITH_AS(read_matrix_market_bytes(kCoordinate + "1048578 3 1\n1 1 1\n", "m.mtx"),
                       doctest::Contains("m.mtx:2: the size line declares 1048578 rows"),
                       InputError);
  // Symmetric storage fills two rows an entry.
  CHECK(read_matrix_market_bytes(kSymmetric + "1048578 1048578 1\n2 1 1\n", "m.mtx").rows ==
        1048578);
  CHECK(read_vector_market_bytes(kCoordinate + "1048577 1 1\n1 1 1\n", "b.mtx").size() == 1048577);
  for (const auto& entry : fs::recursive_directory_iterator(CGSOLVE_SOURCE_DIR "/data")) {
    const std::string path = entry.path().string();
    if (path.find(".mtx") == std::string::npos) continue;
    CAPTURE(path);
    const bool vector =
        path.find("_b.") != std::string::npos || path.find("_x.") != std::string::npos;
    if (vector)
      CHECK_NOTHROW(read_vector_market(path));
    else
      CHECK_NOTHROW(read_matrix_market(path));
  }
}

TEST_CASE("duplicates that sum beyond the double range are an error, as an Inf value is") {
  CHECK_THROWS_WITH_AS(
      read_matrix_market_bytes(kCoordinate + "2 2 3\n1 2 1e308\n2 1 1\n1 2 1e308\n", "m.mtx"),
      doctest::Contains("m.mtx: the duplicate entries of (1, 2) sum to beyond the double range"),
      InputError);
  CHECK_THROWS_WITH_AS(
      read_vector_market_bytes(kCoordinate + "3 1 3\n2 1 -1e308\n1 1 1\n2 1 -1e308\n", "b.mtx"),
      doctest::Contains("b.mtx:5: the duplicate entries of position 2 sum to beyond the double"),
      InputError);
  // Values that cancel are fine.
  CHECK(read_vector_market_bytes(kCoordinate + "2 1 2\n2 1 1e308\n2 1 -1e308\n", "b.mtx") ==
        std::vector<double>{0, 0});
}

TEST_CASE("'+-' is not a sign: an integer value '+-3' is an error, as a real '+-3' was") {
  CHECK_THROWS_WITH_AS(
      read_matrix_market_bytes("%%MatrixMarket matrix coordinate integer general\n1 1 1\n1 1 +-3\n",
                               "m.mtx"),
      doctest::Contains("m.mtx:3: bad integer value '+-3'"), InputError);
  CHECK_THROWS_WITH_AS(read_matrix_market_bytes(kCoordinate + "3 3 1\n+-2 1 1\n", "m.mtx"),
                       doctest::Contains("m.mtx:3: bad row index '+-2'"), InputError);
}
