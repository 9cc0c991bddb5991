// The in-memory Matrix Market readers (read_*_bytes, what the fuzz targets call) against the
// path readers, and their gzip decoding against zlib's gzread (which the path readers used
// before they shared the in-memory decoder).
#include <doctest/doctest.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "formats/matrix_market.hpp"

namespace fs = std::filesystem;
using namespace cgs;

namespace {

// gzip data of `text`, as gzip(1) writes it.
std::string gzip(const std::string& text) {
  z_stream stream{};
  REQUIRE(deflateInit2(&stream, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&stream, text.size()) + 32, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  stream.avail_in = static_cast<uInt>(text.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&stream, Z_FINISH) == Z_STREAM_END);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

// What zlib's gzread makes of `bytes` (written to a file): the reference for gunzip.
std::string gzread_all(const std::string& bytes, bool* ok) {
  const fs::path path = fs::temp_directory_path() / ("cgsolve_gz_" + std::to_string(::getpid()));
  std::ofstream(path, std::ios::binary) << bytes;
  gzFile file = gzopen(path.c_str(), "rb");
  REQUIRE(file != nullptr);
  std::string text;
  char buffer[4096];
  int got = 0;
  while ((got = gzread(file, buffer, sizeof buffer)) > 0) text.append(buffer, got);
  int code = Z_OK;
  gzerror(file, &code);
  *ok = got == 0 && code == Z_OK;
  gzclose(file);
  fs::remove(path);
  return text;
}

const std::string kVector = "%%MatrixMarket matrix array real general\n3 1\n1.5\n-2\n0.25\n";
const std::vector<double> kVectorValues{1.5, -2, 0.25};
const std::string kMatrix =
    "%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n1 1 4\n2 1 -1\n2 2 4\n3 3 2\n";

}  // namespace

TEST_CASE("in-memory reader: plain and gzip bytes read as the same matrix and vector") {
  for (const std::string& bytes : {kMatrix, gzip(kMatrix)}) {
    MatrixMarketInfo info;
    const CsrMatrix<double> A = read_matrix_market_bytes(bytes, "m.mtx", &info);
    CHECK(A.rows == 3);
    CHECK(A.nnz() == 5);
    CHECK(A.row_ptr == std::vector<index_t>{0, 2, 4, 5});
    CHECK(info.symmetry == MmSymmetry::symmetric);
    CHECK(info.entries_stored == 4);
  }
  CHECK(read_vector_market_bytes(kVector, "b.mtx") == kVectorValues);
  CHECK(read_vector_market_bytes(gzip(kVector), "b.mtx") == kVectorValues);
}

TEST_CASE("in-memory reader: errors name the given file name and the line") {
  CHECK_THROWS_WITH_AS(read_matrix_market_bytes(kMatrix.substr(0, kMatrix.size() - 6), "cut.mtx"),
                       doctest::Contains("cut.mtx:5: too few entries"), InputError);
  CHECK_THROWS_WITH_AS(read_vector_market_bytes(gzip("%%MatrixMarket matrix array real general\n"
                                                     "2 1\n1\nx\n"),
                                                "x.mtx.gz"),
                       doctest::Contains("x.mtx.gz:4: bad value 'x'"), InputError);
}

TEST_CASE("in-memory gzip: members one after another, trailing bytes, corruption, as gzread") {
  const std::string head = kVector.substr(0, 50), tail = kVector.substr(50);
  const std::string two_members = gzip(head) + gzip(tail);
  std::string truncated = gzip(kVector);
  truncated.resize(truncated.size() - 5);
  std::string corrupt = gzip(kVector);
  corrupt[corrupt.size() / 2] ^= 0x55;
  const std::string cases[] = {two_members,
                               gzip(kVector) + "trailing garbage is ignored",
                               gzip(kVector) + gzip(""),
                               truncated,
                               corrupt,
                               "\x1f\x8b",
                               "\x1f",
                               gzip(kVector).substr(0, 10)};
  for (const std::string& bytes : cases) {
    CAPTURE(bytes.size());
    bool zlib_ok = false;
    const std::string expected = gzread_all(bytes, &zlib_ok);
    if (zlib_ok && expected == kVector) {
      CHECK(read_vector_market_bytes(bytes, "v.mtx") == kVectorValues);
    } else if (!zlib_ok) {
      CHECK_THROWS_WITH_AS(read_vector_market_bytes(bytes, "v.mtx"),
                           doctest::Contains("v.mtx: cannot read file"), InputError);
    } else {  // a plain file ("\x1f" alone): read as text, so a missing banner
      CHECK_THROWS_WITH_AS(read_vector_market_bytes(bytes, "v.mtx"),
                           doctest::Contains("missing banner"), InputError);
    }
  }
}

TEST_CASE("path reader: a directory and a pipe") {
  CHECK_THROWS_WITH_AS(read_vector_market(fs::temp_directory_path().string()),
                       doctest::Contains("cannot read file"), InputError);
  // Not a regular file: no size to start from, the buffer grows.
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  REQUIRE(::write(fds[1], kVector.data(), kVector.size()) == ssize_t(kVector.size()));
  ::close(fds[1]);
  CHECK(read_vector_market("/proc/self/fd/" + std::to_string(fds[0])) == kVectorValues);
  ::close(fds[0]);
}
