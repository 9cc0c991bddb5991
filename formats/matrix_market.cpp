// Matrix Market reader and writer.
//
// The reader loads the whole (decompressed) file into memory and parses it with a small
// scanner built on std::from_chars: no iostreams and no per-line allocation, because reading
// SuiteSparse-sized files must not dominate a solver run. The path readers and the in-memory
// ones (read_*_bytes, which the fuzz targets of tests/fuzz call) share everything after the
// bytes are loaded, gzip decompression included.
#include "formats/matrix_market.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "base/atomic_file.hpp"
#include "formats/convert.hpp"

namespace cgs {

namespace {

constexpr long long kIndexLimit = std::numeric_limits<index_t>::max();

// ---------------------------------------------------------------------------------------------
// Loading the file

// A file's bytes. Not a std::string: resizing one zero-fills it, which for a large file costs
// as much as a third of the parse.
struct FileText {
  std::unique_ptr<char[]> bytes;
  std::size_t size = 0;
  std::size_t capacity = 0;

  std::string_view view() const { return {bytes.get(), size}; }
  void reserve(std::size_t new_capacity) {
    auto bigger = std::make_unique_for_overwrite<char[]>(new_capacity);
    if (size > 0) std::memcpy(bigger.get(), bytes.get(), size);
    bytes = std::move(bigger);
    capacity = new_capacity;
  }
  void make_room() {
    if (size == capacity) reserve(std::max<std::size_t>(2 * capacity, 1 << 16));
  }
};

// The file as stored on disk, compressed or not: room for its size plus one byte (so that the
// read that sees the end needs no growth), doubling if it grows meanwhile or is not a regular
// file (a pipe).
FileText read_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(path, 0, std::string("cannot open file: ") + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  FileText file;
  struct stat status {};
  const bool regular = ::fstat(fd, &status) == 0 && S_ISREG(status.st_mode);
  file.reserve(regular ? static_cast<std::size_t>(status.st_size) + 1 : std::size_t{1} << 16);
  for (;;) {
    file.make_room();
    const std::size_t chunk = std::min<std::size_t>(file.capacity - file.size, 1u << 30);
    const ssize_t got = ::read(fd, file.bytes.get() + file.size, chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0)
      throw InputError(path, 0, std::string("cannot read file: ") + std::strerror(errno));
    if (got == 0) break;
    file.size += static_cast<std::size_t>(got);
  }
  return file;
}

bool is_gzip(std::string_view bytes) {
  return bytes.size() > 1 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

// Decompresses gzip data as zlib's gzread does: members that follow one another are
// concatenated, and bytes after the last member that do not start another are ignored. The
// size a member's trailer claims is not trusted: the buffer starts at a guess and doubles.
FileText gunzip(std::string_view compressed, const std::string& name) {
  z_stream stream{};
  if (inflateInit2(&stream, 15 + 16) != Z_OK) throw std::bad_alloc();
  struct Ender {
    z_stream* stream;
    ~Ender() { inflateEnd(stream); }
  } ender{&stream};
  auto corrupt = [&]() -> InputError {
    return InputError(name, 0, "cannot read file: corrupt or truncated gzip data");
  };
  FileText text;
  text.reserve(std::max<std::size_t>(4 * compressed.size(), 1 << 16));
  auto* next = reinterpret_cast<const unsigned char*>(compressed.data());
  std::size_t left = compressed.size();
  for (;;) {
    text.make_room();
    const auto in_chunk = static_cast<uInt>(std::min<std::size_t>(left, 1u << 30));
    const auto out_chunk =
        static_cast<uInt>(std::min<std::size_t>(text.capacity - text.size, 1u << 30));
    stream.next_in = const_cast<unsigned char*>(next);
    stream.avail_in = in_chunk;
    stream.next_out = reinterpret_cast<unsigned char*>(text.bytes.get() + text.size);
    stream.avail_out = out_chunk;
    const int code = inflate(&stream, Z_NO_FLUSH);
    next += in_chunk - stream.avail_in;
    left -= in_chunk - stream.avail_in;
    text.size += out_chunk - stream.avail_out;
    if (code == Z_STREAM_END) {
      if (!is_gzip({reinterpret_cast<const char*>(next), left})) break;
      if (inflateReset(&stream) != Z_OK) throw corrupt();
    } else if (code == Z_MEM_ERROR) {
      throw std::bad_alloc();
    } else if (code != Z_OK) {
      // Z_DATA_ERROR, Z_NEED_DICT, or Z_BUF_ERROR: no progress with room to write, so the
      // input ran out before the member's end.
      throw corrupt();
    }
  }
  return text;
}

// ---------------------------------------------------------------------------------------------
// Scanning the text

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }
bool is_separator(char c) { return is_blank(c) || c == '\n'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

// A cursor over the file text that knows its 1-based line number, so that every error can
// say where it happened.
class Scanner {
 public:
  Scanner(const std::string& path, std::string_view text)
      : path_(path), begin_(text.data()), pos_(begin_), end_(begin_ + text.size()) {}

  long line() const { return line_; }
  const std::string& path() const { return path_; }
  bool at_end() const { return pos_ == end_; }

  // The number of the file's last line, for errors about the file ending too soon.
  // Only meaningful once the cursor is at the end.
  long last_line() const {
    bool ends_with_newline = end_ != begin_ && end_[-1] == '\n';
    return ends_with_newline ? line_ - 1 : line_;
  }

  [[noreturn]] void fail(const std::string& message) const { fail_at(line_, message); }
  [[noreturn]] void fail_at(long line, const std::string& message) const {
    throw InputError(path_, line, message);
  }

  // Moves to the first field of the next line that holds data: comment lines (%) and blank
  // lines are skipped. False at the end of the file.
  bool next_data_line() {
    for (;;) {
      skip_blanks();
      if (pos_ == end_) return false;
      if (*pos_ == '\n') {
        next_line();
      } else if (*pos_ == '%') {
        skip_rest_of_line();
      } else {
        return true;
      }
    }
  }

  // The next field of the current line; empty when the line has no more fields.
  std::string_view next_field() {
    skip_blanks();
    const char* start = pos_;
    while (pos_ != end_ && !is_separator(*pos_)) ++pos_;
    return {start, static_cast<std::size_t>(pos_ - start)};
  }

  // Ends an entry: only blanks may follow its last field.
  void finish_line(const char* what) {
    skip_blanks();
    if (pos_ == end_) return;
    if (*pos_ != '\n') {
      std::string_view extra = next_field();
      fail("unexpected '" + std::string(extra) + "' after " + what);
    }
    next_line();
  }

  // A 1-based index in 1..limit, returned 0-based. Indices make up most of a file, so plain digits
  // are parsed right here; anything else (a sign, a missing or malformed field) takes the careful
  // path with its error messages.
  index_t read_index(const char* what, long long limit) {
    skip_blanks();
    const char* start = pos_;
    long long value = 0;
    while (pos_ != end_ && is_digit(*pos_) && pos_ - start < 18) {
      value = 10 * value + (*pos_ - '0');
      ++pos_;
    }
    if (pos_ == start || !at_field_end()) {
      pos_ = start;
      value = checked_integer(what);
    }
    if (value < 1 || value > limit) {
      fail(std::string(what) + " " + std::to_string(value) + " is out of range 1.." +
           std::to_string(limit));
    }
    return static_cast<index_t>(value - 1);
  }

  double read_value(MmField field_type) {
    if (field_type == MmField::integer) {
      return static_cast<double>(checked_integer("integer value"));
    }
    skip_blanks();
    double value = 0;
    auto [stop, error] = std::from_chars(pos_, end_, value);
    if (error == std::errc() && (stop == end_ || is_separator(*stop)) && std::isfinite(value)) {
      pos_ = stop;
      return value;
    }
    return checked_real(required_field("value"));
  }

  static bool parse_integer(std::string_view field, long long& value) {
    if (field.size() > 1 && field[0] == '+' && field[1] != '-') field.remove_prefix(1);
    auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
    return error == std::errc() && end == field.data() + field.size();
  }

 private:
  void skip_blanks() {
    while (pos_ != end_ && is_blank(*pos_)) ++pos_;
  }
  void next_line() {
    ++pos_;
    ++line_;
  }
  void skip_rest_of_line() {
    auto* newline = static_cast<const char*>(std::memchr(pos_, '\n', end_ - pos_));
    if (newline == nullptr) {
      pos_ = end_;
      return;
    }
    pos_ = newline;
    next_line();
  }

  std::string_view required_field(const char* what) {
    std::string_view field = next_field();
    if (field.empty()) fail("too few fields in the entry: missing the " + std::string(what));
    return field;
  }

  // Shown in messages, cut short so that a binary file cannot flood the terminal.
  static std::string quoted(std::string_view field) {
    return field.size() <= 40 ? std::string(field) : std::string(field.substr(0, 40)) + "...";
  }

  bool at_field_end() const { return pos_ == end_ || is_separator(*pos_); }

  long long checked_integer(const char* what) {
    std::string_view field = required_field(what);
    long long value = 0;
    if (!parse_integer(field, value)) fail("bad " + std::string(what) + " '" + quoted(field) + "'");
    return value;
  }

  double checked_real(std::string_view field) const {
    std::string_view digits = field;
    if (digits.size() > 1 && digits[0] == '+' && digits[1] != '-') digits.remove_prefix(1);
    double value = 0;
    auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (end != digits.data() + digits.size()) fail("bad value '" + quoted(field) + "'");
    if (error == std::errc::result_out_of_range) value = out_of_range_value(digits, field);
    if (!std::isfinite(value)) fail("NaN or Inf value '" + quoted(field) + "' is not allowed");
    return value;
  }

  // from_chars reports both overflow and underflow as out of range. Underflow (to 0 or a
  // subnormal number) is fine, overflow is not: the wider long double tells them apart
  // (and unlike strtod it ignores the locale's decimal point).
  double out_of_range_value(std::string_view digits, std::string_view field) const {
    long double wide = 0;
    auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), wide);
    if (error != std::errc() || !(std::fabs(wide) <= std::numeric_limits<double>::max())) {
      fail("value '" + quoted(field) + "' is beyond the double range");
    }
    return static_cast<double>(wide);
  }

