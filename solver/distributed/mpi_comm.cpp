#include "solver/distributed/mpi_comm.hpp"

#include <stdexcept>

#include "solver/cg_step.hpp"

namespace cgs::dist {

namespace {

// index_t is 32-bit (formats/types.hpp); MPI_INT carries it.
static_assert(sizeof(index_t) == sizeof(int), "index_t travels as MPI_INT");

void check(int status, const char* what) {
  if (status != MPI_SUCCESS) throw std::runtime_error(std::string("MPI failed in ") + what);
}

}  // namespace

int comm_rank(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return rank;
}

int comm_size(MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  return size;
}

std::vector<std::pair<int, std::vector<index_t>>> exchange_requests(
    MPI_Comm comm, const RankBlock& block, const std::vector<HaloReceive>& receives) {
  const int ranks = comm_size(comm);
  std::vector<int> ask_counts(ranks, 0), asked_counts(ranks, 0);
  for (const HaloReceive& r : receives) ask_counts[r.rank] = r.count;
  check(MPI_Alltoall(ask_counts.data(), 1, MPI_INT, asked_counts.data(), 1, MPI_INT, comm),
        "MPI_Alltoall");
  std::vector<int> ask_offsets(ranks, 0), asked_offsets(ranks, 0);
  for (const HaloReceive& r : receives) ask_offsets[r.rank] = r.offset;
  int asked_total = 0;
  for (int q = 0; q < ranks; ++q) {
    asked_offsets[q] = asked_total;
    asked_total += asked_counts[q];
  }
  std::vector<index_t> asked(std::size_t(asked_total) + 1);
  // halo_columns is the send buffer: the columns owned by rank q are one range of it.
  check(MPI_Alltoallv(block.halo_columns.data(), ask_counts.data(), ask_offsets.data(), MPI_INT,
                      asked.data(), asked_counts.data(), asked_offsets.data(), MPI_INT, comm),
        "MPI_Alltoallv");
  std::vector<std::pair<int, std::vector<index_t>>> requests;
  for (int q = 0; q < ranks; ++q)
    if (asked_counts[q] > 0)
      requests.emplace_back(
          q, std::vector<index_t>(asked.begin() + asked_offsets[q],
                                  asked.begin() + asked_offsets[q] + asked_counts[q]));
  return requests;
}

MpiHalo::MpiHalo(MPI_Comm comm, const RankBlock& block, const RowBlocks& blocks)
    : comm_(comm), receives_(halo_receives(block, blocks)), halo_(block.halo_columns.size()) {
  std::size_t total = 0;
  for (auto& [rank, globals] : exchange_requests(comm, block, receives_)) {
    sends_.push_back(halo_send(rank, globals, block));
    send_offsets_.push_back(total);
    total += globals.size();
  }
  send_buffer_.resize(total);
  requests_.resize(receives_.size() + sends_.size());
}

template <typename ValueOf>
void MpiHalo::post(ValueOf value_of) {
  constexpr int kTag = 25;
  std::size_t next = 0;
  for (const HaloReceive& r : receives_)
    check(MPI_Irecv(halo_.data() + r.offset, r.count, MPI_DOUBLE, r.rank, kTag, comm_,
                    &requests_[next++]),
          "MPI_Irecv");
  for (std::size_t s = 0; s < sends_.size(); ++s) {
    double* packed = send_buffer_.data() + send_offsets_[s];
    const std::vector<index_t>& rows = sends_[s].local_rows;
    for (std::size_t k = 0; k < rows.size(); ++k) packed[k] = value_of(rows[k]);
    check(MPI_Isend(packed, int(rows.size()), MPI_DOUBLE, sends_[s].rank, kTag, comm_,
                    &requests_[next++]),
          "MPI_Isend");
  }
}

void MpiHalo::start(const double* x_local) {
  post([=](index_t i) { return x_local[i]; });
}

void MpiHalo::start_next_p(const double* z, double beta, const double* p_old) {
  post([=](index_t i) { return cg::next_p(z[i], beta, p_old[i]); });
}

void MpiHalo::finish() {
  check(MPI_Waitall(int(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
}

void allreduce_sum(MPI_Comm comm, double* values, int count) {
  check(MPI_Allreduce(MPI_IN_PLACE, values, count, MPI_DOUBLE, MPI_SUM, comm), "MPI_Allreduce");
}

namespace {

// Rank 0 sends pieces of one array, piece q = [begin[q], begin[q] + count[q]).
template <typename T>
std::vector<T> scatter_pieces(MPI_Comm comm, const T* whole, const std::vector<int>& begin,
                              const std::vector<int>& count, MPI_Datatype type) {
  const int rank = comm_rank(comm);
  std::vector<T> piece(static_cast<std::size_t>(count[rank]));
  check(MPI_Scatterv(whole, count.data(), begin.data(), type, piece.data(), count[rank], type, 0,
                     comm),
        "MPI_Scatterv");
  return piece;
}

}  // namespace

CsrMatrix<double> scatter_rows(MPI_Comm comm, const CsrMatrix<double>* A, const RowBlocks& blocks) {
  const int ranks = comm_size(comm), rank = comm_rank(comm);
  std::vector<int> row_begin(ranks), row_count(ranks), entry_begin(ranks), entry_count(ranks);
  std::vector<index_t> entry_offsets(std::size_t(ranks) + 1);  // rank 0 knows them
  if (rank == 0)
    for (int q = 0; q <= ranks; ++q) entry_offsets[q] = A->row_ptr[blocks.offsets[q]];
  broadcast(comm, entry_offsets);
  for (int q = 0; q < ranks; ++q) {
    row_begin[q] = blocks.first(q);
    row_count[q] = blocks.rows(q);
    entry_begin[q] = entry_offsets[q];
    entry_count[q] = entry_offsets[q + 1] - entry_offsets[q];
  }
  // Row lengths travel instead of pointers (a pointer is only meaningful in its own block).
  std::vector<index_t> lengths;
  if (rank == 0) {
    lengths.resize(std::size_t(A->rows));
    for (index_t i = 0; i < A->rows; ++i) lengths[i] = A->row_length(i);
  }
  CsrMatrix<double> mine;
  mine.rows = blocks.rows(rank);
  mine.cols = blocks.offsets.back();
  const std::vector<index_t> my_lengths =
      scatter_pieces(comm, rank == 0 ? lengths.data() : nullptr, row_begin, row_count, MPI_INT);
  mine.row_ptr.assign(1, 0);
  for (index_t length : my_lengths) mine.row_ptr.push_back(mine.row_ptr.back() + length);
  mine.col_idx = scatter_pieces(comm, rank == 0 ? A->col_idx.data() : nullptr, entry_begin,
                                entry_count, MPI_INT);
  mine.values = scatter_pieces(comm, rank == 0 ? A->values.data() : nullptr, entry_begin,
                               entry_count, MPI_DOUBLE);
  return mine;
}

std::vector<double> scatter_vector(MPI_Comm comm, const std::vector<double>* whole,
                                   const RowBlocks& blocks) {
  const int ranks = comm_size(comm), rank = comm_rank(comm);
  std::vector<int> begin(ranks), count(ranks);
  for (int q = 0; q < ranks; ++q) begin[q] = blocks.first(q), count[q] = blocks.rows(q);
  return scatter_pieces(comm, rank == 0 ? whole->data() : nullptr, begin, count, MPI_DOUBLE);
}

std::vector<double> gather_vector(MPI_Comm comm, const std::vector<double>& slice,
                                  const RowBlocks& blocks) {
  const int ranks = comm_size(comm), rank = comm_rank(comm);
  std::vector<int> begin(ranks), count(ranks);
  for (int q = 0; q < ranks; ++q) begin[q] = blocks.first(q), count[q] = blocks.rows(q);
  std::vector<double> whole(rank == 0 ? std::size_t(blocks.offsets.back()) : 0);
  check(MPI_Gatherv(slice.data(), int(slice.size()), MPI_DOUBLE, whole.data(), count.data(),
                    begin.data(), MPI_DOUBLE, 0, comm),
        "MPI_Gatherv");
  return whole;
}

void broadcast(MPI_Comm comm, std::vector<index_t>& values) {
  long long size = (long long)values.size();
  check(MPI_Bcast(&size, 1, MPI_LONG_LONG, 0, comm), "MPI_Bcast");
  values.resize(std::size_t(size));
  check(MPI_Bcast(values.data(), int(size), MPI_INT, 0, comm), "MPI_Bcast");
}

void broadcast(MPI_Comm comm, std::string& text) {
  long long size = (long long)text.size();
  check(MPI_Bcast(&size, 1, MPI_LONG_LONG, 0, comm), "MPI_Bcast");
  text.resize(std::size_t(size));
  check(MPI_Bcast(text.data(), int(size), MPI_CHAR, 0, comm), "MPI_Bcast");
}

}  // namespace cgs::dist
