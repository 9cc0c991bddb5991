// What cgsolve tells the user: a readable summary on stdout and the same as JSON (--report).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "formats/matrix_market.hpp"
#include "formats/stats.hpp"
#include "solver/distributed/distributed_solve.hpp"
#include "solver/solver.hpp"
#include "solver/validate.hpp"

namespace cgs {

struct RunSummary {
  std::string matrix_path, rhs_path;
  MatrixMarketInfo matrix_info;
  MatrixStats stats;
  std::string device_description;
  double read_seconds = 0;
  SolveReport solve;                    // its plan says what ran
  std::optional<double> error_vs_ones;  // ||x - 1|| / ||1|| when b = A*1
  std::optional<ValidationReport> validation;
  std::optional<dist::DistributedReport> distributed;  // a distributed solve (rank 0)
};

std::string describe_matrix_info(const MatrixMarketInfo& info);
void print_summary(std::FILE* out, const RunSummary& run);
nlohmann::json to_json(const RunSummary& run);

// The plan as JSON (also netsolve's report).
nlohmann::json plan_json(const Plan& plan);
// The SpMV statistics as JSON: measured fields are null when not measured, never 0.
nlohmann::json spmv_json(const SolveReport& s);

}  // namespace cgs