  const std::string& path_;
  const char* begin_;
  const char* pos_;
  const char* end_;
  long line_ = 1;
};

// ---------------------------------------------------------------------------------------------
// Banner and size line

enum class MmFormat { coordinate, array };

struct Header {
  MmFormat format = MmFormat::coordinate;
  MmField field = MmField::real;
  MmSymmetry symmetry = MmSymmetry::general;
  long long rows = 0;
  long long cols = 0;
  long long entries = 0;  // as declared; for arrays the number of values stored
  long size_line = 0;
};

std::string lowercase(std::string_view text) {
  std::string result(text);
  for (char& c : result) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return result;
}

MmFormat parse_format(const Scanner& in, std::string_view word) {
  std::string name = lowercase(word);
  if (name == "coordinate") return MmFormat::coordinate;
  if (name == "array") return MmFormat::array;
  in.fail("unknown format '" + std::string(word) + "' (expected coordinate or array)");
}

MmField parse_field(const Scanner& in, std::string_view word) {
  std::string name = lowercase(word);
  if (name == "real") return MmField::real;
  if (name == "integer") return MmField::integer;
  if (name == "pattern") return MmField::pattern;
  if (name == "complex") in.fail("complex matrices are not supported (field 'complex')");
  in.fail("unknown field '" + std::string(word) + "' (expected real, integer or pattern)");
}

MmSymmetry parse_symmetry(const Scanner& in, std::string_view word) {
  std::string name = lowercase(word);
  if (name == "general") return MmSymmetry::general;
  if (name == "symmetric") return MmSymmetry::symmetric;
  if (name == "skew-symmetric") return MmSymmetry::skew_symmetric;
  if (name == "hermitian") in.fail("hermitian matrices are not supported (they are complex)");
  in.fail("unknown symmetry '" + std::string(word) +
          "' (expected general, symmetric or skew-symmetric)");
}

// First line: %%MatrixMarket matrix <format> <field> <symmetry>, keywords in any case.
Header parse_banner(Scanner& in) {
  if (in.at_end()) in.fail("empty file: expected the '%%MatrixMarket matrix' banner");
  const std::string expected = "'%%MatrixMarket matrix <format> <field> <symmetry>'";
  std::string_view words[5];
  for (auto& word : words) word = in.next_field();
  if (lowercase(words[0]) != "%%matrixmarket") {
    in.fail("missing banner: the first line must be " + expected);
  }
  if (lowercase(words[1]) != "matrix") {
    in.fail("unsupported object '" + std::string(words[1]) + "': the banner must be " + expected);
  }
  if (words[4].empty()) in.fail("incomplete banner: expected " + expected);
  Header header;
  header.format = parse_format(in, words[2]);
  header.field = parse_field(in, words[3]);
  header.symmetry = parse_symmetry(in, words[4]);
  in.finish_line("the banner");
  if (header.format == MmFormat::array && header.field == MmField::pattern) {
    in.fail_at(1, "an array file cannot have the field 'pattern'");
  }
  return header;
}

long long parse_size(const Scanner& in, std::string_view field, const char* what) {
  long long value = 0;
  if (!Scanner::parse_integer(field, value)) {
    in.fail("bad size line: " + std::string(what) + " '" + std::string(field) +
            "' is not an integer");
  }
  if (value < 0) in.fail("bad size line: " + std::string(what) + " is negative");
  if (value > kIndexLimit) {
    in.fail("bad size line: " + std::string(what) + " " + std::to_string(value) +
            " exceeds the 32-bit index limit " + std::to_string(kIndexLimit));
  }
  return value;
}

// Values an array file stores: everything, or one triangle (without the diagonal if skew).
long long array_entries(const Header& header) {
  long long n = header.rows;
  switch (header.symmetry) {
    case MmSymmetry::general: return header.rows * header.cols;
    case MmSymmetry::symmetric: return n * (n + 1) / 2;
    case MmSymmetry::skew_symmetric: return n * (n - 1) / 2;
  }
  return 0;
}

// "rows cols entries" (coordinate) or "rows cols" (array), after any comments.
void parse_size_line(Scanner& in, Header& header) {
  bool coordinate = header.format == MmFormat::coordinate;
  const char* layout = coordinate ? "3 numbers (rows columns entries)" : "2 numbers (rows columns)";
  if (!in.next_data_line()) {
    in.fail_at(in.last_line(), std::string("missing size line: expected ") + layout);
  }
  header.size_line = in.line();
  std::string_view fields[4];
  int count = 0;
  for (auto& field : fields) {
    field = in.next_field();
    if (!field.empty()) ++count;
  }
  int expected = coordinate ? 3 : 2;
  if (count != expected || !in.next_field().empty()) {
    in.fail("bad size line: expected " + std::string(layout) + ", found " +
            (count > expected ? "more" : std::to_string(count)));
  }
  header.rows = parse_size(in, fields[0], "rows");
  header.cols = parse_size(in, fields[1], "columns");
  if (header.symmetry != MmSymmetry::general && header.rows != header.cols) {
    in.fail("a symmetric or skew-symmetric matrix must be square, but this one is " +
            std::to_string(header.rows) + " x " + std::to_string(header.cols));
  }
  header.entries = coordinate ? parse_size(in, fields[2], "entries") : array_entries(header);
  in.finish_line("the size line");
}

Header read_header(Scanner& in) {
  Header header = parse_banner(in);
  parse_size_line(in, header);
  return header;
}

// ---------------------------------------------------------------------------------------------
// What the size line is trusted with
//
// A size line is a claim: "2000000000 2000000000 5" in a 100-byte file would have the reader
// allocate row pointers, or a dense vector, of gigabytes. Entries are backed by the file's bytes,
// so nothing is reserved for more entries than the file can hold; rows (and a vector's length)
// that no entry fills are backed by nothing, so they are allowed only up to as many as the
// entries can fill, or kUnfilledAllowance, whichever is more. A real file never comes near: a
// matrix CG can solve has an entry in every row.

constexpr long long kUnfilledAllowance = 1 << 20;

// The entries the file can really hold: as declared, but no more than its bytes allow (every
// entry takes at least two bytes, a digit and a line end, as "1\n" in an array file).
long long entries_the_file_can_hold(const Header& header, std::size_t text_bytes) {
  return std::min<long long>(header.entries, static_cast<long long>(text_bytes / 2) + 1);
}

// Refuses, at the size line, a length (rows, or a vector's entries) of which more than
// max(filled, kUnfilledAllowance) would stay empty, where `filled` is the most the file's
// entries can fill.
void check_length_is_backed(const Scanner& in, const Header& header, std::size_t text_bytes,
                            long long length, long long filled, const char* what) {
  const long long unfilled_limit = std::max(filled, kUnfilledAllowance);
  if (length <= filled + unfilled_limit) return;
  const long long holds = entries_the_file_can_hold(header, text_bytes);
  const std::string entries = holds < header.entries ? "the file (" + std::to_string(text_bytes) +
                                                           " bytes) has room for only " +
                                                           std::to_string(holds) + " entries"
                                                     : "only " + std::to_string(holds) + " entries";
  in.fail_at(header.size_line, "the size line declares " + std::to_string(length) + " " + what +
                                   " but " + entries + ", which can fill at most " +
                                   std::to_string(filled) + " " + what + "; more than " +
                                   std::to_string(unfilled_limit) + " empty " + what +
                                   " are refused rather than allocated");
}

// ---------------------------------------------------------------------------------------------
// Entries

[[noreturn]] void fail_too_few(const Scanner& in, long long expected, long long found) {
  in.fail_at(in.last_line(), "too few entries (expected " + std::to_string(expected) + ", found " +
                                 std::to_string(found) + "): the file ends at line " +
                                 std::to_string(in.last_line()));
}

void check_no_more_entries(Scanner& in, const Header& header) {
  if (in.next_data_line()) {
    in.fail("more entries than the " + std::to_string(header.entries) +
            " declared in the size line");
  }
}

// Calls add(row, col, value, line) for every stored entry, 0-based.
template <typename Add>
void read_coordinate_entries(Scanner& in, const Header& header, Add&& add) {
  for (long long k = 0; k < header.entries; ++k) {
    if (!in.next_data_line()) fail_too_few(in, header.entries, k);
    index_t row = in.read_index("row index", header.rows);
    index_t col = in.read_index("column index", header.cols);
    double value = header.field == MmField::pattern ? 1.0 : in.read_value(header.field);
    long line = in.line();
    in.finish_line("the entry");
    add(row, col, value, line);
  }
  check_no_more_entries(in, header);
}

// Same for array files: one value a line, column by column, one triangle if symmetric.
template <typename Add>
void read_array_entries(Scanner& in, const Header& header, Add&& add) {
  // No rows: nothing stored, whatever the columns (0 x 2147483647 walked 2^31 empty columns).
  if (header.rows == 0) {
    check_no_more_entries(in, header);
    return;
  }
  long long found = 0;
  for (long long col = 0; col < header.cols; ++col) {
    long long first_row = header.symmetry == MmSymmetry::general     ? 0
                          : header.symmetry == MmSymmetry::symmetric ? col
                                                                     : col + 1;
    for (long long row = first_row; row < header.rows; ++row, ++found) {
      if (!in.next_data_line()) fail_too_few(in, header.entries, found);
      double value = in.read_value(header.field);
      long line = in.line();
      in.finish_line("the value");
      add(static_cast<index_t>(row), static_cast<index_t>(col), value, line);
    }
  }
  check_no_more_entries(in, header);
}

template <typename Add>
void read_entries(Scanner& in, const Header& header, Add&& add) {
  if (header.format == MmFormat::coordinate) {
    read_coordinate_entries(in, header, add);
  } else {
    read_array_entries(in, header, add);
  }
}

// Collects the entries of a matrix, adding the mirror image of symmetric storage.
class MatrixBuilder {
 public:
  MatrixBuilder(const Header& header, std::size_t file_bytes)
      : rows_count_(static_cast<index_t>(header.rows)),
        cols_count_(static_cast<index_t>(header.cols)),
        mirrored_(header.symmetry != MmSymmetry::general),
        skew_(header.symmetry == MmSymmetry::skew_symmetric) {
    // Reserving for the declared count alone would let a corrupt size line claim gigabytes.
    const auto stored = static_cast<std::size_t>(entries_the_file_can_hold(header, file_bytes));
    const std::size_t expected = mirrored_ ? 2 * stored : stored;
    rows_.reserve(expected);
    cols_.reserve(expected);
    values_.reserve(expected);
  }

