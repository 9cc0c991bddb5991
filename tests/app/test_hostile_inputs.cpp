// cgsolve and netsolve on hostile files, run as processes under a 200 MB memory limit
// (`ulimit -v`; in an AddressSanitizer build, whose shadow memory no such limit allows for,
// ASan's own cap on a single allocation): a clean error, exit 2, naming the file and the line,
// never an out-of-memory exit or an abort. The readers' own tests are in
// tests/formats/test_matrix_market_claims.cpp and tests/network/test_inp_fuzz_findings.cpp.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "memory_limit.hpp"
#include "run_command.hpp"

namespace fs = std::filesystem;

namespace {

const std::string kBin = CGSOLVE_BINARY_DIR "/app/";
const std::string kData = CGSOLVE_SOURCE_DIR "/data";

using cgs::testing::Run;
using cgs::testing::run_command;

// KiB of address space the tool occupies before it does anything: its file and the shared
// libraries it maps (a build with CUDA maps cuBLAS and cuSPARSE, several hundred MB; a 200 MB
// limit alone would stop the loader, exit 127).
long startup_kib(const std::string& tool) {
  long bytes = long(fs::file_size(kBin + tool));
  std::FILE* ldd = popen(("ldd " + kBin + tool + " 2>/dev/null").c_str(), "r");
  if (!ldd) return bytes / 1024;
  char line[4096];
  while (std::fgets(line, sizeof line, ldd)) {
    const std::string text = line;
    const auto arrow = text.find("=> /");
    if (arrow == std::string::npos) continue;
    const std::string path = text.substr(arrow + 3, text.find(" (", arrow) - arrow - 3);
    std::error_code error;
    const auto size = fs::file_size(path, error);
    if (!error) bytes += long(size);
  }
  pclose(ldd);
  return bytes / 1024;
}

// The tool with a limit of 200 MB on its memory beyond what its code occupies, stdout and
// stderr together.
Run run_limited(const std::string& tool, const std::string& arguments) {
#ifdef CGSOLVE_TEST_ASAN
  const std::string limit =
      "ASAN_OPTIONS=\"${ASAN_OPTIONS:+$ASAN_OPTIONS:}max_allocation_size_mb=200\" ";
#else
  const std::string limit = "ulimit -v " + std::to_string(200000 + startup_kib(tool)) + " && ";
#endif
  const std::string command = limit + kBin + tool + " " + arguments;
  return run_command(command);
}

struct Scratch {
  fs::path dir = fs::temp_directory_path() / ("cgsolve-hostile-" + std::to_string(::getpid()));
  Scratch() { fs::create_directories(dir); }
  ~Scratch() { fs::remove_all(dir); }
  std::string write(const std::string& name, const std::string& bytes) const {
    std::ofstream(dir / name, std::ios::binary) << bytes;
    return (dir / name).string();
  }
  std::string write_gzip(const std::string& name, const std::string& text) const {
    const std::string path = (dir / name).string();
    gzFile file = gzopen(path.c_str(), "wb");
    REQUIRE(file != nullptr);
    REQUIRE(gzwrite(file, text.data(), static_cast<unsigned>(text.size())) == int(text.size()));
    REQUIRE(gzclose(file) == Z_OK);
    return path;
  }
};

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

const std::string kCoordinate = "%%MatrixMarket matrix coordinate real general\n";
const std::string kArray = "%%MatrixMarket matrix array real general\n";

}  // namespace

TEST_CASE("cgsolve: 100-byte files that claim 2e9 rows or entries fail cleanly within 200 MB") {
  const Scratch s;
  const std::string huge_rows = kCoordinate + "2000000000 2000000000 3\n1 1 1\n2 2 1\n3 3 1\n";
  const std::string huge_entries =
      "%%MatrixMarket matrix coordinate real symmetric\n3 3 2000000000\n1 1 1\n";
  struct Case {
    std::string arguments, where, message;
  };
  const Case cases[] = {
      {"--matrix " + s.write("rows.mtx", huge_rows), "rows.mtx:2:", "declares 2000000000 rows"},
      {"--matrix " + s.write_gzip("rows.mtx.gz", huge_rows) + " --info",
       "rows.mtx.gz:2:", "declares 2000000000 rows"},
      {"--matrix " + s.write("entries.mtx", huge_entries), "entries.mtx:3:", "too few entries"},
      {"--matrix " + s.write("array.mtx", kArray + "2000000000 0\n"),
       "array.mtx:2:", "declares 2000000000 rows"},
      {"--matrix " + kData + "/matrices/LFAT5.mtx --rhs " +
           s.write("b.mtx", kArray + "2000000000 1\n1\n2\n"),
       "b.mtx:2:", "the vector has 2000000000 entries but the matrix has 14 rows"},
      {"--matrix " + kData + "/matrices/LFAT5.mtx --rhs " +
           s.write("b_coordinate.mtx", kCoordinate + "2000000000 1 1\n1 1 1\n"),
       "b_coordinate.mtx:2:", "the vector has 2000000000 entries but the matrix has 14 rows"},
      {"--matrix " + kData + "/matrices/LFAT5.mtx --x0 " +
           s.write_gzip("x0.mtx.gz", kCoordinate + "1 2000000000 1\n1 1 1\n"),
       "x0.mtx.gz:2:", "the vector has 2000000000 entries but the matrix has 14 rows"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.arguments);
    const Run r = run_limited("cgsolve", c.arguments);
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.output, c.where));
    CHECK(contains(r.output, c.message));
    CHECK_FALSE(contains(r.output, "out of memory"));
  }
}

TEST_CASE("cgsolve: the limit leaves room for a real solve") {
  const Run r = run_limited("cgsolve", "--matrix " + kData + "/systems/Net3_step1.mtx.gz --rhs " +
                                           kData + "/systems/Net3_step1_b.mtx.gz --quiet");
  INFO(r.output);
  CHECK(r.exit_code == 0);
}

TEST_CASE("netsolve: hostile .inp files fail cleanly within 200 MB, naming file and line") {
  const Scratch s;
  const std::string net = "[RESERVOIRS]\nR 100\n[JUNCTIONS]\nJ 10 5\n[PIPES]\nP R J 1000 12 100\n";
  struct Case {
    std::string name, text, where, message;
  };
  const Case cases[] = {
      {"trials.inp", net + "[OPTIONS]\nTRIALS 9e18\n",
       "trials.inp:8:", "TRIALS must be between 1 and 100000000"},
      {"time.inp", net + "[TIMES]\nDURATION 1e300\n", "time.inp:8:", "invalid option value"},
      {"missing_node.inp", net + "[PIPES]\nP2 J X 10 10 100\n",
       "missing_node.inp:8:", "unknown node 'X'"},
      {"negative_length.inp", net + "[PIPES]\nP2 J R -10 10 100\n",
       "negative_length.inp:8:", "must be positive"},
      {"binary.inp", std::string("[JUNCTIONS]\n\x01\xff\x00\x7f 1\n", 18) + "\xfe\xfe",
       "binary.inp", ""},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const Run r = run_limited("netsolve", "--network " + s.write(c.name, c.text));
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.output, c.where));
    CHECK(contains(r.output, c.message));
  }
}
