#include "report.hpp"

#include <cstdio>

#include "formats/types.hpp"
#include "tuning_report.hpp"

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

double micro(double seconds) { return seconds * 1e6; }

// "inspector 3.1 ms (2.0% of the solve); the solve reused the winner as built"
std::string describe_inspection_cost(const SolveReport& s) {
  char text[160];
  std::snprintf(text, sizeof text, "inspector %.1f ms", s.times.inspect_seconds * 1e3);
  std::string out = text;
  if (s.times.probe_kept_seconds > 0) {  // --precond auto: the winner's own probe runs
    std::snprintf(text, sizeof text, ", of which %.1f ms the chosen one's iterations, kept",
                  s.times.probe_kept_seconds * 1e3);
    out += text;
  }
  if (s.times.solve_seconds > 0) {
    std::snprintf(text, sizeof text, " (%.1f%% of the solve)",
                  100 * s.times.inspect_seconds / s.times.solve_seconds);
    out += text;
  }
  out += "; the solve reused the winner as built";
  if (s.times.thread_start_seconds > 0) {
    std::snprintf(text, sizeof text, "; OpenMP team start-up %.1f ms (paid by any first solve)",
                  s.times.thread_start_seconds * 1e3);
    out += text;
  }
  return out;
}

void print_spmv(std::FILE* out, const SolveReport& s) {
  const SpmvStats& t = s.spmv;
  const double solve = s.times.solve_seconds;
  if (!t.measured) {
    std::fprintf(out, "  SpMV   not measured%s\n",
                 s.plan.cg.time_spmv ? "" : " (--no-spmv-timing)");
    if (s.cg.iterations > 0)
      std::fprintf(out, "  %.2f us per iteration\n", micro(solve / double(s.cg.iterations)));
    return;
  }
  std::fprintf(out,
               "  %s per iteration: median %.2f us, mean %.2f us, min %.2f us; %.4f s in all "
               "(%.0f%% of the solve); %.2f GFLOP/s at the median\n",
               t.what.c_str(), micro(t.median), micro(t.mean), micro(t.min), t.total,
               solve > 0 ? 100 * t.total / solve : 0.0, s.spmv_gflops());
  if (t.every > 1)
    std::fprintf(out,
                 "  (timed every %d-th iteration, to keep the timing under 1%% of the solve)\n",
                 t.every);
  if (s.cg.iterations > 0)
    std::fprintf(out, "  %.2f us per iteration, %.2f us of it besides the SpMV\n",
                 micro(solve / double(s.cg.iterations)),
                 micro((solve - t.total) / double(s.cg.iterations)));
}

// A preconditioner's table, indented under its line: a header, then a row per label.
void print_table(std::FILE* out, const PrecondTable& t) {
  std::fprintf(out, "  %-12s", t.columns.empty() ? t.name.c_str() : t.columns[0].c_str());
  for (std::size_t c = 1; c < t.columns.size(); ++c)
    std::fprintf(out, " %12s", t.columns[c].c_str());
  std::fprintf(out, "\n");
  for (const auto& [label, numbers] : t.rows) {
    std::fprintf(out, "  %-12s", label.c_str());
    for (double v : numbers) std::fprintf(out, " %12.6g", v);
    std::fprintf(out, "\n");
  }
}

void print_precond(std::FILE* out, const PrecondReport& p) {
  if (p.seconds.empty() || p.name == "none") return;
  std::fprintf(out, "precond    %s: set-up %.4f s (", p.name.c_str(), p.total_seconds());
  for (std::size_t i = 0; i < p.seconds.size(); ++i)
    std::fprintf(out, "%s%s %.4f s", i ? ", " : "", p.seconds[i].first.c_str(),
                 p.seconds[i].second);
  std::fprintf(out, ")");
  for (const auto& [key, value] : p.facts) std::fprintf(out, "; %s %s", key.c_str(), value.c_str());
  std::fprintf(out, "\n");
  for (const PrecondTable& t : p.tables) print_table(out, t);
}