  void add(const Scanner& in, index_t row, index_t col, double value, long line) {
    if (skew_ && row == col) {
      in.fail_at(line, "diagonal entry (" + std::to_string(row + 1) + ", " +
                           std::to_string(col + 1) + ") in a skew-symmetric matrix");
    }
    const bool mirror = mirrored_ && row != col;
    if (values_.size() + (mirror ? 2 : 1) > static_cast<std::size_t>(kIndexLimit)) {
      in.fail_at(line, "more than " + std::to_string(kIndexLimit) +
                           " nonzeros (after symmetric expansion): beyond the 32-bit index limit");
    }
    push(row, col, value);
    if (mirror) push(col, row, skew_ ? -value : value);
  }

  // The CSR matrix, duplicates summed. `name` is the file's, for the one error left: duplicates
  // whose sum overflows (each value was checked finite as it was read).
  CsrMatrix<double> build(const std::string& name) {
    CsrMatrix<double> A = csr_from_triplets<double>(rows_count_, cols_count_, std::move(rows_),
                                                    std::move(cols_), std::move(values_));
    for (index_t row = 0; row < A.rows; ++row) {
      for (index_t k = A.row_ptr[row]; k < A.row_ptr[row + 1]; ++k) {
        if (!std::isfinite(A.values[k])) {
          throw InputError(name, 0,
                           "the duplicate entries of (" + std::to_string(row + 1) + ", " +
                               std::to_string(A.col_idx[k] + 1) +
                               ") sum to beyond the double range");
        }
      }
    }
    return A;
  }

