// MPI for the distributed solve: starting it, the halo exchange of a rank's rows, the
// reductions, and moving rows and vectors between rank 0 and the others. Only built with MPI
// (CGSOLVE_HAVE_MPI); mpi_session.hpp is what the rest of the program sees.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <string>
#include <vector>

#include "formats/csr.hpp"
#include "solver/distributed/partition.hpp"

namespace cgs::dist {

int comm_rank(MPI_Comm comm);
int comm_size(MPI_Comm comm);

// The halo exchange of one rank, planned once: which neighbour sends which halo range, which
// local entries go to which neighbour (asked for by the neighbours themselves at set-up, so a
// rank sends exactly what its neighbours' halo columns name, nothing more).
class MpiHalo {
 public:
  // Collective over comm: every rank tells each owner which of its rows it needs.
  MpiHalo(MPI_Comm comm, const RankBlock& block, const RowBlocks& blocks);
  MpiHalo(const MpiHalo&) = delete;
  MpiHalo& operator=(const MpiHalo&) = delete;

  // Posts the receives into the halo and the sends of x's entries (packed first); returns at once.
  void start(const double* x_local);
  // The same for p_new = cg::next_p(z, beta, p_old), formed entry by entry as it is packed (the
  // fused loop forms p inside its product pass, so p_new's sent entries may not exist yet).
  void start_next_p(const double* z, double beta, const double* p_old);
  // Waits for all of them; then values() holds the halo.
  void finish();
  const double* values() const { return halo_.data(); }
  std::size_t halo_size() const { return halo_.size(); }

  const std::vector<HaloReceive>& receives() const { return receives_; }
  const std::vector<HaloSend>& sends() const { return sends_; }
  std::size_t bytes_received() const { return halo_.size() * sizeof(double); }
  std::size_t bytes_sent() const { return send_buffer_.size() * sizeof(double); }

 private:
  template <typename ValueOf>
  void post(ValueOf value_of);  // the receives, and the sends of value_of(local row)

  MPI_Comm comm_;
  std::vector<HaloReceive> receives_;
  std::vector<HaloSend> sends_;
  std::vector<std::size_t> send_offsets_;
  std::vector<double> halo_, send_buffer_;
  std::vector<MPI_Request> requests_;
};

// Asks each owner for the halo columns it owns; returns, per rank that asked this one, the
// global rows it asked for (increasing). Collective.
std::vector<std::pair<int, std::vector<index_t>>> exchange_requests(
    MPI_Comm comm, const RankBlock& block, const std::vector<HaloReceive>& receives);

// The sum over ranks of `count` doubles, the same bits on every rank.
void allreduce_sum(MPI_Comm comm, double* values, int count);

// Rank 0 sends each rank its block of rows (CSR, global columns); the others receive theirs.
CsrMatrix<double> scatter_rows(MPI_Comm comm, const CsrMatrix<double>* A, const RowBlocks& blocks);
// Rank 0's whole vector, each rank's slice of it.
std::vector<double> scatter_vector(MPI_Comm comm, const std::vector<double>* whole,
                                   const RowBlocks& blocks);
// Each rank's slice; rank 0 gets the whole vector (others: empty).
std::vector<double> gather_vector(MPI_Comm comm, const std::vector<double>& slice,
                                  const RowBlocks& blocks);

// Rank 0's value on every rank.
void broadcast(MPI_Comm comm, std::vector<index_t>& values);
void broadcast(MPI_Comm comm, std::string& text);

}  // namespace cgs::dist
