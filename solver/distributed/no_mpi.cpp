// Without MPI: the single-process program as before; asking for a distributed solve is an error.
#include "formats/types.hpp"
#include "solver/distributed/distributed_solve.hpp"

namespace cgs::dist {

namespace {
[[noreturn]] void no_mpi() {
  throw InputError(
      "this cgsolve was built without MPI, so it cannot run distributed (install an MPI, e.g. "
      "Debian's libopenmpi-dev, and configure again with -DCGSOLVE_WITH_MPI=ON)");
}
}  // namespace

bool mpi_built() { return false; }
MpiSession::MpiSession(int*, char***) { no_mpi(); }
MpiSession::~MpiSession() = default;
std::string MpiSession::share_error(const std::string& error) const { return error; }
void MpiSession::abort(int code) const { std::exit(code); }
DistributedOutcome solve_distributed(const MpiSession&, const CsrMatrix<double>*,
                                     const std::vector<double>*, const std::vector<double>*,
                                     const DistributedRequest&) {
  no_mpi();
}
bool generated_per_rank(const std::string&) { return false; }
DistributedOutcome solve_distributed_generated(const MpiSession&, const std::string&,
                                               const DistributedRequest&, MatrixStats*) {
  no_mpi();
}
Plan distributed_plan(const DistributedRequest&, index_t, int) { no_mpi(); }

}  // namespace cgs::dist
