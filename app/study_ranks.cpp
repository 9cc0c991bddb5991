// StudyRanks over the MPI module (study_ranks.hpp): netsolve_mpi.so from netsolve's own folder
// (the build's app/, or an install's bin/ with the module beside it).
#include "app/study_ranks.hpp"

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "base/input_error.hpp"
#include "base/shared_library.hpp"
#include "solver/distributed/distributed_solve.hpp"  // launcher_world_size

namespace cgs::net {
namespace {

class MpiModuleRanks final : public StudyRanks {
 public:
  explicit MpiModuleRanks(const std::string& module) : lib_({module}, "netsolve's MPI module") {
    start_ = lib_.function<Start>("netsolve_mpi_start");
    gather_ = lib_.function<Gather>("netsolve_mpi_gather");
    barrier_ = lib_.function<Void>("netsolve_mpi_barrier");
    abort_ = lib_.function<Abort>("netsolve_mpi_abort");
    end_ = lib_.function<Void>("netsolve_mpi_end");
    if (start_(&rank_, &size_, &local_size_) != 0) throw InputError("MPI did not start");
  }
  ~MpiModuleRanks() override { end_(); }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_size() const override { return local_size_; }
  std::vector<std::string> gather(const std::string& mine) const override {
    std::vector<int> lengths(static_cast<std::size_t>(size_));
    char* all = gather_(mine.data(), static_cast<int>(mine.size()), lengths.data());
    std::vector<std::string> out;
    if (rank_ != 0) return out;
    if (!all) throw std::runtime_error("MPI gather: more than 2 GB of rows");
    std::size_t at = 0;
    for (int length : lengths) out.emplace_back(all + at, std::size_t(length)), at += length;
    std::free(all);
    return out;
  }
  void barrier() const override { barrier_(); }
  [[noreturn]] void abort(int code) const override {
    abort_(code);
    std::exit(code);
  }

 private:
  using Start = int (*)(int*, int*, int*);
  using Gather = char* (*)(const char*, int, int*);
  using Void = void (*)();
  using Abort = void (*)(int);
  SharedLibrary lib_;
  Start start_;
  Gather gather_;
  Void barrier_, end_;
  Abort abort_;
  int rank_ = 0, size_ = 1, local_size_ = 1;
};

}  // namespace

std::unique_ptr<StudyRanks> open_study_ranks() {
  const int launched = dist::launcher_world_size();
  if (launched <= 1) return nullptr;
  const std::filesystem::path module =
      std::filesystem::read_symlink("/proc/self/exe").parent_path() / "netsolve_mpi.so";
  if (!std::filesystem::exists(module))
    throw InputError("this netsolve was built without MPI (no " + module.string() +
                     "), so each of the " + std::to_string(launched) +
                     " processes mpirun started would run the whole study; configure with an MPI");
  try {
    return std::make_unique<MpiModuleRanks>(module.string());
  } catch (const std::runtime_error& e) {
    throw InputError(e.what());
  }
}

}  // namespace cgs::net
