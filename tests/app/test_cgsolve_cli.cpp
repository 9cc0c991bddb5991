// cgsolve run as a process on the files in data/: exit codes, output files, the report.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "formats/matrix_market.hpp"
#include "run_command.hpp"
#include "solver/precond/amg_options.hpp"
#include "solver/precond/preconditioner.hpp"
#include "spmv/cuda/cuda_backends.hpp"

namespace fs = std::filesystem;

namespace {

const std::string kCgsolve = CGSOLVE_BINARY_DIR "/app/cgsolve";
const std::string kData = CGSOLVE_SOURCE_DIR "/data";

using cgs::testing::Run;
using cgs::testing::run_command;

// environment: "NAME=value " assignments for the shell, before the program.
Run cgsolve(const std::string& arguments, const std::string& environment = "") {
  const std::string command = environment + kCgsolve + " " + arguments;
  return run_command(command);
}

fs::path scratch_dir() {
  fs::path dir = fs::temp_directory_path() / ("cgsolve-app-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

void write_text(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("solves a SuiteSparse matrix in every format, sorted or not, and validates") {
  for (std::string format : {"coo", "csr", "ell", "hll"})
    for (std::string sort : {"", " --sort-rows"}) {
      CAPTURE(format);
      CAPTURE(sort);
      const Run r = cgsolve("--matrix " + kData + "/matrices/gr_900_900_crg.mtx --format " +
                            format + sort + " --tol 1e-12 --validate");
      CHECK(r.exit_code == 0);
      CHECK(contains(r.output, "converged in"));
      CHECK(contains(r.output, "validate   PASS"));
    }
}

TEST_CASE("the README's first command solves and validates") {
  // The same arguments as the README: a regression here breaks a new user's first run.
  const Run r = cgsolve("--matrix " + kData + "/systems/Exnet_EXN_step3.mtx.gz --rhs " + kData +
                        "/systems/Exnet_EXN_step3_b.mtx.gz --format hll --sort-rows --precond "
                        "jacobi --tol 1e-12 --validate");
  CHECK(r.exit_code == 0);
  CHECK(contains(r.output, "validate   PASS"));
}

TEST_CASE("the water-network system from EPANET solves with Jacobi on the serial device") {
  const Run r = cgsolve("--matrix " + kData + "/systems/Exnet_EXN_step3.mtx.gz --rhs " + kData +
                        "/systems/Exnet_EXN_step3_b.mtx.gz --precond jacobi --tol 1e-12 "
                        "--device serial --format hll --sort-rows");
  CHECK(r.exit_code == 0);
  CHECK(contains(r.output, "hll/serial"));
  CHECK(contains(r.output, "rows sorted by length"));
}

TEST_CASE("the written solution reads back equal to the solution, in the original order") {
  const fs::path dir = scratch_dir();
  const std::string out = (dir / "x.mtx").string(), report = (dir / "r.json").string(),
                    history = (dir / "h.csv").string();
  const Run r = cgsolve("--matrix " + kData +
                        "/matrices/nos6.mtx --format ell --sort-rows --cpu-loop generic "
                        "--tol 1e-10 --quiet --output " +
                        out + " --report " + report + " --history " + history);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.empty());  // --quiet
  const std::vector<double> x = cgs::read_vector_market(out);
  REQUIRE(x.size() == 675);
  // b = A * ones: the answer is all ones, to the conditioning of nos6 (kappa ~ 8e6).
  for (double v : x) CHECK(v == doctest::Approx(1.0).epsilon(1e-2));

  std::ifstream in(report);
  const nlohmann::json j = nlohmann::json::parse(in);
  CHECK(j["result"]["converged"] == true);
  CHECK(j["matrix"]["rows"] == 675);
  CHECK(j["backend"]["name"] == "ell/omp");
  CHECK(j["plan"]["format"] == "ell");
  CHECK(j["plan"]["sort_rows"] == true);
  CHECK(j["plan"]["loop"] == "generic");
  const long iterations = j["result"]["iterations"];
  CHECK(iterations > 0);
  CHECK(j["result"]["true_relative_residual"].get<double>() < 1e-9);
  CHECK(j["spmv"]["measured"] == true);
  CHECK(j["spmv"]["median_s"].get<double>() > 0);
  CHECK(j["spmv"]["gflops"].get<double>() > 0);

  std::ifstream h(history);
  std::string line;
  long lines = 0;
  while (std::getline(h, line)) ++lines;
  CHECK(lines == iterations + 2);  // header + iterations 0..k
  fs::remove_all(dir);
}

TEST_CASE("generated matrices stand wherever a matrix file does") {
  Run r = cgsolve("--matrix gen:poisson2d:30 --format hll --sort-rows --validate --tol 1e-10");
  CHECK(r.exit_code == 0);
  CHECK(contains(r.output, "900 x 900"));
  CHECK(contains(r.output, "validate   PASS"));
  r = cgsolve("--matrix gen:waternet:2000:7 --precond jacobi --info");
  CHECK(r.exit_code == 0);
  CHECK(contains(r.output, "2000 x 2000"));
  r = cgsolve("--matrix gen:poisson9d:3");
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "gen:poisson9d:3"));
}

TEST_CASE(
    "--format hll says where it sorts rows in windows (SELL-C-sigma); a bad window is input") {
  // Power-law rows: sorted in windows chosen from the row lengths, named in the plan, validated.
  Run r = cgsolve("--matrix gen:powerlaw:5000 --format hll --validate --tol 1e-10");
  CHECK(r.exit_code == 0);
  CHECK(contains(r.output, "rows sorted by length inside windows of"));
  CHECK(contains(r.output, "validate   PASS"));
  r = cgsolve("--matrix gen:powerlaw:5000 --format hll --hll-sigma 0 --validate --tol 1e-10");
  CHECK(r.exit_code == 0);
  CHECK(contains(r.output, "rows in their own order (--hll-sigma 0)"));
  // Regular rows keep their order and say nothing of sorting.
  r = cgsolve("--matrix gen:poisson2d:30 --format hll --tol 1e-10");
  CHECK(r.exit_code == 0);
  CHECK_FALSE(contains(r.output, "windows of"));
  r = cgsolve("--matrix gen:poisson2d:30 --format hll --hll-sigma 100");
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "HLL sort window 100 must be a multiple of the hack size 32"));
}