 private:
  void push(index_t row, index_t col, double value) {
    rows_.push_back(row);
    cols_.push_back(col);
    values_.push_back(value);
  }

  const index_t rows_count_;
  const index_t cols_count_;
  const bool mirrored_;
  const bool skew_;
  std::vector<index_t> rows_, cols_;
  std::vector<double> values_;
};

// ---------------------------------------------------------------------------------------------
// Reading

// Everything but the sorting, which is left to the caller so that the file's text is freed
// first: it can be as large as the matrix.
MatrixBuilder read_matrix_entries(std::string_view text, const std::string& name,
                                  MatrixMarketInfo* info) {
  Scanner in(name, text);
  const Header header = read_header(in);
  if (header.format == MmFormat::array && header.rows * header.cols > kIndexLimit) {
    in.fail_at(header.size_line, "dense array of " + std::to_string(header.rows) + " x " +
                                     std::to_string(header.cols) +
                                     " exceeds the 32-bit index limit");
  }
  const long long stored = entries_the_file_can_hold(header, text.size());
  const bool mirrored = header.symmetry != MmSymmetry::general;
  check_length_is_backed(in, header, text.size(), header.rows, mirrored ? 2 * stored : stored,
                         "rows");
  MatrixBuilder matrix(header, text.size());
  read_entries(in, header, [&](index_t row, index_t col, double value, long line) {
    matrix.add(in, row, col, value, line);
  });
  if (info != nullptr) {
    info->field = header.field;
    info->symmetry = header.symmetry;
    info->entries_stored = static_cast<long>(header.entries);
  }
  return matrix;
}

std::vector<double> read_vector_entries(std::string_view text, const std::string& name,
                                        std::optional<index_t> matrix_rows) {
  Scanner in(name, text);
  const Header header = read_header(in);
  if (header.rows != 1 && header.cols != 1) {
    in.fail_at(header.size_line, "not a vector: the matrix is " + std::to_string(header.rows) +
                                     " x " + std::to_string(header.cols) +
                                     " (expected n x 1 or 1 x n)");
  }
  const long long length = header.rows * header.cols;
  if (matrix_rows && length != *matrix_rows) {
    in.fail_at(header.size_line, "the vector has " + std::to_string(length) +
                                     " entries but the matrix has " + std::to_string(*matrix_rows) +
                                     " rows");
  }
  std::vector<double> x;
  if (header.format == MmFormat::array) {
    // Every value is stored, in order: the vector grows as they are read, never beyond the file.
    x.reserve(static_cast<std::size_t>(entries_the_file_can_hold(header, text.size())));
    read_entries(in, header, [&](index_t row, index_t col, double value, long) {
      // One of row and col is 0: their sum is the position in either orientation.
      if (static_cast<std::size_t>(row) + static_cast<std::size_t>(col) != x.size()) {
        throw std::logic_error("Matrix Market: array vector values out of order");
      }
      x.push_back(value);  // assigned, not added to 0, so that -0.0 keeps its sign
    });
    x.resize(static_cast<std::size_t>(length), 0.0);  // a 1 x 1 skew-symmetric one stores none
    return x;
  }
  // Coordinate: missing entries are 0, so the length is allocated whole, once the file has
  // shown it can back it (or the matrix it goes with does).
  if (!matrix_rows) {
    check_length_is_backed(in, header, text.size(), length,
                           entries_the_file_can_hold(header, text.size()),
                           header.cols == 1 ? "rows" : "columns");
  }
  x.assign(static_cast<std::size_t>(length), 0.0);
  read_entries(in, header, [&](index_t row, index_t col, double value, long line) {
    double& slot = x[static_cast<std::size_t>(row) + static_cast<std::size_t>(col)];
    slot += value;  // duplicates are summed
    if (!std::isfinite(slot)) {
      in.fail_at(line, "the duplicate entries of position " + std::to_string(row + col + 1) +
                           " sum to beyond the double range");
    }
  });
  return x;
}

DenseColumns read_dense_entries(std::string_view text, const std::string& name,
                                std::optional<index_t> rows) {
  Scanner in(name, text);
  const Header header = read_header(in);
  if (header.symmetry != MmSymmetry::general)
    in.fail_at(1, "a dense n x k matrix must be stored 'general'");
  if (rows && header.rows != *rows)
    in.fail_at(header.size_line, "the file has " + std::to_string(header.rows) +
                                     " rows but the matrix has " + std::to_string(*rows));
  if (header.cols < 1 || header.cols > 64 || header.rows * header.cols > kIndexLimit)
    in.fail_at(header.size_line, "a dense n x k matrix needs 1 to 64 columns and n k < 2^31 (got " +
                                     std::to_string(header.rows) + " x " +
                                     std::to_string(header.cols) + ")");
  // Every value is backed by the file's bytes (array: each stored; coordinate: as vectors are).
  const long long length = header.rows * header.cols;
  check_length_is_backed(in, header, text.size(), length,
                         entries_the_file_can_hold(header, text.size()), "values");
  DenseColumns d;
  d.rows = index_t(header.rows);
  d.cols = index_t(header.cols);
  d.size_line = header.size_line;
  d.values.assign(std::size_t(length), 0.0);
  read_entries(in, header, [&](index_t row, index_t col, double value, long line) {
    double& slot = d.values[std::size_t(col) * std::size_t(header.rows) + std::size_t(row)];
    slot += value;
    if (!std::isfinite(slot)) in.fail_at(line, "duplicate entries sum to beyond the double range");
  });
  return d;
}

// A file's text: its bytes, decompressed if they are gzip data (told by content, not name).
FileText load_file(const std::string& path) {
  FileText file = read_file(path);
  if (is_gzip(file.view())) return gunzip(file.view(), path);
  return file;
}

}  // namespace

