// doctest under MPI: every rank runs every test (the distributed ones are collective); the job
// fails when any rank has a failure. Run as `mpirun -np P test_distributed` (tests/CMakeLists.txt
// registers P = 1, 2, 4).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <mpi.h>

#include "distributed_test_util.hpp"

namespace cgs::testing {
const dist::MpiSession* g_session = nullptr;
const dist::MpiSession& session() { return *g_session; }
}  // namespace cgs::testing

int main(int argc, char** argv) {
  cgs::dist::MpiSession session(&argc, &argv);
  cgs::testing::g_session = &session;
  doctest::Context context(argc, argv);
  if (session.rank() != 0) context.setOption("no-intro", true);
  int failed = context.run();
  if (context.shouldExit()) return failed;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return failed;
}