TEST_CASE("--info prints statistics without solving") {
  const Run r = cgsolve("--matrix " + kData + "/matrices/494_bus.mtx --info");
  CHECK(r.exit_code == 0);
  CHECK(contains(r.output, "494 x 494"));
  CHECK(contains(r.output, "1666"));
  CHECK_FALSE(contains(r.output, "result"));
}

TEST_CASE("exit codes: bad input 2, not converged 1, validation failed 3, usage 2") {
  const fs::path dir = scratch_dir();
  write_text(dir / "bad.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 x 1.0\n");
  write_text(dir / "nonsym.mtx",
             "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 2\n1 2 1\n2 2 2\n");
  write_text(dir / "indefinite.mtx",
             "%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n1 1 1\n2 2 -1\n");
  write_text(dir / "b3.mtx", "%%MatrixMarket matrix array real general\n3 1\n1\n2\n3\n");

  Run r = cgsolve("--matrix " + (dir / "missing.mtx").string());
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "missing.mtx"));

  r = cgsolve("--matrix " + (dir / "bad.mtx").string());
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "bad.mtx:3"));

  r = cgsolve("--matrix " + (dir / "nonsym.mtx").string());
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "not symmetric"));

  r = cgsolve("--matrix " + (dir / "indefinite.mtx").string());
  CHECK(r.exit_code == 1);
  CHECK(contains(r.output, "not positive definite"));

  r = cgsolve("--matrix " + kData + "/matrices/494_bus.mtx --rhs " + (dir / "b3.mtx").string());
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "3 entries but the matrix has 494 rows"));

  const std::string out = (dir / "never.mtx").string();
  r = cgsolve("--matrix " + kData + "/matrices/bcsstk13.mtx --max-iters 10 --output " + out);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.output, "not converged"));

  // A wrong answer (x perturbed after the solve, by the test hook) fails validation with 3.
  r = cgsolve("--matrix " + kData + "/matrices/nos6.mtx --validate",
              "CGSOLVE_TEST_PERTURB_X=1e-4 ");
  CHECK(r.exit_code == 3);
  CHECK(contains(r.output, "validate   FAIL"));
  CHECK(contains(r.output, "backward error"));

  r = cgsolve("--matrix " + kData + "/matrices/494_bus.mtx --format dia");
  CHECK(r.exit_code == 2);
  r = cgsolve("--no-such-option");
  CHECK(r.exit_code == 2);
  r = cgsolve("--matrix " + kData + "/matrices/494_bus.mtx --kernel csr-vector");
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "--device gpu"));
  CHECK(cgsolve("--help").exit_code == 0);
  CHECK(contains(cgsolve("--version").output, "cgsolve"));
  fs::remove_all(dir);
}

