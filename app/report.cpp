#include "report.hpp"

#include <cstdio>

#include "formats/types.hpp"

namespace cgs {

std::string describe_matrix_info(const MatrixMarketInfo& info) {
  const char* field = info.field == MmField::real      ? "real"
                      : info.field == MmField::integer ? "integer"
                                                       : "pattern";
  const char* symmetry = info.symmetry == MmSymmetry::general     ? "general"
                         : info.symmetry == MmSymmetry::symmetric ? "symmetric"
                                                                  : "skew-symmetric";
  return std::string(field) + " " + symmetry;
}

namespace {

// The format and row order that ran: the inspector's choice under --format/--kernel auto.
Format format_used(const RunSummary& run) {
  return run.solve.autotuned ? run.solve.auto_format : run.options.backend.format;
}
bool sort_rows_used(const RunSummary& run) {
  return run.solve.autotuned ? run.solve.auto_sort_rows : run.options.sort_rows;
}

std::string describe_solver(const RunSummary& run) {
  const SolveOptions& o = run.options;
  std::string text = to_string(format_used(run));
  if (format_used(run) == Format::hll)
    text += " (hack size " + std::to_string(o.backend.hack_size) + ")";
  const std::string order = o.reorder_rcm ? "reverse Cuthill-McKee order" : "file order";
  text += sort_rows_used(run) ? ", rows sorted by length" : ", rows in " + order;
  if (o.reorder_rcm && sort_rows_used(run)) text += " after reverse Cuthill-McKee";
  text += ", precision " + std::string(o.precision == Precision::single ? "float" : "double");
  text += ", preconditioner " + to_string(o.preconditioner);
  return text;
}

double micro(double seconds) { return seconds * 1e6; }

// "auto: chose hll/cusparse, rows sorted (hll sorted: 1.80 us per product vs ...), inspector
// 3.1 ms (2.0% of the solve)"
std::string describe_autotune(const RunSummary& run) {
  const SolveReport& s = run.solve;
  std::string text = "auto: chose " + to_string(s.auto_format);
  if (!s.auto_kernel.empty()) text += "/" + s.auto_kernel;
  text += s.auto_sort_rows ? ", rows sorted" : ", rows in file order";
  text += " (" + s.auto_reason + ")";
  char cost[96];
  std::snprintf(cost, sizeof cost, ", inspector %.1f ms", s.times.autotune_seconds * 1e3);
  text += cost;
  if (s.times.solve_seconds > 0) {
    std::snprintf(cost, sizeof cost, " (%.1f%% of the solve)",
                  100 * s.times.autotune_seconds / s.times.solve_seconds);
    text += cost;
  }
  // The cost is only what a hand choice would not have paid: the winner's build is in "sort"
  // and "build format" (the solve runs on it), the team start-up is said apart.
  text += "; the solve reused the winner as built";
  if (s.times.thread_start_seconds > 0) {
    std::snprintf(cost, sizeof cost, "; OpenMP team start-up %.1f ms (paid by any first solve)",
                  s.times.thread_start_seconds * 1e3);
    text += cost;
  }
  return text;
}

}  // namespace

void print_summary(std::FILE* out, const RunSummary& run) {
  const SolveReport& s = run.solve;
  const CgResult& cg = s.cg;
  std::fprintf(out, "matrix     %s (%s)\n%s", run.matrix_path.c_str(),
               describe_matrix_info(run.matrix_info).c_str(), format_stats(run.stats).c_str());
  std::fprintf(out, "rhs        %s\n",
               run.rhs_path.empty() ? "b = A * ones (exact x = ones)" : run.rhs_path.c_str());
  std::fprintf(out, "solver     CG, %s\n", describe_solver(run).c_str());
  if (s.autotuned) std::fprintf(out, "  %s\n", describe_autotune(run).c_str());
  std::fprintf(out, "backend    %s on %s, %s CG loop\n", s.backend_name.c_str(),
               run.device_description.c_str(), s.cg_loop.c_str());
  if (!s.cg_loop_note.empty())
    std::fprintf(out, "  (no fused GPU loop: %s)\n", s.cg_loop_note.c_str());
  std::fprintf(out, "result     %s", to_string(cg.status).c_str());
  if (cg.status == CgStatus::converged) {
    std::fprintf(out, " in %ld iterations", cg.converged_at);
    if (cg.iterations > cg.converged_at)
      std::fprintf(out, " (%ld run: residual read every %d)", cg.iterations,
                   run.options.cg.check_every);
  } else if (cg.status != CgStatus::zero_rhs) {
    std::fprintf(out, " after %ld iterations", cg.iterations);
  }
  std::fprintf(out, "\n  ||r||/||b|| recursive  %.3e  (tolerance %.1e", cg.relative_residual(),
               run.options.cg.tol);
  if (run.options.cg.atol > 0) std::fprintf(out, ", atol %.1e", run.options.cg.atol);
  std::fprintf(out, ")\n  ||b-Ax||/||b|| true    %.3e\n", s.true_relative_residual);
  if (run.error_vs_ones) std::fprintf(out, "  ||x-1||/||1||          %.3e\n", *run.error_vs_ones);

  const SolveTimes& t = s.times;
  std::fprintf(out,
               "times      read %.4f s, sort %.4f s, build format %.4f s, upload %.4f s, "
               "solve %.4f s, download %.4f s\n",
               run.read_seconds, t.sort_seconds, t.convert_seconds, t.upload_seconds,
               t.solve_seconds, t.download_seconds);
  if (!cg.spmv_seconds.empty()) {
    std::fprintf(out,
                 "  SpMV   %.4f s in all (%.0f%% of the solve); per call mean %.2f us, median "
                 "%.2f us, min %.2f us; %.2f GFLOP/s at the median\n",
                 t.spmv_total_seconds,
                 t.solve_seconds > 0 ? 100 * t.spmv_total_seconds / t.solve_seconds : 0.0,
                 micro(t.spmv_mean_seconds), micro(t.spmv_median_seconds),
                 micro(t.spmv_min_seconds), s.spmv_gflops());
    std::fprintf(out, "  rest of an iteration (vector updates, reductions) %.2f us\n",
                 micro(t.other_per_iteration_seconds));
  } else if (cg.iterations > 0) {
    std::fprintf(out,
                 "  %.2f us per iteration (fused loop: SpMV not timed separately; "
                 "%s generic times every SpMV)\n",
                 micro(t.solve_seconds / cg.iterations),
                 run.options.backend.device == Device::gpu ? "--gpu-loop" : "--cpu-loop");
  }
  if (run.validation) {
    const ValidationReport& v = *run.validation;
    std::fprintf(out,
                 "validate   %s against %s: ||x - x_ref||_A/||x_ref||_A = %.3e "
                 "(||x - x_ref||/||x_ref|| = %.3e)\n",
                 v.passed ? "PASS" : "FAIL", v.reference.c_str(), v.difference, v.difference_2norm);
    std::fprintf(out, "  Eigen CG %s in %ld iterations, %.4f s; difference %.3e\n",
                 v.cg_converged ? "converged" : "did not converge", v.cg_iterations, v.cg_seconds,
                 v.cg_difference);
    if (v.direct_done)
      std::fprintf(out, "  Eigen SimplicialLDLT %.4f s; difference %.3e\n", v.direct_seconds,
                   v.direct_difference);
    else
      std::fprintf(out, "  Eigen SimplicialLDLT %s\n", v.direct_note.c_str());
  }
}

nlohmann::json to_json(const RunSummary& run) {
  const SolveReport& s = run.solve;
  const CgResult& cg = s.cg;
  const SolveTimes& t = s.times;
  const MatrixStats& st = run.stats;
  nlohmann::json j;
  j["matrix"] = {{"path", run.matrix_path},
                 {"storage", describe_matrix_info(run.matrix_info)},
                 {"rows", st.rows},
                 {"cols", st.cols},
                 {"nnz", st.nnz},
                 {"row_length",
                  {{"min", st.min_row_length},
                   {"mean", st.mean_row_length},
                   {"max", st.max_row_length},
                   {"avg_deviation_pct", st.row_length_avg_deviation_pct},
                   {"empty_rows", st.empty_rows}}},
                 {"ell_fill", st.ell_fill},
                 {"hll_fill", st.hll_fill}};
  j["rhs"] = run.rhs_path.empty() ? nlohmann::json("A*ones") : nlohmann::json(run.rhs_path);
  const SolveOptions& o = run.options;
  j["solver"] = {{"format", to_string(format_used(run))},
                 {"sort_rows", sort_rows_used(run)},
                 {"rcm", o.reorder_rcm},
                 {"device", to_string(o.backend.device)},
                 {"device_description", run.device_description},
                 {"backend", s.backend_name},
                 {"cg_loop", s.cg_loop},
                 {"cg_loop_note", s.cg_loop_note},
                 {"threads", o.backend.threads},
                 {"hack_size", o.backend.hack_size},
                 {"kernel", s.autotuned ? s.auto_kernel : o.backend.kernel},
                 {"precision", o.precision == Precision::single ? "float" : "double"},
                 {"preconditioner", to_string(o.preconditioner)},
                 {"tol", o.cg.tol},
                 {"atol", o.cg.atol},
                 {"max_iters", o.cg.max_iters},
                 {"check_every", o.cg.check_every}};
  if (s.autotuned)
    j["autotune"] = {{"format", to_string(s.auto_format)}, {"kernel", s.auto_kernel},
                     {"sort_rows", s.auto_sort_rows},      {"reason", s.auto_reason},
                     {"summary", describe_autotune(run)},  {"seconds", t.autotune_seconds}};
  j["result"] = {{"status", to_string(cg.status)},
                 {"converged", cg.ok()},
                 {"iterations", cg.iterations},
                 {"converged_at", cg.converged_at},
                 {"relative_residual", cg.relative_residual()},
                 {"true_relative_residual", s.true_relative_residual}};
  if (run.error_vs_ones) j["result"]["error_vs_ones"] = *run.error_vs_ones;
  j["times"] = {{"read_s", run.read_seconds},
                {"autotune_s", t.autotune_seconds},
                {"thread_start_s", t.thread_start_seconds},
                {"sort_s", t.sort_seconds},
                {"build_format_s", t.convert_seconds},
                {"upload_s", t.upload_seconds},
                {"solve_s", t.solve_seconds},
                {"download_s", t.download_seconds},
                {"spmv_total_s", t.spmv_total_seconds},
                {"spmv_mean_s", t.spmv_mean_seconds},
                {"spmv_median_s", t.spmv_median_seconds},
                {"spmv_min_s", t.spmv_min_seconds},
                {"other_per_iteration_s", t.other_per_iteration_seconds},
                {"spmv_gflops", s.spmv_gflops()}};
  if (run.validation) {
    const ValidationReport& v = *run.validation;
    j["validation"] = {{"passed", v.passed},
                       {"reference", v.reference},
                       {"difference_energy_norm", v.difference},
                       {"difference_2norm", v.difference_2norm},
                       {"eigen_cg_iterations", v.cg_iterations},
                       {"eigen_cg_seconds", v.cg_seconds},
                       {"eigen_cg_converged", v.cg_converged},
                       {"eigen_cg_difference", v.cg_difference},
                       {"ldlt_done", v.direct_done},
                       {"ldlt_seconds", v.direct_seconds},
                       {"ldlt_difference", v.direct_difference},
                       {"ldlt_note", v.direct_note}};
  }
  return j;
}

}  // namespace cgs
