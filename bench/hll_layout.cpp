// hll_layout: what HLL stores for a matrix under each SELL-C-sigma window (issue 28), computed
// exactly from the row lengths, no timing: per sigma the hacks' slots, slots per entry held in
// the hacks, the HYB tail chosen on that order (formats/stats.hpp), the cost model's figure, and
// the window choose_hll_sigma takes. The numbers of BENCHMARKS.md section 12e.
//
//   hll_layout MATRIX... [--hack-size 32]
//
// MATRIX: a Matrix Market file or a generator spec (gen:powerlaw:2000000).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "formats/generators.hpp"
#include "formats/stats.hpp"

namespace {

void print_layouts(const std::string& spec, cgs::index_t hack_size) {
  const cgs::CsrMatrix<double> A = cgs::load_matrix(spec);
  std::vector<cgs::index_t> lengths(A.rows);
  for (cgs::index_t r = 0; r < A.rows; ++r) lengths[r] = A.row_length(r);
  const cgs::HllOrder chosen = cgs::choose_hll_sigma(A, hack_size);
  std::printf("%s: %d rows, %d entries, hack size %d\n", spec.c_str(), int(A.rows), int(A.nnz()),
              int(hack_size));
  std::printf("%10s %12s %12s %10s %12s %8s %12s %14s\n", "sigma", "slots(no tl)", "tail K",
              "tail rows", "tail nnz", "tail %", "hack slots", "slots/in-hack");
  for (const cgs::HllSigmaCandidate& c : cgs::hll_sigma_candidates(lengths, hack_size)) {
    const cgs::HllTail& t = c.tail;
    const long long in_hacks = (long long)A.nnz() - t.nnz;
    std::printf("%10s %12lld %12s %10d %12lld %7.1f%% %12lld %14.3f%s\n",
                c.sigma == 0 ? "none" : std::to_string(c.sigma).c_str(), t.slots_without,
                t.any() ? std::to_string(t.from).c_str() : "-", int(t.rows), t.nnz,
                A.nnz() > 0 ? 100.0 * double(t.nnz) / double(A.nnz()) : 0.0, t.slots,
                in_hacks > 0 ? double(t.slots) / double(in_hacks) : 0.0,
                c.sigma == chosen.sigma ? "  <- chosen" : "");
  }
  std::printf(
      "cost model (slots + %.0f per tail entry + %.0f per tail row): own order %.0f, "
      "chosen %.0f\n\n",
      cgs::kHllTailEntryCost, cgs::kHllTailRowCost, chosen.unsorted.cost(), chosen.tail.cost());
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"HLL layouts under each SELL-C-sigma window (exact, from the row lengths)"};
  std::vector<std::string> matrices;
  cgs::index_t hack_size = 32;
  app.add_option("matrices", matrices, "Matrix Market files or generator specs")->required();
  app.add_option("--hack-size", hack_size, "rows per hack")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  try {
    for (const std::string& spec : matrices) print_layouts(spec, hack_size);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hll_layout: %s\n", e.what());
    return 1;
  }
  return 0;
}