TEST_CASE("a failed write leaves no partial file") {
  const fs::path dir = scratch_dir();
  const Run r = cgsolve("--matrix " + kData + "/matrices/494_bus.mtx --quiet --output " +
                        (dir / "no-such-dir" / "x.mtx").string());
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "x.mtx"));
  CHECK_FALSE(fs::exists(dir / "no-such-dir"));
  // An unconverged run with --output writes nothing partial either: it writes the last iterate
  // whole (the user asked for it) and exits 1.
  fs::remove_all(dir);
}

TEST_CASE("--device gpu without a GPU exits 4 with a clear message") {
  std::string why;
  if (cgs::cuda_device_available(&why)) {
    MESSAGE("skipped: a GPU is present (covered by tests/gpu)");
    return;
  }
  const Run r = cgsolve("--matrix " + kData + "/matrices/494_bus.mtx --device gpu");
  CHECK(r.exit_code == 4);
  CHECK(contains(r.output, "GPU not available"));
}

TEST_CASE("--format auto picks a format by timing, says what and why, and solves") {
  const fs::path dir = scratch_dir();
  const std::string json = (dir / "auto.json").string();
  Run r = cgsolve("--matrix " + kData + "/matrices/494_bus.mtx --format auto --report " + json);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.output, "  auto: "));
  CHECK(contains(r.output, "per CG iteration"));
  CHECK(contains(r.output, "inspector "));
  std::ifstream in(json);
  const nlohmann::json report = nlohmann::json::parse(in);
  CHECK(report["times"]["inspect_s"].get<double>() > 0);
  const std::string inspection = report["plan"]["inspection"];
  CHECK(contains(inspection, report["plan"]["format"].get<std::string>()));

  // Without auto there is no inspector line; a kernel name with --format auto is refused.
  r = cgsolve("--matrix " + kData + "/matrices/494_bus.mtx --format csr");
  CHECK(r.exit_code == 0);
  CHECK_FALSE(contains(r.output, "  auto: "));
  r = cgsolve("--matrix " + kData +
              "/matrices/494_bus.mtx --format auto --device gpu "
              "--kernel scalar");
  CHECK(r.exit_code != 0);
  fs::remove_all(dir);
}

TEST_CASE("outputs never destroy inputs: an output naming an input file is refused first") {
  const fs::path dir = scratch_dir();
  const fs::path matrix = dir / "A.mtx", rhs = dir / "b.mtx";
  fs::copy_file(kData + "/matrices/494_bus.mtx", matrix);
  write_text(
      rhs, "%%MatrixMarket matrix array real general\n494 1\n" + [] {
        std::string ones;
        for (int i = 0; i < 494; ++i) ones += "1\n";
        return ones;
      }());
  fs::create_symlink(matrix, dir / "link.mtx");
  const auto size_before = fs::file_size(matrix);
  const std::string base = "--matrix " + matrix.string() + " --rhs " + rhs.string();
  for (const std::string& output :
       {"--output " + matrix.string(), "--report " + (dir / "link.mtx").string(),
        "--history " + (dir / "." / "b.mtx").string(), "--output " + rhs.string()}) {
    CAPTURE(output);
    const Run r = cgsolve(base + " " + output);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.output, "refusing to overwrite"));
    CHECK_FALSE(contains(r.output, "result"));  // refused before anything ran
  }
  CHECK(fs::file_size(matrix) == size_before);
  CHECK(cgs::read_matrix_market(matrix.string()).rows == 494);
  // A different file is fine.
  CHECK(cgsolve(base + " --quiet --output " + (dir / "x.mtx").string()).exit_code == 0);
  fs::remove_all(dir);
}