void print_validation(std::FILE* out, const ValidationReport& v) {
  std::fprintf(out, "validate   %s: %s\n", v.passed ? "PASS" : "FAIL", v.verdict.c_str());
  std::fprintf(out, "  reference %s, %.4f s (%s)\n", v.reference.c_str(), v.reference_seconds,
               v.reference_why.c_str());
  std::fprintf(out, "  forward error ||x - x_ref||_A/||x_ref||_A = %.3e (2-norm %.3e)",
               v.forward_error, v.forward_error_2norm);
  if (v.condition_estimate > 0)
    std::fprintf(out, "; the residuals allow up to %.3e (condition estimate %.2e)", v.forward_bound,
                 v.condition_estimate);
  std::fprintf(out, "\n");
}

// Per-iteration microseconds of a rank's time.
double per_iteration_us(double seconds, long iterations) {
  return iterations > 0 ? micro(seconds) / double(iterations) : 0.0;
}

void print_distributed(std::FILE* out, const dist::DistributedReport& d, long iterations) {
  std::fprintf(out, "ranks      %d: %s row blocks, %s CG (%s loop), %ld reductions per iteration",
               d.ranks, to_string(d.partition).c_str(), to_string(d.variant).c_str(),
               to_string(d.loop).c_str(), d.reductions_per_iteration(iterations));
  if (d.variant == dist::CgVariant::single_reduction)
    std::fprintf(out, ", residual replaced %ld times, p.Ap by a dot in %ld iterations",
                 d.replacements, d.fallbacks);
  std::fprintf(out, "\n  partition %.4f s, scatter %.4f s, set-up %.4f s\n", d.partition_seconds,
               d.scatter_seconds, d.setup_seconds);
  std::fprintf(out,
               "  rank       rows  nnz local   nnz halo  halo  nbrs | us per iteration: local "
               "SpMV  halo wait  halo SpMV  allreduce  precond  vector  exchange\n");
  for (const dist::RankSummary& r : d.per_rank) {
    const dist::RankTimes& t = r.times;
    auto us = [&](double s) { return per_iteration_us(s, iterations); };
    std::fprintf(out,
                 "  %4d %10ld %10ld %10ld %5ld %5ld |                  %9.2f  %9.2f  %9.2f  "
                 "%9.2f  %7.2f  %6.2f  %8.2f\n",
                 r.rank, r.rows, r.local_nnz, r.halo_nnz, r.halo_size, r.neighbours,
                 us(t.local_spmv), us(t.halo_wait), us(t.halo_spmv), us(t.allreduce), us(t.precond),
                 us(t.vector_ops), us(t.halo_exchange));
  }
  std::size_t received = 0;
  long products = 0;
  for (const dist::RankSummary& r : d.per_rank) received += r.times.halo_bytes_received;
  if (!d.per_rank.empty()) products = d.per_rank.front().times.products;
  std::fprintf(out, "  halo exchange: %zu bytes per product over all ranks (the halos hold %zu)\n",
               products > 0 ? received / std::size_t(products) : std::size_t(0),
               d.halo_bytes_per_product());
}

nlohmann::json distributed_json(const dist::DistributedReport& d, long iterations) {
  nlohmann::json ranks = nlohmann::json::array();
  for (const dist::RankSummary& r : d.per_rank) {
    const dist::RankTimes& t = r.times;
    ranks.push_back({{"rank", r.rank},
                     {"rows", r.rows},
                     {"nnz_local", r.local_nnz},
                     {"nnz_halo", r.halo_nnz},
                     {"halo_size", r.halo_size},
                     {"neighbours", r.neighbours},
                     {"products", t.products},
                     {"reductions", t.reductions},
                     {"halo_bytes_received", t.halo_bytes_received},
                     {"halo_bytes_sent", t.halo_bytes_sent},
                     {"seconds",
                      {{"local_spmv", t.local_spmv},
                       {"halo_wait", t.halo_wait},
                       {"halo_spmv", t.halo_spmv},
                       {"allreduce", t.allreduce},
                       {"precond", t.precond},
                       {"vector_ops", t.vector_ops},
                       {"halo_exchange", t.halo_exchange},
                       // The waits split (rank_ops.hpp): waiting for the last rank, the rest.
                       {"halo_imbalance", t.halo_imbalance},
                       {"halo_transfer", t.halo_wait - t.halo_imbalance},
                       {"allreduce_imbalance", t.allreduce_imbalance},
                       {"allreduce_transfer", t.allreduce - t.allreduce_imbalance}}}});
  }
  return {{"partition", to_string(d.partition)},
          {"cg_variant", to_string(d.variant)},
          {"loop", to_string(d.loop)},
          {"replace_every", d.replace_every},
          {"replacements", d.replacements},
          {"fallbacks", d.fallbacks},
          {"reductions_per_iteration", d.reductions_per_iteration(iterations)},
          {"halo_bytes_per_product", d.halo_bytes_per_product()},
          {"partition_s", d.partition_seconds},
          {"scatter_s", d.scatter_seconds},
          {"setup_s", d.setup_seconds},
          {"per_rank", ranks}};
}

}  // namespace

