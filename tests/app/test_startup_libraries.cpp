// What a CPU run loads (issue 29 item 4): the optional libraries -- CHOLMOD with LAPACK/BLAS/
// gfortran/METIS, cuSPARSE with nvJitLink, cuBLAS, the shared CUDA runtime -- cost a small run
// several times its own work when they are loaded at start-up. They are opened only where a run
// uses them (base/shared_library.hpp). The dynamic loader's own account (LD_DEBUG=files) says
// which files a process opened; the checks run on both kinds of build, the CUDA ones matter in a
// CUDA build.
#include <doctest/doctest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "run_command.hpp"

#if CGSOLVE_HAVE_CUDA
#include "spmv/cuda/cusparse_api.hpp"
#endif

namespace {

const std::string kBin = CGSOLVE_BINARY_DIR "/app/";
const std::string kData = CGSOLVE_SOURCE_DIR "/data";

// The file names the loader opened for `command` (its "file=NAME [..];" lines), with its exit code.
struct Loaded {
  int exit_code;
  std::set<std::string> files;
  bool any_containing(const std::string& part) const {
    for (const std::string& f : files)
      if (f.find(part) != std::string::npos) return true;
    return false;
  }
};

Loaded loaded_by(const std::string& command) {
  const cgs::testing::Run r = cgs::testing::run_command("LD_DEBUG=files " + command);
  Loaded loaded{r.exit_code, {}};
  std::istringstream lines(r.output);
  for (std::string line; std::getline(lines, line);) {
    const auto at = line.find("file=");
    if (at == std::string::npos) continue;
    const auto end = line.find_first_of(" \t[;", at);
    loaded.files.insert(line.substr(at + 5, end - at - 5));
  }
  return loaded;
}

// CHOLMOD and what it pulls in; CUDA's libraries and NCCL. cgsolve links MPI (and METIS) for
// its distributed launcher (solver/distributed), netsolve nothing of them.
const char* const kOptional[] = {"libcholmod",  "liblapack",  "libgfortran",
                                 "libcusparse", "libcublas",  "libnvJitLink",
                                 "libcudart",   "libcuda.so", "libnccl"};
const char* const kDistributed[] = {"libmpi", "libmetis"};

}  // namespace

TEST_CASE("a CPU run of netsolve loads no optional library") {
  const Loaded run =
      loaded_by(kBin + "netsolve --network " + kData + "/networks/Net1.inp --duration 0 --quiet");
  REQUIRE(run.exit_code == 0);
  REQUIRE(run.any_containing("libc.so"));  // the loader's account was read
  for (const std::string library : kOptional) {
    CAPTURE(library);
    CHECK_FALSE(run.any_containing(library));
  }
  for (const std::string library : kDistributed) {
    CAPTURE(library);
    CHECK_FALSE(run.any_containing(library));
  }
}

TEST_CASE("a CPU run of cgsolve loads no optional library") {
  const Loaded run = loaded_by(kBin + "cgsolve --matrix gen:poisson2d:20 --device cpu");
  REQUIRE(run.exit_code == 0);
  REQUIRE(run.any_containing("libc.so"));
  for (const std::string library : kOptional) {
    CAPTURE(library);
    CHECK_FALSE(run.any_containing(library));
  }
}

#if CGSOLVE_HAVE_CHOLMOD
TEST_CASE("netsolve --direct-backend cholmod loads CHOLMOD when asked, and solves with it") {
  // The other side of the tests above: the loader's account does show a library opened late.
  const Loaded run = loaded_by(kBin + "netsolve --network " + kData +
                               "/networks/Net1.inp --duration 0 --quiet --direct-backend cholmod");
  REQUIRE(run.exit_code == 0);
  CHECK(run.any_containing("libcholmod"));
}
#endif

#if CGSOLVE_HAVE_CUDA
bool mapped_in_this_process(const std::string& part) {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);)
    if (line.find(part) != std::string::npos) return true;
  return false;
}

TEST_CASE("cuSPARSE is mapped only once the cuSPARSE backend asks for it") {
  // This test program links the GPU code as netsolve does: nothing of cuSPARSE at start-up.
  CHECK_FALSE(mapped_in_this_process("libcusparse"));
  CHECK_FALSE(mapped_in_this_process("libcublas"));
  std::string why;
  try {
    cgs::cuda::cusparse_api();
  } catch (const std::exception& e) {
    why = e.what();  // a CUDA build on a machine without cuSPARSE: the error names it
  }
  if (why.empty())
    CHECK(mapped_in_this_process("libcusparse"));
  else
    CHECK(why.find("cuSPARSE") != std::string::npos);
}
#endif