TEST_CASE("every loop reports the SpMV time per iteration (not measured is null, never 0)") {
  const fs::path dir = scratch_dir();
  const std::string json = (dir / "r.json").string();
  for (std::string loop : {"fused-serial", "fused-team", "generic"}) {
    CAPTURE(loop);
    const Run r = cgsolve("--matrix " + kData + "/matrices/gr_900_900_crg.mtx --threads 2 " +
                          "--cpu-loop " + loop + " --report " + json);
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.output, "per iteration: median"));
    std::ifstream in(json);
    const nlohmann::json j = nlohmann::json::parse(in);
    CHECK(j["spmv"]["measured"] == true);
    CHECK(j["spmv"]["median_s"].get<double>() > 0);
    CHECK(j["spmv"]["total_s"].get<double>() <= j["times"]["solve_s"].get<double>() * 1.01);
  }
  const Run off = cgsolve("--matrix " + kData + "/matrices/gr_900_900_crg.mtx --no-spmv-timing " +
                          "--report " + json);
  REQUIRE(off.exit_code == 0);
  CHECK(contains(off.output, "not measured"));
  std::ifstream in(json);
  const nlohmann::json j = nlohmann::json::parse(in);
  CHECK(j["spmv"]["measured"] == false);
  CHECK(j["spmv"]["median_s"].is_null());
  CHECK(j["spmv"]["gflops"].is_null());
  fs::remove_all(dir);
}

TEST_CASE("--validate with default flags passes on every converged solve of the shipped matrices") {
  // Every matrix of data/ and, where present, ../shared/data/matrices: those that are not SPD
  // are refused (2) and those CG does not solve in 10 n iterations stop (1); every one that
  // converges must pass validation (3 would be a verdict users cannot trust).
  std::vector<fs::path> files;
  for (const std::string& dir : {kData + "/matrices", kData + "/systems",
                                 std::string(CGSOLVE_SOURCE_DIR) + "/../shared/data/matrices"}) {
    if (!fs::is_directory(dir)) continue;
    for (const auto& entry : fs::directory_iterator(dir)) {
      const std::string name = entry.path().filename().string();
      if (name.find(".mtx") == std::string::npos || name.find("_b.mtx") != std::string::npos ||
          name.find("_x.mtx") != std::string::npos)
        continue;
      files.push_back(entry.path());
    }
  }
  REQUIRE(files.size() >= 8);
  int converged = 0;
  for (const fs::path& file : files) {
    CAPTURE(file.string());
    const Run r = cgsolve("--matrix " + file.string() + " --validate");
    CHECK(r.exit_code != 3);
    if (r.exit_code == 0) {
      ++converged;
      CHECK(contains(r.output, "validate   PASS"));
    }
  }
  CHECK(converged >= 6);
}

TEST_CASE("--help lists the registry's preconditioners; --help-precond prints one's options") {
  const Run help = cgsolve("--help");
  CHECK(help.exit_code == 0);
  for (const cgs::PrecondEntry& e : cgs::preconditioners()) {
    CAPTURE(std::string(e.name));
    CHECK(contains(help.output, std::string(e.name) + (*e.argument ? "[:" : ": ")));
    CHECK(contains(help.output, e.what));
  }
  CHECK(contains(help.output, "--help-precond"));
  const Run amg = cgsolve("--help-precond amg");
  CHECK(amg.exit_code == 0);
  CHECK(contains(amg.output, cgs::precond::amg_options_help()));
  const Run fsai = cgsolve("--help-precond fsai");
  CHECK(fsai.exit_code == 0);
  CHECK(contains(fsai.output, "fsai[:k]: G on the pattern of tril(A^k)"));
  const Run unknown = cgsolve("--help-precond gs");
  CHECK(unknown.exit_code == 2);
  CHECK(contains(unknown.output, "unknown preconditioner 'gs'"));
}