// The path and the in-memory readers share everything after the bytes are in memory. The
// file's text is a temporary of the first statement, freed before the CSR is built.
CsrMatrix<double> read_matrix_market(const std::string& path, MatrixMarketInfo* info) {
  MatrixBuilder entries = read_matrix_entries(load_file(path).view(), path, info);
  return entries.build(path);
}

CsrMatrix<double> read_matrix_market_bytes(std::string_view bytes, const std::string& name,
                                           MatrixMarketInfo* info) {
  MatrixBuilder entries = is_gzip(bytes)
                              ? read_matrix_entries(gunzip(bytes, name).view(), name, info)
                              : read_matrix_entries(bytes, name, info);
  return entries.build(name);
}

std::vector<double> read_vector_market(const std::string& path,
                                       std::optional<index_t> matrix_rows) {
  return read_vector_entries(load_file(path).view(), path, matrix_rows);
}

std::vector<double> read_vector_market_bytes(std::string_view bytes, const std::string& name,
                                             std::optional<index_t> matrix_rows) {
  if (is_gzip(bytes)) return read_vector_entries(gunzip(bytes, name).view(), name, matrix_rows);
  return read_vector_entries(bytes, name, matrix_rows);
}

DenseColumns read_dense_market(const std::string& path, std::optional<index_t> rows) {
  return read_dense_entries(load_file(path).view(), path, rows);
}

