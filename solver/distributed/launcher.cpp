// What needs no MPI: the launcher's environment, and the report's sums.
#include <cstdlib>

#include "solver/distributed/distributed_solve.hpp"

namespace cgs::dist {

int launcher_world_size() {
  // Open MPI's mpirun, MPICH/Hydra and Slurm's PMI set one of these in every process they start.
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "SLURM_NTASKS"})
    if (const char* value = std::getenv(name)) return std::max(0, std::atoi(value));
  return 0;
}

std::size_t DistributedReport::halo_bytes_per_product() const {
  std::size_t bytes = 0;
  for (const RankSummary& r : per_rank) bytes += std::size_t(r.halo_size) * sizeof(double);
  return bytes;
}

long DistributedReport::reductions_per_iteration(long iterations) const {
  if (per_rank.empty() || iterations <= 0) return 0;
  return per_rank.front().times.reductions / iterations;
}

}  // namespace cgs::dist
