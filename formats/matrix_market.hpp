// Matrix Market reading and writing (https://math.nist.gov/MatrixMarket/formats.html).
//
// Reads files as SuiteSparse ships them: `coordinate` real/integer/pattern with general,
// symmetric or skew-symmetric storage, `array` files for dense vectors, and any of them
// gzip-compressed (.gz, detected by content, not name). Every error is an InputError that
// names the file and the line.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/csr.hpp"

namespace cgs {

enum class MmField { real, integer, pattern };
enum class MmSymmetry { general, symmetric, skew_symmetric };

struct MatrixMarketInfo {
  MmField field = MmField::real;
  MmSymmetry symmetry = MmSymmetry::general;
  long entries_stored = 0;  // entries as listed in the file (one triangle if symmetric)
};

// Reads a sparse matrix. Symmetric storage is expanded (the diagonal once), skew-symmetric
// likewise with the sign flipped, pattern entries get value 1, duplicates are summed, and the
// result is sorted by row then column with 0-based indices.
//
// The size line is not trusted with memory: nothing is reserved for more entries than the file
// can hold, and a matrix of which more rows would be empty than its entries can fill (beyond
// 2^20) is refused at the size line, so that 100 bytes claiming 2e9 rows allocate nothing.
CsrMatrix<double> read_matrix_market(const std::string& path, MatrixMarketInfo* info = nullptr);

// Reads a dense vector: an `array` file with one column (or row), or an n x 1 (1 x n)
// `coordinate` file (missing entries are 0, duplicates summed). `matrix_rows`, when given, is
// the order of the matrix the vector goes with: a vector of another length is refused at its
// size line, before anything is allocated. Without it a coordinate file's length is trusted as
// a matrix's rows are (above); an array file's values are read as they come.
std::vector<double> read_vector_market(const std::string& path,
                                       std::optional<index_t> matrix_rows = std::nullopt);

// A dense matrix (n x k, a few columns: a near-nullspace, node coordinates) as `array` general
// storage, column by column, or a `coordinate` general file (missing entries 0). `rows`, when
// given, is refused at the size line if the file has another number of rows. size_line is the
// size line's number, for the caller's own errors about the shape.
struct DenseColumns {
  index_t rows = 0, cols = 0;
  std::vector<double> values;  // column-major: entry (i, c) at c * rows + i
  long size_line = 0;
};
DenseColumns read_dense_market(const std::string& path,
                               std::optional<index_t> rows = std::nullopt);

// The same from a file's bytes in memory (plain text, or gzip data told apart by its magic
// bytes): what the path versions do after reading the file. `name` stands for the file in
// error messages.
CsrMatrix<double> read_matrix_market_bytes(std::string_view bytes, const std::string& name,
                                           MatrixMarketInfo* info = nullptr);
std::vector<double> read_vector_market_bytes(std::string_view bytes, const std::string& name,
                                             std::optional<index_t> matrix_rows = std::nullopt);

// Writes a vector as a Matrix Market `array` file with 17 significant digits, so it reads back
// bit-identical. Written to a temporary file and renamed: never left half-written.
void write_vector_market(const std::string& path, const std::vector<double>& x,
                         const std::string& comment = "");

// Writes a matrix as `coordinate real general`, or `symmetric` (lower triangle only) when
// `lower_triangle_only` is set; same atomicity and precision as write_vector_market.
void write_matrix_market(const std::string& path, const CsrMatrix<double>& A,
                         bool lower_triangle_only = false, const std::string& comment = "");

}  // namespace cgs