// ---------------------------------------------------------------------------------------------
// Writing

namespace {

// Writes into path + ".tmp.<pid>" and renames that onto path in commit(), so that readers
// never see a half-written file. Anything not committed is removed.
class AtomicFile {
 public:
  explicit AtomicFile(const std::string& path)
      : path_(path), temp_path_(path + ".tmp." + std::to_string(::getpid())) {
    check_not_an_input(path);  // outputs never destroy inputs (base/atomic_file.hpp)
    ignore_file_size_signal();  // a full disk fails the write, it does not kill us mid-file
    file_ = std::fopen(temp_path_.c_str(), "wb");
    if (file_ == nullptr) fail_with_errno("cannot create file");
    buffer_.reserve(kFlushSize + 256);
  }
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile() { discard(); }

  void append(std::string_view text) {
    buffer_.append(text);
    if (buffer_.size() >= kFlushSize) flush();
  }

  template <typename Number>
  void append_number(Number value) {
    char digits[64];
    auto [end, error] = std::to_chars(digits, digits + sizeof digits, value);
    append(std::string_view(digits, static_cast<std::size_t>(end - digits)));
  }

  void commit() {
    flush();
    std::FILE* file = std::exchange(file_, nullptr);
    if (std::fclose(file) != 0) fail_with_errno("cannot write file");
    if (std::rename(temp_path_.c_str(), path_.c_str()) != 0) {
      fail_with_errno("cannot rename " + temp_path_ + " onto the file");
    }
    committed_ = true;
  }