TEST_CASE("--precond amg reports its levels and set-up phases in the summary and the JSON") {
  const fs::path dir = scratch_dir();
  const std::string json = (dir / "amg.json").string();
  Run r = cgsolve("--matrix gen:poisson2d:60 --precond amg:coarse=50 --report " + json);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.output, "operator complexity"));
  CHECK(contains(r.output, "galerkin R A P"));
  std::ifstream in(json);
  const nlohmann::json report = nlohmann::json::parse(in);
  const nlohmann::json& levels = report["preconditioner"]["tables"]["levels"];
  REQUIRE(levels.size() >= 2);
  CHECK(levels[0]["rows"].get<double>() == 3600);
  CHECK(levels[0]["nonzeros"].get<double>() == 3600 * 5 - 4 * 60);
  CHECK(levels[1]["rows"].get<double>() < 3600 / 3);
  CHECK(report["preconditioner"]["tables"]["phases"].size() >= 6);
  CHECK(std::stod(report["preconditioner"]["facts"]["operator complexity"].get<std::string>()) <
        1.6);
  r = cgsolve("--matrix gen:poisson2d:10 --precond amg:smoother=gs");
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "smoother must be cheb or jacobi"));
}

TEST_CASE("the report holds every tuning field; options and variables that change one say so") {
  const fs::path dir = scratch_dir();
  const std::string json = (dir / "tuning.json").string();
  const std::string base = "--matrix " + kData + "/matrices/nos6.mtx --report " + json;
  auto tuning_of = [&] {
    std::ifstream in(json);
    return nlohmann::json::parse(in)["tuning"];
  };
  Run r = cgsolve(base);
  REQUIRE(r.exit_code == 0);
  nlohmann::json t = tuning_of();
  CHECK(t.size() == 17);
  CHECK(t["device_pool"] == true);
  CHECK(t["gpu_sweep_span"] == 4);
  CHECK(t["huge_pages"] == true);
  CHECK(t["device_tally"] == 0);
  CHECK(t["gpu_transport"] == "auto");
  CHECK(t["cluster_replacement_slack"] == 10.0);
  CHECK(t["ic0_device_rows"] == -1);
  CHECK(!contains(r.output, "tuning:"));  // all defaults: nothing to say

  r = cgsolve(base + " --huge-pages off --device-pool off --device-tally 1", "");
  REQUIRE(r.exit_code == 0);
  t = tuning_of();
  CHECK(t["huge_pages"] == false);
  CHECK(t["device_pool"] == false);
  CHECK(t["device_tally"] == 1);
  CHECK(contains(r.output,
                 "tuning: huge_pages = off (default on; --huge-pages or "
                 "CGSOLVE_HUGE_PAGES)"));
  CHECK(contains(r.output, "tuning: device_pool = off"));

  // A variable: in the report, the plan's reasons and the summary; an option wins over it.
  r = cgsolve(base + " --huge-pages on", "CGSOLVE_CLUSTER_PHASES=1 CGSOLVE_HUGE_PAGES=0 ");
  REQUIRE(r.exit_code == 0);
  t = tuning_of();
  CHECK(t["cluster_phases"] == true);
  CHECK(t["huge_pages"] == true);
  CHECK(contains(r.output, "tuning: cluster_phases = on (default off; CGSOLVE_CLUSTER_PHASES)"));
  std::ifstream in(json);
  const nlohmann::json reasons = nlohmann::json::parse(in)["plan"]["reasons"];
  bool listed = false;
  for (const auto& why : reasons) listed = listed || contains(why, "tuning: cluster_phases = on");
  CHECK(listed);

  CHECK(cgsolve(base + " --device-pool maybe").exit_code == 2);
  CHECK(cgsolve(base + " --gpu-transport carrier-pigeon").exit_code == 2);
  fs::remove_all(dir);
}
