// What cgsolve tells the user: a readable summary on stdout and the same as JSON (--report).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "formats/matrix_market.hpp"
#include "formats/stats.hpp"
#include "solver/solve.hpp"
#include "solver/validate.hpp"

namespace cgs {

struct RunSummary {
  std::string matrix_path, rhs_path;
  MatrixMarketInfo matrix_info;
  MatrixStats stats;
  SolveOptions options;
  std::string device_description;
  double read_seconds = 0;
  SolveReport solve;
  std::optional<double> error_vs_ones;  // ||x - 1|| / ||1|| when b = A*1
  std::optional<ValidationReport> validation;
};

std::string describe_matrix_info(const MatrixMarketInfo& info);
void print_summary(std::FILE* out, const RunSummary& run);
nlohmann::json to_json(const RunSummary& run);

}  // namespace cgs