void print_summary(std::FILE* out, const RunSummary& run) {
  const SolveReport& s = run.solve;
  const CgResult& cg = s.cg;
  const Plan& plan = s.plan;
  std::fprintf(out, "matrix     %s (%s)\n%s", run.matrix_path.c_str(),
               describe_matrix_info(run.matrix_info).c_str(), format_stats(run.stats).c_str());
  std::fprintf(out, "rhs        %s\n",
               run.rhs_path.empty() ? "b = A * ones (exact x = ones)" : run.rhs_path.c_str());
  std::fprintf(out, "plan       CG, %s\n", plan.summary().c_str());
  for (const std::string& why : plan.reasons) std::fprintf(out, "  %s\n", why.c_str());
  if (!plan.inspection.empty())
    std::fprintf(out, "  auto: %s; %s\n", plan.inspection.c_str(),
                 describe_inspection_cost(s).c_str());
  std::fprintf(out, "backend    %s on %s\n", s.backend_name.c_str(),
               run.device_description.c_str());
  print_precond(out, s.precond);
  std::fprintf(out, "result     %s", to_string(cg.status).c_str());
  if (cg.status == CgStatus::converged) {
    std::fprintf(out, " in %ld iterations", cg.converged_at);
    if (cg.iterations > cg.converged_at)
      std::fprintf(out, " (%ld run: residual read every %d)", cg.iterations, plan.cg.check_every);
    if (s.probe_iterations > 0)
      std::fprintf(out, ", from auto's probe's x after its %ld", s.probe_iterations);
  } else if (cg.status != CgStatus::zero_rhs) {
    std::fprintf(out, " after %ld iterations", cg.iterations);
  }
  std::fprintf(out, "\n  ||r||/||b|| recursive  %.3e  (tolerance %.1e", cg.relative_residual(),
               plan.cg.tol);
  if (plan.cg.atol > 0) std::fprintf(out, ", atol %.1e", plan.cg.atol);
  std::fprintf(out, ")\n  ||b-Ax||/||b|| true    %.3e\n", s.true_relative_residual);
  if (run.error_vs_ones) std::fprintf(out, "  ||x-1||/||1||          %.3e\n", *run.error_vs_ones);

  const SolveTimes& t = s.times;
  std::fprintf(out,
               "times      read %.4f s, reorder %.4f s, build format %.4f s, preconditioner "
               "%.4f s, upload %.4f s, solve %.4f s, download %.4f s\n",
               run.read_seconds, t.reorder_seconds, t.convert_seconds, t.precond_seconds,
               t.upload_seconds, t.solve_seconds, t.download_seconds);
  print_spmv(out, s);
  if (run.distributed) print_distributed(out, *run.distributed, cg.iterations);
  if (run.validation) print_validation(out, *run.validation);
}

nlohmann::json plan_json(const Plan& plan) {
  nlohmann::json j = {{"device", to_string(plan.device)},
                      {"threads", plan.threads},
                      {"format", to_string(plan.format)},
                      {"kernel", plan.kernel},
                      {"hack_size", plan.hack_size},
                      {"rcm", plan.rcm},
                      {"sort_rows", plan.sort_rows},
                      {"precision", to_string(plan.precision)},
                      {"preconditioner", plan.precond.text()},
                      {"loop", to_string(plan.loop)},
                      {"tol", plan.cg.tol},
                      {"atol", plan.cg.atol},
                      {"max_iters", plan.cg.max_iters},
                      {"check_every", plan.cg.check_every},
                      {"reasons", plan.reasons},
                      {"summary", plan.summary()}};
  if (!plan.inspection.empty()) j["inspection"] = plan.inspection;
  return j;
}