  // Removes the temporary file, then reports the problem against the final path.
  [[noreturn]] void fail(const std::string& message) {
    discard();
    throw InputError(path_, 0, message);
  }
  [[noreturn]] void fail_with_errno(const std::string& what) {
    fail(what + ": " + std::strerror(errno));
  }

 private:
  static constexpr std::size_t kFlushSize = 1 << 20;

  void flush() {
    if (buffer_.empty()) return;
    if (std::fwrite(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size()) {
      fail_with_errno("cannot write file");
    }
    buffer_.clear();
  }

  void discard() {
    if (committed_) return;
    if (file_ != nullptr) std::fclose(std::exchange(file_, nullptr));
    std::remove(temp_path_.c_str());
  }

  std::string path_;
  std::string temp_path_;
  std::FILE* file_ = nullptr;
  std::string buffer_;
  bool committed_ = false;
};

// Each line of the comment becomes a % line after the banner.
void append_header(AtomicFile& out, const char* banner, const std::string& comment) {
  out.append(banner);
  out.append("\n");
  std::string_view rest = comment;
  while (!rest.empty()) {
    std::size_t newline = std::min(rest.find('\n'), rest.size());
    out.append("% ");
    out.append(rest.substr(0, newline));
    out.append("\n");
    rest.remove_prefix(std::min(newline + 1, rest.size()));
  }
}

// The reader rejects NaN and Inf, so writing them would produce a file nobody can read back.
void check_finite(AtomicFile& out, double value, const std::string& where) {
  if (!std::isfinite(value)) out.fail("cannot write the NaN or Inf value at " + where);
}

}  // namespace

void write_vector_market(const std::string& path, const std::vector<double>& x,
                         const std::string& comment) {
  AtomicFile out(path);
  append_header(out, "%%MatrixMarket matrix array real general", comment);
  out.append_number(x.size());
  out.append(" 1\n");
  for (std::size_t i = 0; i < x.size(); ++i) {
    check_finite(out, x[i], "position " + std::to_string(i + 1));
    out.append_number(x[i]);  // shortest form that reads back bit-identical
    out.append("\n");
  }
  out.commit();
}

void write_matrix_market(const std::string& path, const CsrMatrix<double>& A,
                         bool lower_triangle_only, const std::string& comment) {
  AtomicFile out(path);
  if (lower_triangle_only && A.rows != A.cols) {
    out.fail("a symmetric file needs a square matrix, not " + std::to_string(A.rows) + " x " +
             std::to_string(A.cols));
  }
  auto stored = [&](index_t row, index_t k) { return !lower_triangle_only || A.col_idx[k] <= row; };
  long long entries = 0;
  for (index_t row = 0; row < A.rows; ++row) {
    for (index_t k = A.row_ptr[row]; k < A.row_ptr[row + 1]; ++k) entries += stored(row, k);
  }
  append_header(out,
                lower_triangle_only ? "%%MatrixMarket matrix coordinate real symmetric"
                                    : "%%MatrixMarket matrix coordinate real general",
                comment);
  out.append_number(A.rows);
  out.append(" ");
  out.append_number(A.cols);
  out.append(" ");
  out.append_number(entries);
  out.append("\n");
  for (index_t row = 0; row < A.rows; ++row) {
    for (index_t k = A.row_ptr[row]; k < A.row_ptr[row + 1]; ++k) {
      if (!stored(row, k)) continue;
      check_finite(out, A.values[k], "row " + std::to_string(row + 1));
      out.append_number(row + 1);
      out.append(" ");
      out.append_number(A.col_idx[k] + 1);
      out.append(" ");
      out.append_number(A.values[k]);
      out.append("\n");
    }
  }
  out.commit();
}

}  // namespace cgs
