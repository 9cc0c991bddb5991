// mmread_bench: how fast our Matrix Market reader is, next to Eigen's loadMarket.
//
//   mmread_bench [file] [--repeats N] [--grid G] [--full-precision]
//
// Reads one file N times with each reader and prints the median throughput in MB/s of the
// file as stored on disk. Without a file it writes a 2D Poisson matrix (G x G grid, general
// storage, since Eigen 3.4's loadMarket does not expand symmetric files) into /tmp.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <string>
#include <unsupported/Eigen/SparseExtra>
#include <vector>

#include "formats/matrix_market.hpp"

namespace {

// 5-point Laplacian on a grid x grid mesh. With full precision every value is perturbed so
// that it prints with ~17 digits, like the values of real SuiteSparse files.
cgs::CsrMatrix<double> poisson_2d(cgs::index_t grid, bool full_precision) {
  cgs::CsrMatrix<double> A;
  A.rows = A.cols = grid * grid;
  A.row_ptr.assign(1, 0);
  auto value = [&](double base, cgs::index_t k) {
    return full_precision ? base * (1.0 + std::sqrt(2.0 + k % 1000) * 1e-3) : base;
  };
  for (cgs::index_t i = 0; i < grid; ++i) {
    for (cgs::index_t j = 0; j < grid; ++j) {
      const cgs::index_t row = i * grid + j;
      auto add = [&](cgs::index_t col, double base) {
        A.col_idx.push_back(col);
        A.values.push_back(value(base, static_cast<cgs::index_t>(A.values.size())));
      };
      if (i > 0) add(row - grid, -1.0);
      if (j > 0) add(row - 1, -1.0);
      add(row, 4.0);
      if (j + 1 < grid) add(row + 1, -1.0);
      if (i + 1 < grid) add(row + grid, -1.0);
      A.row_ptr.push_back(static_cast<cgs::index_t>(A.values.size()));
    }
  }
  return A;
}

double process_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// Median wall-clock and CPU seconds of one read. CPU time is shown too because this runs
// on shared machines, where the wall clock also counts waiting for other people's work.
struct Timing {
  double wall = 0;
  double cpu = 0;
};

template <typename Read>
Timing median_timing(int repeats, Read&& read) {
  std::vector<double> wall, cpu;
  for (int r = 0; r < repeats; ++r) {
    auto start = std::chrono::steady_clock::now();
    double cpu_start = process_cpu_seconds();
    read();
    cpu.push_back(process_cpu_seconds() - cpu_start);
    wall.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return {median(wall), median(cpu)};
}

void print_throughput(const char* reader, double megabytes, int repeats, Timing timing) {
  std::printf("%-28s %7.1f MB/s wall, %7.1f MB/s cpu (median of %d, %.3f s wall)\n", reader,
              megabytes / timing.wall, megabytes / timing.cpu, repeats, timing.wall);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Matrix Market read throughput: cgsolve's reader vs Eigen::loadMarket"};
  std::string path;
  int repeats = 5;
  cgs::index_t grid = 1000;
  bool full_precision = false;
  app.add_option("file", path, "Matrix Market file (default: a generated 2D Poisson matrix)");
  app.add_option("-n,--repeats", repeats, "reads per reader")->check(CLI::PositiveNumber);
  app.add_option("--grid", grid, "grid side of the generated Poisson matrix")
      ->check(CLI::PositiveNumber);
  app.add_flag("--full-precision", full_precision, "generated values need 17 digits");
  CLI11_PARSE(app, argc, argv);

  try {
    if (path.empty()) {
      path = "/tmp/cgsolve_mmread_poisson_" + std::to_string(grid) +
             (full_precision ? "_full" : "") + ".mtx";
      cgs::write_matrix_market(path, poisson_2d(grid, full_precision), false, "mmread_bench");
    }
    const double megabytes = static_cast<double>(std::filesystem::file_size(path)) / 1e6;
    std::printf("file: %s (%.1f MB)\n", path.c_str(), megabytes);

    cgs::index_t nnz = cgs::read_matrix_market(path).nnz();  // also warms the page cache
    const Timing ours = median_timing(repeats, [&] { cgs::read_matrix_market(path); });

    Eigen::SparseMatrix<double, Eigen::RowMajor, int> eigen_matrix;
    const Timing eigen = median_timing(repeats, [&] { Eigen::loadMarket(eigen_matrix, path); });

    std::printf("nnz: ours %d, Eigen %ld\n", nnz, static_cast<long>(eigen_matrix.nonZeros()));
    print_throughput("cgsolve read_matrix_market", megabytes, repeats, ours);
    print_throughput("Eigen::loadMarket", megabytes, repeats, eigen);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "mmread_bench: %s\n", error.what());
    return 2;
  }
  return 0;
}
