// netsolve's MPI, as a module opened only under mpirun (app/study_ranks.hpp): what an mpirun
// study needs -- start MPI, the rank, the ranks and those on this node, every rank's rows on rank
// 0, a barrier, an abort, the end -- behind plain C functions, so that netsolve itself does not
// link MPI and a single run never loads it (a small network's run would pay more for loading
// libmpi than for its hydraulics: tests/app/test_startup_libraries.cpp).
#include <mpi.h>

#include <climits>
#include <cstdlib>
#include <cstring>

extern "C" {

int netsolve_mpi_start(int* rank, int* size, int* local_size) {
  int started = 0;
  MPI_Initialized(&started);
  int provided = 0;
  if (!started && MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
    return 1;
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, *rank, MPI_INFO_NULL, &node);
  MPI_Comm_size(node, local_size);
  MPI_Comm_free(&node);
  return 0;
}

// Every rank's bytes on rank 0: a malloc'd buffer of them in rank order, lengths[r] each (rank
// 0 only; elsewhere nullptr). nullptr on rank 0 too where they exceed 2 GB.
char* netsolve_mpi_gather(const char* mine, int length, int* lengths) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Gather(&length, 1, MPI_INT, lengths, 1, MPI_INT, 0, MPI_COMM_WORLD);
  int* offsets = nullptr;
  char* all = nullptr;
  if (rank == 0) {
    offsets = static_cast<int*>(std::malloc(sizeof(int) * size));
    long long total = 0;
    for (int r = 0; r < size; ++r) offsets[r] = static_cast<int>(total), total += lengths[r];
    all = total <= INT_MAX ? static_cast<char*>(std::malloc(total > 0 ? total : 1)) : nullptr;
  }
  MPI_Gatherv(mine, length, MPI_CHAR, all, lengths, offsets, MPI_CHAR, 0, MPI_COMM_WORLD);
  std::free(offsets);
  return all;
}

void netsolve_mpi_barrier() { MPI_Barrier(MPI_COMM_WORLD); }
void netsolve_mpi_abort(int code) { MPI_Abort(MPI_COMM_WORLD, code); }
void netsolve_mpi_end() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}
}