nlohmann::json spmv_json(const SolveReport& s) {
  const SpmvStats& t = s.spmv;
  const auto measured = [&](double v) { return t.measured ? nlohmann::json(v) : nlohmann::json(); };
  return {{"measured", t.measured},
          {"what", t.measured ? nlohmann::json(t.what) : nlohmann::json()},
          {"sampled_every", t.measured ? nlohmann::json(t.every) : nlohmann::json()},
          {"samples", t.samples},
          {"median_s", measured(t.median)},
          {"mean_s", measured(t.mean)},
          {"min_s", measured(t.min)},
          {"total_s", measured(t.total)},
          {"gflops", measured(s.spmv_gflops())},
          {"share_of_solve",
           measured(s.times.solve_seconds > 0 ? t.total / s.times.solve_seconds : 0.0)}};
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
  j["plan"] = plan_json(s.plan);
  j["tuning"] = tuning_json(tuning());
  j["backend"] = {{"name", s.backend_name}, {"device", run.device_description}};
  nlohmann::json precond = {{"name", s.precond.name}, {"setup_s", s.precond.total_seconds()}};
  for (const auto& [phase, seconds] : s.precond.seconds) precond["phases_s"][phase] = seconds;
  for (const auto& [key, value] : s.precond.facts) precond["facts"][key] = value;
  for (const PrecondTable& t : s.precond.tables) {  // an array of objects, one per row
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& [label, numbers] : t.rows) {
      nlohmann::json row = {{t.columns.empty() ? "label" : t.columns[0], label}};
      for (std::size_t c = 0; c < numbers.size() && c + 1 < t.columns.size(); ++c)
        row[t.columns[c + 1]] = numbers[c];
      rows.push_back(row);
    }
    precond["tables"][t.name] = rows;
  }
  j["preconditioner"] = precond;
  j["result"] = {{"status", to_string(cg.status)},
                 {"converged", cg.ok()},
                 {"iterations", cg.iterations},
                 {"converged_at", cg.converged_at},
                 {"probe_iterations", s.probe_iterations},
                 {"relative_residual", cg.relative_residual()},
                 {"true_relative_residual", s.true_relative_residual}};
  if (run.error_vs_ones) j["result"]["error_vs_ones"] = *run.error_vs_ones;
  j["times"] = {{"read_s", run.read_seconds},
                {"inspect_s", t.inspect_seconds},
                {"probe_kept_s", t.probe_kept_seconds},
                {"thread_start_s", t.thread_start_seconds},
                {"reorder_s", t.reorder_seconds},
                {"build_format_s", t.convert_seconds},
                {"preconditioner_s", t.precond_seconds},
                {"upload_s", t.upload_seconds},
                {"solve_s", t.solve_seconds},
                {"download_s", t.download_seconds},
                {"per_iteration_s", cg.iterations > 0
                                        ? nlohmann::json(t.solve_seconds / double(cg.iterations))
                                        : nlohmann::json()}};
  j["spmv"] = spmv_json(s);
  j["ranks"] = run.distributed ? run.distributed->ranks : 1;
  if (run.distributed) j["distributed"] = distributed_json(*run.distributed, cg.iterations);
  if (run.validation) {
    const ValidationReport& v = *run.validation;
    j["validation"] = {
        {"passed", v.passed},
        {"verdict", v.verdict},
        {"backward_error", v.backward_error},
        {"allowed_backward_error", v.allowed_backward_error},
        {"reference", v.reference},
        {"reference_why", v.reference_why},
        {"reference_seconds", v.reference_seconds},
        {"reference_backward_error", v.reference_backward_error},
        {"estimated_direct_seconds", v.estimated_direct_seconds},
        {"forward_error_energy_norm", v.forward_error},
        {"forward_error_2norm", v.forward_error_2norm},
        {"condition_estimate",
         v.condition_estimate > 0 ? nlohmann::json(v.condition_estimate) : nlohmann::json()},
        {"forward_bound",
         v.forward_bound > 0 ? nlohmann::json(v.forward_bound) : nlohmann::json()}};
  }
  return j;
}

}  // namespace cgs
