// Matrix Market reader and writer: every field and symmetry against hand-computed dense
// matrices, the writer's bit-identical round trip, and every error with its file and line.
#include <doctest/doctest.h>
#include <unistd.h>
#include <zlib.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "formats/matrix_market.hpp"

namespace fs = std::filesystem;
using namespace cgs;

namespace {

using Dense = std::vector<std::vector<double>>;

// One directory per test run for the files the tests write, removed at exit.
struct ScratchDir {
  fs::path path = fs::temp_directory_path() / ("cgsolve_mm_test_" + std::to_string(::getpid()));
  ScratchDir() {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~ScratchDir() { fs::remove_all(path); }
};

const fs::path& scratch() {
  static ScratchDir dir;
  return dir.path;
}

std::string write_text(const std::string& name, const std::string& text) {
  fs::path path = scratch() / name;
  std::ofstream(path, std::ios::binary) << text;
  return path.string();
}

std::string write_gzip(const std::string& name, const std::string& text) {
  std::string path = (scratch() / name).string();
  gzFile file = gzopen(path.c_str(), "wb");
  REQUIRE(file != nullptr);
  REQUIRE(gzwrite(file, text.data(), static_cast<unsigned>(text.size())) ==
          static_cast<int>(text.size()));
  REQUIRE(gzclose(file) == Z_OK);
  return path;
}

// Dense copy of A; also checks that A is a well-formed CSR with sorted, unique columns.
Dense to_rows(const CsrMatrix<double>& A) {
  REQUIRE(A.row_ptr.size() == static_cast<std::size_t>(A.rows) + 1);
  REQUIRE(A.col_idx.size() == A.values.size());
  Dense dense(A.rows, std::vector<double>(A.cols, 0.0));
  for (index_t r = 0; r < A.rows; ++r) {
    for (index_t k = A.row_ptr[r]; k < A.row_ptr[r + 1]; ++k) {
      if (k > A.row_ptr[r]) CHECK(A.col_idx[k - 1] < A.col_idx[k]);
      dense[r][A.col_idx[k]] = A.values[k];
    }
  }
  return dense;
}

CsrMatrix<double> read_text(const std::string& text, MatrixMarketInfo* info = nullptr) {
  return read_matrix_market(write_text("input.mtx", text), info);
}

void check_reads_as(const std::string& text, const Dense& expected, MmField field,
                    MmSymmetry symmetry, long stored) {
  MatrixMarketInfo info;
  CsrMatrix<double> A = read_text(text, &info);
  CHECK(to_rows(A) == expected);
  CHECK(info.field == field);
  CHECK(info.symmetry == symmetry);
  CHECK(info.entries_stored == stored);
}

// Runs `read` on `text` saved as bad.mtx and checks the error: "<path>:<line>:" and key words.
void check_error(const std::string& text, long line, std::initializer_list<const char*> words,
                 const std::function<void(const std::string&)>& read) {
  const std::string path = write_text("bad.mtx", text);
  const std::string prefix = path + ":" + (line > 0 ? std::to_string(line) + ":" : "");
  try {
    read(path);
    FAIL("no error for:\n" << text);
  } catch (const InputError& error) {
    const std::string message = error.what();
    INFO("message: " << message);
    CHECK(message.rfind(prefix, 0) == 0);
    CHECK(error.line() == line);
    for (const char* word : words) CHECK(message.find(word) != std::string::npos);
  }
}

void check_matrix_error(const std::string& text, long line,
                        std::initializer_list<const char*> words) {
  check_error(text, line, words, [](const std::string& path) { read_matrix_market(path); });
}

void check_vector_error(const std::string& text, long line,
                        std::initializer_list<const char*> words) {
  check_error(text, line, words, [](const std::string& path) { read_vector_market(path); });
}

bool same_bits(double a, double b) {
  return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}

bool same_bits(const CsrMatrix<double>& A, const CsrMatrix<double>& B) {
  if (A.rows != B.rows || A.cols != B.cols || A.row_ptr != B.row_ptr || A.col_idx != B.col_idx ||
      A.values.size() != B.values.size()) {
    return false;
  }
  for (std::size_t k = 0; k < A.values.size(); ++k) {
    if (!same_bits(A.values[k], B.values[k])) return false;
  }
  return true;
}

bool leftover_temp_files() {
  for (const auto& entry : fs::directory_iterator(scratch())) {
    if (entry.path().filename().string().find(".tmp.") != std::string::npos) return true;
  }
  return false;
}

const std::string kRealGeneral = "%%MatrixMarket matrix coordinate real general\n";
const std::string kRealSymmetric = "%%MatrixMarket matrix coordinate real symmetric\n";
const std::string kRealSkew = "%%MatrixMarket matrix coordinate real skew-symmetric\n";
const std::string kIntegerGeneral = "%%MatrixMarket matrix coordinate integer general\n";
const std::string kPatternGeneral = "%%MatrixMarket matrix coordinate pattern general\n";

}  // namespace

// --- Every field x symmetry -------------------------------------------------------------------

TEST_CASE("Matrix Market: real general") {
  check_reads_as(kRealGeneral + "3 3 4\n1 1 1.5\n2 3 -2.25\n3 1 4e0\n1 3 .5\n",
                 {{1.5, 0, 0.5}, {0, 0, -2.25}, {4, 0, 0}}, MmField::real, MmSymmetry::general, 4);
}

TEST_CASE("Matrix Market: real symmetric expands the lower triangle, the diagonal once") {
  check_reads_as(kRealSymmetric + "3 3 4\n1 1 2.5\n2 1 -1\n3 2 0.75\n3 3 4\n",
                 {{2.5, -1, 0}, {-1, 0, 0.75}, {0, 0.75, 4}}, MmField::real, MmSymmetry::symmetric,
                 4);
}

TEST_CASE("Matrix Market: real skew-symmetric mirrors with the sign flipped") {
  check_reads_as(kRealSkew + "3 3 2\n2 1 1.5\n3 1 -2\n", {{0, -1.5, 2}, {1.5, 0, 0}, {-2, 0, 0}},
                 MmField::real, MmSymmetry::skew_symmetric, 2);
}

TEST_CASE("Matrix Market: integer general") {
  check_reads_as(kIntegerGeneral + "2 3 3\n1 2 7\n2 1 -3\n2 3 +12\n", {{0, 7, 0}, {-3, 0, 12}},
                 MmField::integer, MmSymmetry::general, 3);
}

TEST_CASE("Matrix Market: integer symmetric") {
  check_reads_as(
      "%%MatrixMarket matrix coordinate integer symmetric\n3 3 3\n1 1 5\n3 1 -2\n2 2 1\n",
      {{5, 0, -2}, {0, 1, 0}, {-2, 0, 0}}, MmField::integer, MmSymmetry::symmetric, 3);
}

TEST_CASE("Matrix Market: integer skew-symmetric") {
  check_reads_as("%%MatrixMarket matrix coordinate integer skew-symmetric\n3 3 2\n3 2 9\n2 1 -4\n",
                 {{0, 4, 0}, {-4, 0, -9}, {0, 9, 0}}, MmField::integer, MmSymmetry::skew_symmetric,
                 2);
}

TEST_CASE("Matrix Market: pattern general gives value 1") {
  check_reads_as(kPatternGeneral + "2 2 3\n1 1\n2 1\n1 2\n", {{1, 1}, {1, 0}}, MmField::pattern,
                 MmSymmetry::general, 3);
}

TEST_CASE("Matrix Market: pattern symmetric") {
  check_reads_as("%%MatrixMarket matrix coordinate pattern symmetric\n3 3 3\n1 1\n3 1\n3 3\n",
                 {{1, 0, 1}, {0, 0, 0}, {1, 0, 1}}, MmField::pattern, MmSymmetry::symmetric, 3);
}

TEST_CASE("Matrix Market: pattern skew-symmetric gives 1 below and -1 above") {
  check_reads_as("%%MatrixMarket matrix coordinate pattern skew-symmetric\n3 3 2\n2 1\n3 2\n",
                 {{0, -1, 0}, {1, 0, -1}, {0, 1, 0}}, MmField::pattern, MmSymmetry::skew_symmetric,
                 2);
}

// --- Layout of the entries --------------------------------------------------------------------

TEST_CASE("Matrix Market: duplicates are summed") {
  CHECK(to_rows(read_text(kRealGeneral + "2 2 4\n1 1 1\n2 2 3\n1 1 0.5\n1 1 -4\n")) ==
        Dense{{-2.5, 0}, {0, 3}});
  // In a symmetric file the mirrored copies are summed too.
  CHECK(to_rows(read_text(kRealSymmetric + "2 2 2\n2 1 1\n1 2 2\n")) == Dense{{0, 3}, {3, 0}});
}

TEST_CASE("Matrix Market: unsorted entries come out sorted") {
  CsrMatrix<double> A = read_text(kRealGeneral + "3 3 5\n3 3 5\n1 3 3\n2 1 4\n1 1 1\n3 1 2\n");
  CHECK(A.row_ptr == std::vector<index_t>{0, 2, 3, 5});
  CHECK(A.col_idx == std::vector<index_t>{0, 2, 0, 0, 2});
  CHECK(A.values == std::vector<double>{1, 3, 4, 2, 5});
}

TEST_CASE("Matrix Market: upper-triangle entries of a symmetric file are mirrored") {
  CHECK(to_rows(read_text(kRealSymmetric + "2 2 2\n1 2 7\n2 2 1\n")) == Dense{{0, 7}, {7, 1}});
  CHECK(to_rows(read_text(kRealSkew + "2 2 1\n1 2 7\n")) == Dense{{0, 7}, {-7, 0}});
}

TEST_CASE("Matrix Market: comments, blank lines, CRLF and extra blanks are skipped") {
  const std::string text = kRealGeneral +
                           "% a comment\n"
                           "\n"
                           "   \t\n"
                           "  2 2   2  \r\n"
                           "% between entries\n"
                           "\n"
                           "\t1 2\t-1.25\r\n"
                           "  % indented comment\n"
                           "2 1 3   \n"
                           "\n"
                           "% trailing comment";
  CHECK(to_rows(read_text(text)) == Dense{{0, -1.25}, {3, 0}});
}

TEST_CASE("Matrix Market: banner keywords are case-insensitive") {
  CHECK(to_rows(read_text("%%matrixmarket MATRIX Coordinate REAL Symmetric\n2 2 1\n2 1 3\n")) ==
        Dense{{0, 3}, {3, 0}});
}

TEST_CASE("Matrix Market: empty matrix and values that underflow") {
  CsrMatrix<double> empty = read_text(kRealGeneral + "4 5 0\n");
  CHECK(empty.rows == 4);
  CHECK(empty.cols == 5);
  CHECK(empty.nnz() == 0);
  CHECK(to_rows(read_text(kRealGeneral + "1 1 1\n1 1 1e-400\n")) == Dense{{0}});
  CHECK(to_rows(read_text(kRealGeneral + "1 1 1\n1 1 -1.5e-320\n")) == Dense{{-1.5e-320}});
}

TEST_CASE("Matrix Market: array files read as dense matrices with every entry stored") {
  CsrMatrix<double> A =
      read_text("%%MatrixMarket matrix array real general\n2 3\n1\n2\n0\n4\n5\n6\n");
  CHECK(to_rows(A) == Dense{{1, 0, 5}, {2, 4, 6}});
  CHECK(A.nnz() == 6);  // the explicit zero is kept
  CHECK(to_rows(read_text("%%MatrixMarket matrix array real symmetric\n2 2\n1\n2\n3\n")) ==
        Dense{{1, 2}, {2, 3}});
  CHECK(to_rows(read_text("%%MatrixMarket matrix array integer skew-symmetric\n3 3\n1\n2\n3\n")) ==
        Dense{{0, -1, -2}, {1, 0, -3}, {2, 3, 0}});
}

// --- gzip --------------------------------------------------------------------------------------

TEST_CASE("Matrix Market: gzip files are read transparently, detected by content") {
  const std::string text = kRealSymmetric + "% compressed\n2 2 2\n1 1 4\n2 1 -1\n";
  const Dense expected{{4, -1}, {-1, 0}};
  CHECK(to_rows(read_matrix_market(write_gzip("matrix.mtx.gz", text))) == expected);
  CHECK(to_rows(read_matrix_market(write_gzip("no_gz_suffix.mtx", text))) == expected);
  const std::string vector = "%%MatrixMarket matrix array real general\n2 1\n0.5\n-2\n";
  CHECK(read_vector_market(write_gzip("vector.mtx.gz", vector)) == std::vector<double>{0.5, -2});
}

TEST_CASE("Matrix Market: a gzip file many times its compressed size is read whole") {
  // 1.6 MB of text compresses to a few kB, so the read buffer has to grow several times.
  std::string text = kRealGeneral + "2 2 200001\n2 1 -3\n";
  for (int k = 0; k < 200000; ++k) text += "1 2 0.5\n";
  CsrMatrix<double> A = read_matrix_market(write_gzip("large.mtx.gz", text));
  CHECK(to_rows(A) == Dense{{0, 100000}, {-3, 0}});
}

TEST_CASE("Matrix Market: truncated gzip data is an error") {
  std::string path = write_gzip("truncated.mtx.gz", kRealGeneral + "1 1 1\n1 1 1\n");
  fs::resize_file(path, fs::file_size(path) - 6);
  try {
    read_matrix_market(path);
    FAIL("truncated gzip read without error");
  } catch (const InputError& error) {
    const std::string message = error.what();
    INFO(message);
    CHECK(message.find(path) == 0);
    CHECK(message.find("gzip") != std::string::npos);
  }
}

// --- Vectors -----------------------------------------------------------------------------------

TEST_CASE("Matrix Market vector: array with one column") {
  CHECK(read_vector_market(write_text("x.mtx",
                                      "%%MatrixMarket matrix array real general\n% c\n"
                                      "3 1\n1.5\n\n-2\n% c\n3e2\n")) ==
        std::vector<double>{1.5, -2, 300});
  CHECK(read_vector_market(write_text("x.mtx",
                                      "%%MatrixMarket matrix array integer general\n"
                                      "2 1\n7\n-8\n")) == std::vector<double>{7, -8});
}

TEST_CASE("Matrix Market vector: n x 1 coordinate, missing entries 0, duplicates summed") {
  CHECK(read_vector_market(write_text("x.mtx", kRealGeneral + "4 1 3\n3 1 2.5\n1 1 1\n3 1 1\n")) ==
        std::vector<double>{1, 0, 3.5, 0});
}

TEST_CASE("Matrix Market vector: a row vector (1 x n) is accepted") {
  CHECK(read_vector_market(write_text("x.mtx",
                                      "%%MatrixMarket matrix array real general\n"
                                      "1 3\n1\n2\n3\n")) == std::vector<double>{1, 2, 3});
  CHECK(read_vector_market(write_text("x.mtx", kRealGeneral + "1 3 1\n1 2 5\n")) ==
        std::vector<double>{0, 5, 0});
}

// --- Writer ------------------------------------------------------------------------------------

TEST_CASE("Matrix Market writer: vectors read back bit-identical") {
  const std::vector<double> x{1.0 / 3.0,
                              1e-300,
                              -0.0,
                              std::ldexp(1.0, -1074),
                              1.7976931348623157e308,
                              -2.2250738585072014e-308,
                              0.1,
                              123456789012345678.0,
                              0.0};
  const std::string path = (scratch() / "x.mtx").string();
  write_vector_market(path, x, "awkward doubles\nsecond comment line");
  const std::vector<double> y = read_vector_market(path);
  REQUIRE(y.size() == x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    INFO("i = " << i);
    CHECK(same_bits(x[i], y[i]));
  }
  CHECK_FALSE(leftover_temp_files());
}

CsrMatrix<double> awkward_symmetric_matrix() {
  CsrMatrix<double> A;
  A.rows = A.cols = 3;
  A.row_ptr = {0, 2, 4, 6};
  A.col_idx = {0, 1, 0, 2, 1, 2};
  A.values = {1.0 / 3.0,
              -1e-300,
              -1e-300,
              std::ldexp(1.0, -1074),
              std::ldexp(1.0, -1074),
              1.7976931348623157e308};
  return A;
}

TEST_CASE("Matrix Market writer: general matrix round trip") {
  CsrMatrix<double> A;
  A.rows = 2;
  A.cols = 4;
  A.row_ptr = {0, 3, 4};
  A.col_idx = {0, 2, 3, 1};
  A.values = {1.0 / 3.0, -0.0, 1e-300, -1.7976931348623157e308};
  const std::string path = (scratch() / "general.mtx").string();
  write_matrix_market(path, A, false, "written by the test");
  MatrixMarketInfo info;
  CHECK(same_bits(read_matrix_market(path, &info), A));
  CHECK(info.symmetry == MmSymmetry::general);
  CHECK(info.entries_stored == 4);
}

TEST_CASE("Matrix Market writer: symmetric matrix stores the lower triangle only") {
  const CsrMatrix<double> A = awkward_symmetric_matrix();
  const std::string path = (scratch() / "symmetric.mtx").string();
  write_matrix_market(path, A, true);
  MatrixMarketInfo info;
  CHECK(same_bits(read_matrix_market(path, &info), A));
  CHECK(info.symmetry == MmSymmetry::symmetric);
  CHECK(info.entries_stored == 4);
}

TEST_CASE("Matrix Market writer: an existing file is replaced") {
  const std::string path = write_text("replaced.mtx", "old contents that are much longer\n");
  write_vector_market(path, {2.0});
  CHECK(read_vector_market(path) == std::vector<double>{2.0});
}

TEST_CASE("Matrix Market writer: a failed write throws and leaves no file") {
  const std::string missing_dir = (scratch() / "no_such_dir" / "x.mtx").string();
  CHECK_THROWS_WITH_AS(write_vector_market(missing_dir, {1.0}),
                       doctest::Contains((missing_dir + ": cannot create file").c_str()),
                       InputError);
  CHECK_FALSE(fs::exists(scratch() / "no_such_dir"));

  // The temporary file is written, but the rename onto a directory fails.
  const fs::path directory = scratch() / "a_directory.mtx";
  fs::create_directories(directory);
  CHECK_THROWS_WITH_AS(write_matrix_market(directory.string(), awkward_symmetric_matrix()),
                       doctest::Contains("a_directory.mtx: cannot rename"), InputError);
  CHECK(fs::is_directory(directory));
  CHECK_FALSE(leftover_temp_files());

  const std::string nan_path = (scratch() / "nan.mtx").string();
  CHECK_THROWS_WITH_AS(write_vector_market(nan_path, {1.0, std::nan("")}),
                       doctest::Contains("NaN or Inf"), InputError);
  CHECK_FALSE(fs::exists(nan_path));

  CsrMatrix<double> rectangular;
  rectangular.rows = 1;
  rectangular.cols = 2;
  rectangular.row_ptr = {0, 0};
  CHECK_THROWS_WITH_AS(write_matrix_market(nan_path, rectangular, true),
                       doctest::Contains("square"), InputError);
  CHECK_FALSE(fs::exists(nan_path));
  CHECK_FALSE(leftover_temp_files());
}

// --- Errors: file and banner -------------------------------------------------------------------

TEST_CASE("Matrix Market error: cannot open the file") {
  const std::string path = (scratch() / "does_not_exist.mtx").string();
  CHECK_THROWS_WITH_AS(
      read_matrix_market(path),
      doctest::Contains((path + ": cannot open file: No such file or directory").c_str()),
      InputError);
  CHECK_THROWS_WITH_AS(read_vector_market(path), doctest::Contains("cannot open file"), InputError);
}

TEST_CASE("Matrix Market error: empty file and bad banners") {
  check_matrix_error("", 1, {"empty file"});
  check_matrix_error("3 3 1\n1 1 1\n", 1, {"missing banner", "%%MatrixMarket"});
  check_matrix_error("%MatrixMarket matrix coordinate real general\n1 1 0\n", 1,
                     {"missing banner"});
  check_matrix_error("\n%%MatrixMarket matrix coordinate real general\n1 1 0\n", 1,
                     {"missing banner"});
  check_matrix_error("%%MatrixMarket vector coordinate real general\n1 1 0\n", 1,
                     {"unsupported object 'vector'"});
  check_matrix_error("%%MatrixMarket matrix coordinate real\n1 1 0\n", 1, {"incomplete banner"});
  check_matrix_error("%%MatrixMarket matrix coordinate real general extra\n1 1 0\n", 1,
                     {"unexpected 'extra' after the banner"});
}

TEST_CASE("Matrix Market error: unknown or unsupported format, field and symmetry") {
  check_matrix_error("%%MatrixMarket matrix sparse real general\n1 1 0\n", 1,
                     {"unknown format 'sparse'"});
  check_matrix_error("%%MatrixMarket matrix coordinate float general\n1 1 0\n", 1,
                     {"unknown field 'float'"});
  check_matrix_error("%%MatrixMarket matrix coordinate real lower\n1 1 0\n", 1,
                     {"unknown symmetry 'lower'"});
  check_matrix_error("%%MatrixMarket matrix coordinate complex general\n1 1 0\n", 1,
                     {"complex matrices are not supported"});
  check_matrix_error("%%MatrixMarket matrix coordinate complex hermitian\n1 1 0\n", 1,
                     {"complex matrices are not supported"});
  check_matrix_error("%%MatrixMarket matrix coordinate real hermitian\n1 1 0\n", 1,
                     {"hermitian matrices are not supported"});
  check_matrix_error("%%MatrixMarket matrix array pattern general\n1 1\n", 1, {"array", "pattern"});
}

// --- Errors: size line -------------------------------------------------------------------------

TEST_CASE("Matrix Market error: missing or wrong size line") {
  check_matrix_error(kRealGeneral + "% only a comment\n", 2, {"missing size line"});
  check_matrix_error(kRealGeneral, 1, {"missing size line"});
  check_matrix_error(kRealGeneral + "% c\n3 3\n", 3,
                     {"bad size line", "expected 3 numbers", "found 2"});
  check_matrix_error(kRealGeneral + "3 3 1 1\n1 1 1\n", 2, {"bad size line", "found more"});
  check_matrix_error(kRealGeneral + "3 -3 1\n1 1 1\n", 2, {"columns is negative"});
  check_matrix_error(kRealGeneral + "3 3.5 1\n1 1 1\n", 2, {"columns '3.5' is not an integer"});
  check_matrix_error(kRealGeneral + "3 3 x\n1 1 1\n", 2, {"entries 'x' is not an integer"});
  check_matrix_error("%%MatrixMarket matrix array real general\n3\n1\n", 2,
                     {"expected 2 numbers", "found 1"});
}

TEST_CASE("Matrix Market error: sizes beyond the 32-bit index range") {
  check_matrix_error(kRealGeneral + "2147483648 3 0\n", 2, {"rows 2147483648", "32-bit"});
  check_matrix_error(kRealGeneral + "3 99999999999 0\n", 2, {"columns 99999999999", "32-bit"});
  check_matrix_error(kRealGeneral + "3 3 3000000000\n", 2, {"entries 3000000000", "32-bit"});
  check_matrix_error("%%MatrixMarket matrix array real general\n100000 100000\n", 2,
                     {"100000 x 100000", "32-bit"});
}

TEST_CASE("Matrix Market error: symmetric matrices must be square") {
  check_matrix_error(kRealSymmetric + "% c\n3 4 1\n1 1 1\n", 3, {"must be square", "3 x 4"});
  check_matrix_error(kRealSkew + "4 3 1\n2 1 1\n", 2, {"must be square", "4 x 3"});
}

// --- Errors: entries ---------------------------------------------------------------------------

TEST_CASE("Matrix Market error: fewer entries than declared") {
  check_matrix_error(kRealGeneral + "3 3 3\n1 1 1\n% comment\n2 2 2\n\n", 6,
                     {"too few entries", "expected 3, found 2"});
  check_matrix_error(kRealGeneral + "3 3 3\n1 1 1", 3, {"too few entries", "expected 3, found 1"});
  check_matrix_error("%%MatrixMarket matrix array real general\n3 1\n1\n2\n", 4,
                     {"too few entries", "expected 3, found 2"});
}

TEST_CASE("Matrix Market error: more entries than declared") {
  check_matrix_error(kRealGeneral + "3 3 2\n1 1 1\n2 2 2\n% comment\n3 3 3\n", 6,
                     {"more entries than the 2 declared"});
  check_matrix_error("%%MatrixMarket matrix array real general\n2 1\n1\n2\n3\n", 5,
                     {"more entries than the 2 declared"});
}

TEST_CASE("Matrix Market error: index out of range") {
  check_matrix_error(kRealGeneral + "3 4 2\n1 1 1\n4 1 1\n", 4,
                     {"row index 4 is out of range 1..3"});
  check_matrix_error(kRealGeneral + "3 4 2\n1 1 1\n% c\n1 0 1\n", 5,
                     {"column index 0 is out of range 1..4"});
  check_matrix_error(kRealGeneral + "3 4 1\n1 -2 1\n", 3, {"column index -2 is out of range 1..4"});
  check_matrix_error(kRealGeneral + "3 4 1\n99999999999 1 1\n", 3,
                     {"row index 99999999999 is out of range"});
}

TEST_CASE("Matrix Market error: too few fields or trailing garbage") {
  check_matrix_error(kRealGeneral + "3 3 2\n1 1 1\n2 2\n", 4,
                     {"too few fields", "missing the value"});
  check_matrix_error(kRealGeneral + "3 3 1\n2\n", 3,
                     {"too few fields", "missing the column index"});
  check_matrix_error(kRealGeneral + "3 3 1\n2 2 1.0 7\n", 3, {"unexpected '7' after the entry"});
  check_matrix_error(kPatternGeneral + "3 3 1\n2 2 1.0\n", 3, {"unexpected '1.0' after the entry"});
  check_matrix_error("%%MatrixMarket matrix array real general\n2 1\n1 2\n3\n", 3,
                     {"unexpected '2' after the value"});
}

TEST_CASE("Matrix Market error: bad numbers") {
  check_matrix_error(kRealGeneral + "3 3 1\n2 2 abc\n", 3, {"bad value 'abc'"});
  check_matrix_error(kRealGeneral + "3 3 1\n2 2 1.5x\n", 3, {"bad value '1.5x'"});
  check_matrix_error(kRealGeneral + "3 3 1\n2 2 1,5\n", 3, {"bad value '1,5'"});
  check_matrix_error(kRealGeneral + "3 3 1\nx 2 1\n", 3, {"bad row index 'x'"});
  check_matrix_error(kRealGeneral + "3 3 1\n2 2.0 1\n", 3, {"bad column index '2.0'"});
  check_matrix_error(kIntegerGeneral + "3 3 2\n1 1 2\n2 2 1.5\n", 4, {"bad integer value '1.5'"});
  check_matrix_error(kIntegerGeneral + "3 3 1\n2 2 1e3\n", 3, {"bad integer value '1e3'"});
}

TEST_CASE("Matrix Market error: NaN, Inf and overflowing values") {
  check_matrix_error(kRealGeneral + "3 3 1\n2 2 nan\n", 3, {"NaN or Inf", "'nan'"});
  check_matrix_error(kRealGeneral + "3 3 2\n1 1 1\n2 2 -Inf\n", 4, {"NaN or Inf", "'-Inf'"});
  check_matrix_error(kRealGeneral + "3 3 1\n2 2 infinity\n", 3, {"NaN or Inf"});
  check_matrix_error(kRealGeneral + "3 3 1\n2 2 1e400\n", 3,
                     {"'1e400'", "beyond the double range"});
}

TEST_CASE("Matrix Market error: diagonal entry in a skew-symmetric matrix") {
  check_matrix_error(kRealSkew + "3 3 2\n2 1 1\n2 2 1\n", 4,
                     {"diagonal entry (2, 2)", "skew-symmetric"});
}

TEST_CASE("Matrix Market error: vectors") {
  check_vector_error("%%MatrixMarket matrix array real general\n3 2\n1\n2\n3\n4\n5\n6\n", 2,
                     {"not a vector", "3 x 2"});
  check_vector_error(kRealGeneral + "3 1 2\n1 1 1\n4 1 1\n", 4,
                     {"row index 4 is out of range 1..3"});
  check_vector_error("%%MatrixMarket matrix array real general\n3 1\n1\n2\n", 4,
                     {"too few entries", "expected 3, found 2"});
  check_vector_error("%%MatrixMarket matrix array real general\n2 1\n1\nnan\n", 4, {"NaN or Inf"});
}

// --- Real files --------------------------------------------------------------------------------

TEST_CASE("Matrix Market: SuiteSparse LFAT5 (real symmetric, lower triangle stored)") {
  MatrixMarketInfo info;
  CsrMatrix<double> A = read_matrix_market(CGSOLVE_SOURCE_DIR "/data/matrices/LFAT5.mtx", &info);
  CHECK(A.rows == 14);
  CHECK(A.cols == 14);
  CHECK(A.nnz() == 46);
  CHECK(info.entries_stored == 30);
  CHECK(info.symmetry == MmSymmetry::symmetric);
  const Dense dense = to_rows(A);
  CHECK(dense[0][0] == 1.57088);
  CHECK(dense[3][0] == -94.2528);
  CHECK(dense[0][3] == -94.2528);
  for (int i = 0; i < 14; ++i) {
    for (int j = 0; j < 14; ++j) CHECK(dense[i][j] == dense[j][i]);
  }
}

TEST_CASE("Matrix Market: EPANET Net3 system (gzip, symmetric, unsorted) and its right side") {
  CsrMatrix<double> A = read_matrix_market(CGSOLVE_SOURCE_DIR "/data/systems/Net3_step1.mtx.gz");
  CHECK(A.rows == 92);
  CHECK(A.nnz() == 2 * 206 - 92);
  const Dense dense = to_rows(A);
  CHECK(dense[0][0] == 0.21538169109345132);
  CHECK(dense[8][6] == -0.26414502474402946);
  CHECK(dense[6][8] == -0.26414502474402946);

  std::vector<double> b =
      read_vector_market(CGSOLVE_SOURCE_DIR "/data/systems/Net3_step1_b.mtx.gz");
  REQUIRE(b.size() == 92);
  CHECK(b.front() == -0.81296176371107387);
  CHECK(b.back() == 0.16058536962194042);
}
