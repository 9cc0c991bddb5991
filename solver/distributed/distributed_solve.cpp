#include "solver/distributed/distributed_solve.hpp"

#include <mpi.h>
#include <omp.h>

#include <chrono>
#include <climits>
#include <cmath>
#include <cstdlib>

#include "formats/generators.hpp"
#include "formats/row_order.hpp"
#include "formats/types.hpp"
#include "solver/distributed/cpu_rank_ops.hpp"
#include "solver/distributed/cuda_rank_ops.hpp"
#include "solver/distributed/mpi_comm.hpp"

namespace cgs::dist {

bool mpi_built() { return true; }

MpiSession::MpiSession(int* argc, char*** argv) {
  int started = 0;
  MPI_Initialized(&started);
  if (!started) {
    int provided = 0;
    // Only the main thread calls MPI; OpenMP threads work between the calls.
    MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiSession::~MpiSession() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

std::string MpiSession::share_error(const std::string& rank0_error) const {
  std::string error = rank0_error;
  broadcast(MPI_COMM_WORLD, error);
  return error;
}

void MpiSession::abort(int code) const {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::exit(code);
}

Plan distributed_plan(const DistributedRequest& d, index_t rows, int ranks) {
  const SolveRequest& r = d.request;
  if (r.needs_inspector())
    throw InputError(
        "a distributed solve takes no 'auto' (--format, --kernel, --precond): name them");
  if (r.precision != Precision::double_)
    throw InputError("a distributed solve runs in double (--precision float is not offered)");
  Plan plan = plan_as_asked(r);
  plan.loop = Loop::generic;
  plan.cg = r.cg;
  plan.cg.check_every = 1;  // the scalars are on every rank's host after each reduction
  if (plan.cg.max_iters <= 0) plan.cg.max_iters = 10 * std::max<long>(1, rows);
  plan.reasons.push_back(
      "distributed: " + std::to_string(ranks) + " ranks, " + to_string(d.partition) +
      " row blocks, " + to_string(d.variant) + " CG" +
      (d.loop == DistLoop::fused && d.variant == CgVariant::classic
           ? std::string(", fused passes where the ranks offer them (CPU ranks, pointwise M)")
           : std::string(", plain loop")) +
      (d.variant == CgVariant::single_reduction
           ? (d.replace_every > 0
                  ? " (residual replaced every " + std::to_string(d.replace_every) + " iterations)"
                  : std::string(" (residual replaced when ||r|| fell 100-fold)"))
           : std::string()));
  if (!r.precond.is("none") && !r.precond.is("jacobi"))
    plan.reasons.push_back("preconditioner: " + r.precond.text() +
                           " on each rank's local block (block-Jacobi over the ranks)");
  if (plan.rcm || plan.sort_rows)
    plan.reasons.push_back("order: each rank renumbers its own rows (the partition stays)");
  return plan;
}

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The rank's rows renumbered as the plan asks (RCM, then sorting by length): within the rank
// only, so the partition and the neighbours' halos stay as they are.
void reorder_rank_rows(RankBlock& block, const Plan& plan) {
  if (block.local.rows == 0) return;
  if (plan.rcm) reorder_locally(block, reverse_cuthill_mckee(block.local));
  if (plan.sort_rows) reorder_locally(block, sort_rows_by_length(block.local));
}

std::unique_ptr<RankOps> make_rank_ops(const RankBlock& block, const RowBlocks& blocks,
                                       const Plan& plan) {
  RankSetup setup;
  setup.backend = plan.backend_options();
  setup.backend.threads = plan.threads;
  setup.precond = plan.precond;
  if (plan.device == Device::gpu) return make_cuda_rank_ops(MPI_COMM_WORLD, block, blocks, setup);
  return std::make_unique<CpuRankOps>(MPI_COMM_WORLD, block, blocks, setup);
}

// ||b - A x|| / ||b|| over all ranks, A x through the same distributed product.
double true_relative_residual(RankOps& ops, const double* b, const double* x) {
  double* Ax = ops.allocate();
  double* r = ops.allocate();
  ops.multiply(x, Ax);
  ops.residual(b, Ax, r);
  double sums[2];
  const DotPair pairs[2] = {{r, r}, {b, b}};
  ops.dots(pairs, 2, sums);
  ops.release(Ax);
  ops.release(r);
  return sums[1] > 0 ? std::sqrt(sums[0] / sums[1]) : 0.0;
}

// Every rank's summary on rank 0, as fixed arrays of numbers.
std::vector<RankSummary> gather_summaries(const RankSummary& mine, int ranks) {
  constexpr int kFields = 19;
  const RankTimes& t = mine.times;
  const double packed[kFields] = {double(mine.rank),
                                  double(mine.rows),
                                  double(mine.local_nnz),
                                  double(mine.halo_nnz),
                                  double(mine.halo_size),
                                  double(mine.neighbours),
                                  t.local_spmv,
                                  t.halo_wait,
                                  t.halo_spmv,
                                  t.allreduce,
                                  t.precond,
                                  t.vector_ops,
                                  double(t.products),
                                  double(t.reductions),
                                  double(t.halo_bytes_received),
                                  double(t.halo_bytes_sent),
                                  t.halo_exchange,
                                  t.halo_imbalance,
                                  t.allreduce_imbalance};
  std::vector<double> all(std::size_t(kFields) * ranks);
  MPI_Gather(packed, kFields, MPI_DOUBLE, all.data(), kFields, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  std::vector<RankSummary> summaries(static_cast<std::size_t>(ranks));
  for (int q = 0; q < ranks; ++q) {
    const double* f = all.data() + std::size_t(q) * kFields;
    RankSummary& s = summaries[q];
    s.rank = int(f[0]);
    s.rows = long(f[1]), s.local_nnz = long(f[2]), s.halo_nnz = long(f[3]);
    s.halo_size = long(f[4]), s.neighbours = long(f[5]);
    s.times = {f[6],
               f[7],
               f[8],
               f[9],
               f[10],
               f[11],
               long(f[12]),
               long(f[13]),
               std::size_t(f[14]),
               std::size_t(f[15]),
               f[16],
               f[17],
               f[18]};
  }
  return summaries;
}

// Rank 0's numbering of the rows (the partition's order) applied to its inputs.
struct Renumbered {
  const CsrMatrix<double>* original = nullptr;
  std::vector<double> b, x0;
  CsrMatrix<double> permuted;  // empty when the partition keeps A's order
  const CsrMatrix<double>* A() const { return original ? original : &permuted; }
};

Renumbered renumber(const Partition& part, const CsrMatrix<double>& A, const std::vector<double>& b,
                    const std::vector<double>& x0) {
  Renumbered r;
  r.x0 = x0.empty() ? std::vector<double>(std::size_t(A.rows), 0.0) : x0;
  if (part.order.empty()) {
    r.original = &A;
    r.b = b;
    return r;
  }
  r.permuted = permute_symmetric(A, part.order);
  r.b = part.order.to_new(b);
  r.x0 = part.order.to_new(r.x0);
  return r;
}

// What every rank holds before the solve: its rows (global columns), b and x0 for them, the
// blocks, and on rank 0 the partition's renumbering.
struct RankInputs {
  RowBlocks blocks;
  CsrMatrix<double> rows;
  std::vector<double> b, x;
  RowPermutation order;  // rank 0: the partition's (empty: A's own order)
  long long global_nnz = 0;
};

DistributedOutcome solve_rank_inputs(const MpiSession& session, RankInputs inputs,
                                     const DistributedRequest& request, DistributedReport report);

}  // namespace

DistributedOutcome solve_distributed(const MpiSession& session, const CsrMatrix<double>* A,
                                     const std::vector<double>* b, const std::vector<double>* x0,
                                     const DistributedRequest& request) {
  const MPI_Comm comm = MPI_COMM_WORLD;
  const int rank = session.rank(), ranks = session.size();
  DistributedReport report;

  // Rank 0 partitions and renumbers; everyone learns the blocks.
  auto start = Clock::now();
  Partition part;
  Renumbered renumbered;
  if (rank == 0) {
    part = make_partition(*A, ranks, request.partition);
    renumbered = renumber(part, *A, *b, x0 ? *x0 : std::vector<double>());
  }
  broadcast(comm, part.blocks.offsets);
  report.partition_seconds = seconds_since(start);

  start = Clock::now();
  RankInputs inputs;
  inputs.rows = scatter_rows(comm, rank == 0 ? renumbered.A() : nullptr, part.blocks);
  inputs.b = scatter_vector(comm, &renumbered.b, part.blocks);
  inputs.x = scatter_vector(comm, &renumbered.x0, part.blocks);
  renumbered = Renumbered{};  // rank 0's renumbered copy is no longer needed
  inputs.blocks = part.blocks;
  inputs.order = std::move(part.order);
  inputs.global_nnz = rank == 0 ? A->nnz() : 0;
  report.scatter_seconds = seconds_since(start);
  return solve_rank_inputs(session, std::move(inputs), request, report);
}

bool generated_per_rank(const std::string& spec) {
  return is_generator_spec(spec) && generate_matrix_rows(spec, 0, 0).has_value();
}

namespace {

// The whole matrix's statistics from the ranks' (sums, minima, maxima) on rank 0.
MatrixStats combine_stats(const MatrixStats& mine, index_t rows, index_t cols) {
  double sums[6] = {double(mine.nnz),         double(mine.empty_rows),
                    mine.hll_fill * mine.nnz, mine.row_length_avg_deviation_pct * mine.rows,
                    double(mine.bytes_coo),   double(mine.bytes_hll)};
  allreduce_sum(MPI_COMM_WORLD, sums, 6);
  int lengths[2] = {mine.rows > 0 ? -mine.min_row_length : INT_MIN, mine.max_row_length};
  MPI_Allreduce(MPI_IN_PLACE, lengths, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MatrixStats s = mine;
  s.rows = rows;
  s.cols = cols;
  s.nnz = index_t(sums[0]);
  s.empty_rows = index_t(sums[1]);
  s.min_row_length = -lengths[0];
  s.max_row_length = lengths[1];
  s.mean_row_length = rows > 0 ? sums[0] / rows : 0;
  s.row_length_avg_deviation_pct = rows > 0 ? sums[3] / rows : 0;
  s.ell_fill = s.nnz > 0 ? double(s.max_row_length) * rows / s.nnz : 0;
  s.hll_fill = s.nnz > 0 ? sums[2] / s.nnz : 0;
  s.bytes_coo = std::size_t(sums[4]);
  s.bytes_hll = std::size_t(sums[5]);
  s.bytes_csr = std::size_t(s.nnz) * (sizeof(double) + sizeof(index_t)) +
                (std::size_t(rows) + 1) * sizeof(index_t);
  s.bytes_ell = std::size_t(rows) * s.max_row_length * (sizeof(double) + sizeof(index_t));
  return s;
}

}  // namespace

DistributedOutcome solve_distributed_generated(const MpiSession& session, const std::string& spec,
                                               const DistributedRequest& request,
                                               MatrixStats* stats) {
  const int rank = session.rank(), ranks = session.size();
  DistributedReport report;
  const auto start = Clock::now();
  RankInputs inputs;
  const index_t n = generate_matrix_rows(spec, 0, 0)->cols;
  inputs.blocks = partition_by_rows(n, ranks);
  inputs.rows = *generate_matrix_rows(spec, inputs.blocks.first(rank), inputs.blocks.rows(rank));
  inputs.b.assign(std::size_t(inputs.rows.rows), 0.0);  // b = A * ones
  for (index_t i = 0; i < inputs.rows.rows; ++i)
    for (index_t k = inputs.rows.row_ptr[i]; k < inputs.rows.row_ptr[i + 1]; ++k)
      inputs.b[i] += inputs.rows.values[k];
  inputs.x.assign(std::size_t(inputs.rows.rows), 0.0);
  const MatrixStats all =
      combine_stats(compute_stats(inputs.rows, request.request.backend.hack_size), n, n);
  if (stats && rank == 0) *stats = all;
  inputs.global_nnz = all.nnz;
  report.scatter_seconds = seconds_since(start);  // generating stands in for scattering
  return solve_rank_inputs(session, std::move(inputs), request, report);
}

namespace {

DistributedOutcome solve_rank_inputs(const MpiSession& session, RankInputs inputs,
                                     const DistributedRequest& request, DistributedReport report) {
  const MPI_Comm comm = MPI_COMM_WORLD;
  const int rank = session.rank(), ranks = session.size();
  DistributedOutcome out;
  report.ranks = ranks;
  report.partition = request.partition;
  report.variant = request.variant;
  report.replace_every = request.variant == CgVariant::single_reduction ? request.replace_every : 0;
  const RowBlocks& blocks = inputs.blocks;
  const index_t n = blocks.offsets.back();
  const Plan plan = distributed_plan(request, n, ranks);
  std::vector<double>& my_b = inputs.b;
  std::vector<double>& my_x = inputs.x;

  const auto start = Clock::now();
  RankBlock block = split_rows(inputs.rows, blocks.first(rank), n);
  inputs.rows = CsrMatrix<double>{};  // split into block's two parts
  reorder_rank_rows(block, plan);
  if (!block.order.empty()) {
    my_b = block.order.to_new(my_b);
    my_x = block.order.to_new(my_x);
  }
  std::unique_ptr<RankOps> ops = make_rank_ops(block, blocks, plan);
  double* b_dev = ops->allocate();
  double* x_dev = ops->allocate();
  ops->upload(my_b, b_dev);
  ops->upload(my_x, x_dev);
  report.setup_seconds = seconds_since(start);

  ops->clear_times();
  DistributedCgOptions options;
  options.cg = plan.cg;
  options.variant = request.variant;
  options.replace_every = request.replace_every;
  options.loop = request.loop;
  MPI_Barrier(comm);  // the solve's clock starts when every rank is ready
  const DistributedCgResult solved = distributed_cg(*ops, b_dev, x_dev, options);
  const CgResult& cg = solved.cg;
  report.replacements = solved.replacements;
  report.fallbacks = solved.fallbacks;
  report.loop = solved.loop;

  RankSummary mine;
  mine.rank = rank;
  mine.rows = block.local.rows;
  mine.local_nnz = block.local.nnz();
  mine.halo_nnz = block.halo.nnz();
  mine.halo_size = long(block.halo_columns.size());
  mine.neighbours = long(halo_receives(block, blocks).size());
  mine.times = ops->times();
  const double true_residual = true_relative_residual(*ops, b_dev, x_dev);
  report.per_rank = gather_summaries(mine, ranks);
  out.distributed = report;

  std::vector<double> x_slice = ops->download(x_dev);
  ops->release(b_dev);
  ops->release(x_dev);
  if (!block.order.empty()) x_slice = block.order.to_original(x_slice);
  std::vector<double> x = gather_vector(comm, x_slice, blocks);
  out.solve.cg = cg;  // every rank's exit status follows it
  if (rank != 0) return out;
  out.x = inputs.order.empty() ? std::move(x) : inputs.order.to_original(x);

  SolveReport& s = out.solve;
  s.plan = plan;
  s.true_relative_residual = true_residual;
  if (auto* cpu = dynamic_cast<CpuRankOps*>(ops.get())) {
    s.backend_name = cpu->backend_name() + " local block + csr halo block per rank";
    if (const PrecondReport* p = cpu->precond_report()) s.precond = *p;
  } else {
    s.backend_name = gpu_rank_ops_name(*ops);
  }
  s.precond.name = plan.precond.text();
  s.nnz = index_t(inputs.global_nnz);
  s.times.reorder_seconds = report.partition_seconds;
  s.times.upload_seconds = report.scatter_seconds;
  s.times.convert_seconds = report.setup_seconds;
  s.times.solve_seconds = cg.solve_seconds;
  // The distributed product of rank 0 (local block, halo wait, halo block), its mean per product.
  const RankTimes& t = mine.times;
  if (t.products > 0 && plan.cg.time_spmv) {
    s.spmv.measured = true;
    s.spmv.what = solved.loop == DistLoop::fused
                      ? "distributed SpMV pass of rank 0 (local block with the p and x updates "
                        "fused in + halo wait + halo block), mean"
                      : "distributed SpMV of rank 0 (local block + halo wait + halo block), mean";
    s.spmv.samples = t.products;
    s.spmv.total = t.local_spmv + t.halo_wait + t.halo_spmv;
    s.spmv.median = s.spmv.mean = s.spmv.min = s.spmv.total / double(t.products);
  }
  return out;
}

}  // namespace
}  // namespace cgs::dist
