// GPU ranks of the distributed CG (see cuda_rank_ops.hpp). One rank per GPU: rank r of a host
// takes device r % devices. Every kernel, the local product and the preconditioner run on the
// project's one stream (spmv/cuda/cuda_common.cuh); the halo exchange runs on a second stream so
// that it overlaps the local product:
//   main:  pack the send entries -> local SpMV ................ wait(halo) -> halo SpMV
//   comm:            wait(packed) -> ncclSend/ncclRecv (group) -> halo ready
// Dot products: per-block partial sums and a fixed-order final sum (the same bits every run),
// then one ncclAllReduce of the `count` sums, copied to the host for cg_step.hpp's decisions.
#include <mpi.h>
#include <nccl.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/shared_library.hpp"
#include "base/tuning.hpp"
#include "solver/cg_step.hpp"
#include "solver/distributed/cuda_rank_ops.hpp"
#include "solver/distributed/mpi_comm.hpp"
#include "spmv/cuda/cuda_common.cuh"

namespace cgs::dist {

namespace {

using cuda::stream;

// NCCL's functions, resolved from libnccl when the first GPU rank's transport is made
// (base/shared_library.hpp says why): linked, it cost every CPU run of cgsolve about 3 ms of
// start-up. The soname found at build time, then its path there (distributed/CMakeLists.txt).
struct NcclApi {
  decltype(&::ncclGetErrorString) error_string;
  decltype(&::ncclGetUniqueId) get_unique_id;
  decltype(&::ncclCommInitRank) comm_init_rank;
  decltype(&::ncclCommDestroy) comm_destroy;
  decltype(&::ncclAllReduce) all_reduce;
  decltype(&::ncclGroupStart) group_start;
  decltype(&::ncclGroupEnd) group_end;
  decltype(&::ncclSend) send;
  decltype(&::ncclRecv) recv;
};

NcclApi load_nccl() {
  static const SharedLibrary library({CGSOLVE_NCCL_SONAME, CGSOLVE_NCCL_PATH}, "NCCL");
  NcclApi api{};
  api.error_string = library.function<decltype(api.error_string)>("ncclGetErrorString");
  api.get_unique_id = library.function<decltype(api.get_unique_id)>("ncclGetUniqueId");
  api.comm_init_rank = library.function<decltype(api.comm_init_rank)>("ncclCommInitRank");
  api.comm_destroy = library.function<decltype(api.comm_destroy)>("ncclCommDestroy");
  api.all_reduce = library.function<decltype(api.all_reduce)>("ncclAllReduce");
  api.group_start = library.function<decltype(api.group_start)>("ncclGroupStart");
  api.group_end = library.function<decltype(api.group_end)>("ncclGroupEnd");
  api.send = library.function<decltype(api.send)>("ncclSend");
  api.recv = library.function<decltype(api.recv)>("ncclRecv");
  return api;
}

const NcclApi& nccl() {
  try {
    static const NcclApi table = load_nccl();
    return table;
  } catch (const std::runtime_error& e) {
    throw DeviceError(e.what());
  }
}

#define CGS_NCCL_CHECK(call)                                               \
  do {                                                                     \
    const ncclResult_t cgs_nccl_ = (call);                                 \
    if (cgs_nccl_ != ncclSuccess)                                          \
      throw DeviceError(std::string("NCCL call failed: ") + #call + ": " + \
                        nccl().error_string(cgs_nccl_));                   \
  } while (0)

constexpr int kBlock = 256;
// Partial sums per dot: fixed, so the sum order is fixed. 1,024 blocks of 256 threads keep
// enough loads in flight to stream an 8M-row vector at HBM bandwidth (256 blocks did not).
constexpr int kDotBlocks = 1024;
constexpr int kMaxDots = 4;

int blocks_for(std::size_t n) { return int(std::max<std::size_t>(1, (n + kBlock - 1) / kBlock)); }

__global__ void residual_kernel(std::int64_t n, const double* b, const double* Ax, double* r) {
  const std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (i < n) r[i] = b[i] - Ax[i];
}

__global__ void update_xr_kernel(std::int64_t n, double alpha, const double* p, const double* q,
                                 double* x, double* r) {
  const std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (i < n) {
    x[i] = cg::next_x(x[i], alpha, p[i]);
    r[i] = cg::next_r(r[i], alpha, q[i]);
  }
}

__global__ void update_p_kernel(std::int64_t n, double beta, const double* z, double* p) {
  const std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (i < n) p[i] = cg::next_p(z[i], beta, p[i]);
}

__global__ void pointwise_kernel(std::int64_t n, const double* d, const double* r, double* z) {
  const std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (i < n) z[i] = d ? d[i] * r[i] : r[i];
}

__global__ void pack_kernel(std::int64_t count, const index_t* rows, const double* x,
                            double* packed) {
  const std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (i < count) packed[i] = x[rows[i]];
}

// y += H h over the rows that have halo entries, one thread a row (they are short: the entries a
// rank shares with others).
__global__ void halo_spmv_kernel(std::int64_t count, const index_t* rows, const index_t* row_ptr,
                                 const index_t* col, const double* val, const double* h,
                                 double* y) {
  const std::int64_t j = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (j >= count) return;
  const index_t i = rows[j];
  double sum = 0;
  for (index_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) sum += val[k] * h[col[k]];
  y[i] += sum;
}

// The block's sum of `value` in thread 0, by a fixed tree (the same bits every run).
__device__ double block_sum(double value, double* cache) {
  cache[threadIdx.x] = value;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) cache[threadIdx.x] += cache[threadIdx.x + half];
    __syncthreads();
  }
  const double sum = cache[0];
  __syncthreads();  // cache is reused by the caller's next sum
  return sum;
}

// The end of a classic iteration in one pass: x += alpha p, r -= alpha q, z = d .* r (d null: M =
// I, z is r), and the partial sums of r.r and r.z. One read of x, p, r, q (and d) and one write
// of x, r (and z), where the separate kernels read r three more times and z once more.
__global__ void update_xr_precondition_dots_kernel(std::int64_t n, double alpha, const double* p,
                                                   const double* q, double* x, double* r,
                                                   const double* d, double* z, double* partial) {
  __shared__ double cache[kBlock];
  double rr = 0, rz = 0;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    x[i] = cg::next_x(x[i], alpha, p[i]);
    const double ri = cg::next_r(r[i], alpha, q[i]);
    r[i] = ri;
    const double zi = d ? d[i] * ri : ri;
    if (z != r) z[i] = zi;
    rr += ri * ri;
    rz += ri * zi;
  }
  rr = block_sum(rr, cache);
  rz = block_sum(rz, cache);
  if (threadIdx.x == 0) {
    partial[blockIdx.x] = rr;
    partial[kDotBlocks + blockIdx.x] = rz;
  }
}

struct DotArgs {
  const double* a[kMaxDots];
  const double* b[kMaxDots];
};

// partial[d * kDotBlocks + block]: a grid-stride sum, then a tree in shared memory.
__global__ void dot_partial_kernel(std::int64_t n, DotArgs args, int count, double* partial) {
  __shared__ double cache[kBlock];
  for (int d = 0; d < count; ++d) {
    double sum = 0;
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
         i += std::int64_t(gridDim.x) * blockDim.x)
      sum += args.a[d][i] * args.b[d][i];
    sum = block_sum(sum, cache);
    if (threadIdx.x == 0) partial[d * kDotBlocks + blockIdx.x] = sum;
  }
}

// One block per dot: each thread sums kDotBlocks / kBlock partials in order, then the tree.
__global__ void dot_final_kernel(const double* partial, double* sums) {
  __shared__ double cache[kBlock];
  const double* mine = partial + std::size_t(blockIdx.x) * kDotBlocks;
  double sum = 0;
  for (int b = threadIdx.x; b < kDotBlocks; b += kBlock) sum += mine[b];
  sum = block_sum(sum, cache);
  if (threadIdx.x == 0) sums[blockIdx.x] = sum;
}

template <typename T>
T* device_copy(const std::vector<T>& host, const char* what) {
  if (host.empty()) return nullptr;
  T* p = static_cast<T*>(cuda::device_allocate(host.size() * sizeof(T), what));
  cuda::copy_to_device(p, host.data(), host.size() * sizeof(T));
  return p;
}

// How the ranks' GPUs talk: NCCL, or MPI through host buffers.
class Transport {
 public:
  virtual ~Transport() = default;
  virtual std::string name() const = 0;
  // In place, on the device, in stream order on `s`.
  virtual void allreduce(double* sums, int count, cudaStream_t s) = 0;
  // Receives the halo ranges and sends the packed entries, in stream order on `s`.
  virtual void exchange(const std::vector<HaloReceive>& receives, double* halo,
                        const std::vector<HaloSend>& sends,
                        const std::vector<std::size_t>& send_offsets, double* packed,
                        cudaStream_t s) = 0;
};

class NcclTransport final : public Transport {
 public:
  explicit NcclTransport(MPI_Comm comm) {
    ncclUniqueId id;
    if (comm_rank(comm) == 0) CGS_NCCL_CHECK(nccl().get_unique_id(&id));
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, comm);
    CGS_NCCL_CHECK(nccl().comm_init_rank(&nccl_, comm_size(comm), id, comm_rank(comm)));
  }
  ~NcclTransport() override { nccl().comm_destroy(nccl_); }
  std::string name() const override { return "NCCL"; }
  void allreduce(double* sums, int count, cudaStream_t s) override {
    CGS_NCCL_CHECK(nccl().all_reduce(sums, sums, count, ncclDouble, ncclSum, nccl_, s));
  }
  void exchange(const std::vector<HaloReceive>& receives, double* halo,
                const std::vector<HaloSend>& sends, const std::vector<std::size_t>& offsets,
                double* packed, cudaStream_t s) override {
    CGS_NCCL_CHECK(nccl().group_start());
    for (const HaloReceive& r : receives)
      CGS_NCCL_CHECK(nccl().recv(halo + r.offset, r.count, ncclDouble, r.rank, nccl_, s));
    for (std::size_t i = 0; i < sends.size(); ++i)
      CGS_NCCL_CHECK(nccl().send(packed + offsets[i], sends[i].local_rows.size(), ncclDouble,
                                 sends[i].rank, nccl_, s));
    CGS_NCCL_CHECK(nccl().group_end());
  }

 private:
  ncclComm_t nccl_ = nullptr;
};

// Two ranks on one GPU: NCCL refuses them ("duplicate GPU"), so the halo and the sums go
// through host memory and MPI. The host waits for the copies; the GPU meanwhile runs the local
// product that was queued before the exchange, so the overlap stays.
class HostStagedMpi final : public Transport {
 public:
  explicit HostStagedMpi(MPI_Comm comm) : comm_(comm) {}
  std::string name() const override { return "MPI through host memory"; }
  void allreduce(double* sums, int count, cudaStream_t s) override {
    double host[kMaxDots];
    CGS_CUDA_CHECK(cudaMemcpyAsync(host, sums, count * sizeof(double), cudaMemcpyDeviceToHost, s));
    CGS_CUDA_CHECK(cudaStreamSynchronize(s));
    allreduce_sum(comm_, host, count);
    CGS_CUDA_CHECK(cudaMemcpyAsync(sums, host, count * sizeof(double), cudaMemcpyHostToDevice, s));
    CGS_CUDA_CHECK(cudaStreamSynchronize(s));
  }
  void exchange(const std::vector<HaloReceive>& receives, double* halo,
                const std::vector<HaloSend>& sends, const std::vector<std::size_t>& offsets,
                double* packed, cudaStream_t s) override {
    std::size_t send_total = 0, halo_total = 0;
    for (const HaloSend& send : sends) send_total += send.local_rows.size();
    for (const HaloReceive& r : receives)
      halo_total = std::max<std::size_t>(halo_total, r.offset + r.count);
    send_host_.resize(send_total);
    halo_host_.resize(halo_total);
    CGS_CUDA_CHECK(cudaMemcpyAsync(send_host_.data(), packed, send_total * sizeof(double),
                                   cudaMemcpyDeviceToHost, s));
    CGS_CUDA_CHECK(cudaStreamSynchronize(s));
    std::vector<MPI_Request> requests;
    for (const HaloReceive& r : receives) {
      requests.emplace_back();
      MPI_Irecv(halo_host_.data() + r.offset, r.count, MPI_DOUBLE, r.rank, 26, comm_,
                &requests.back());
    }
    for (std::size_t i = 0; i < sends.size(); ++i) {
      requests.emplace_back();
      MPI_Isend(send_host_.data() + offsets[i], int(sends[i].local_rows.size()), MPI_DOUBLE,
                sends[i].rank, 26, comm_, &requests.back());
    }
    MPI_Waitall(int(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
    CGS_CUDA_CHECK(cudaMemcpyAsync(halo, halo_host_.data(), halo_total * sizeof(double),
                                   cudaMemcpyHostToDevice, s));
    CGS_CUDA_CHECK(cudaStreamSynchronize(s));
  }

 private:
  MPI_Comm comm_;
  std::vector<double> send_host_, halo_host_;
};

// Rank r of a host takes device r % devices; returns whether two ranks of the job share one.
RankGpu select_device(MPI_Comm comm) {
  MPI_Comm host;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host);
  const int local_rank = comm_rank(host);
  MPI_Comm_free(&host);
  int devices = 0;
  CGS_CUDA_CHECK(cudaGetDeviceCount(&devices));
  if (devices == 0) throw DeviceError("no CUDA device for this rank");
  CGS_CUDA_CHECK(cudaSetDevice(local_rank % devices));
  char bus[32] = {};
  CGS_CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, local_rank % devices));
  char hostname[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(hostname, &length);
  const std::string mine = std::string(hostname) + "/" + bus;
  std::vector<char> all(std::size_t(comm_size(comm)) * 256, 0);
  std::vector<char> padded(256, 0);
  std::copy(mine.begin(), mine.begin() + std::min<std::size_t>(mine.size(), 255), padded.begin());
  MPI_Allgather(padded.data(), 256, MPI_CHAR, all.data(), 256, MPI_CHAR, comm);
  std::set<std::string> distinct;
  for (int q = 0; q < comm_size(comm); ++q) distinct.insert(std::string(all.data() + q * 256));
  return {local_rank % devices, int(distinct.size()) < comm_size(comm)};
}

std::unique_ptr<Transport> make_transport(MPI_Comm comm, bool shared_gpu) {
  // Tuning::gpu_transport (--gpu-transport): automatic takes host-staged MPI where ranks share a
  // GPU (NCCL refuses that), else NCCL.
  const GpuTransport asked = tuning().gpu_transport;
  const bool mpi = asked == GpuTransport::automatic ? shared_gpu : asked == GpuTransport::mpi;
  if (mpi) return std::make_unique<HostStagedMpi>(comm);
  return std::make_unique<NcclTransport>(comm);
}

class CudaRankOps final : public RankOps {
 public:
  CudaRankOps(MPI_Comm comm, const RankBlock& block, const RowBlocks& blocks,
              const RankSetup& setup)
      : n_(std::size_t(block.local.rows)), identity_(setup.precond.is("none")) {
    const RankGpu gpu = bind_rank_gpu(comm);
    if (cuda::cuda_context().device != gpu.device)
      throw DeviceError("this rank's CUDA context is on device " +
                        std::to_string(cuda::cuda_context().device) + ", not on its device " +
                        std::to_string(gpu.device) + ": bind_rank_gpu must run first");
    const bool shared_gpu = gpu.shared;
    transport_ = make_transport(comm, shared_gpu);
    MpiHalo plan(comm, block, blocks);  // the lists; the exchange itself goes through transport_
    receives_ = plan.receives();
    sends_ = plan.sends();
    std::vector<index_t> send_rows;
    for (const HaloSend& s : sends_) {
      send_offsets_.push_back(send_rows.size());
      send_rows.insert(send_rows.end(), s.local_rows.begin(), s.local_rows.end());
    }
    send_count_ = send_rows.size();
    halo_size_ = block.halo_columns.size();
    send_rows_ = device_copy(send_rows, "halo send list");
    packed_ = static_cast<double*>(
        cuda::device_allocate(send_count_ * sizeof(double), "halo send buffer"));
    halo_ = static_cast<double*>(cuda::device_allocate(halo_size_ * sizeof(double), "halo"));
    std::vector<index_t> halo_rows;
    for (index_t i = 0; i < block.halo.rows; ++i)
      if (block.halo.row_length(i) > 0) halo_rows.push_back(i);
    halo_row_count_ = std::int64_t(halo_rows.size());
    halo_rows_ = device_copy(halo_rows, "rows with halo entries");
    halo_nnz_ = block.halo.nnz();
    halo_row_ptr_ = device_copy(block.halo.row_ptr, "halo block rows");
    halo_col_ = device_copy(block.halo.col_idx, "halo block columns");
    halo_val_ = device_copy(block.halo.values, "halo block values");
    partial_ = static_cast<double*>(
        cuda::device_allocate(kMaxDots * kDotBlocks * sizeof(double), "dot partial sums"));
    sums_ = static_cast<double*>(cuda::device_allocate(kMaxDots * sizeof(double), "dot sums"));
    // The exchange's stream gets the highest priority: NCCL's kernels then take SMs as soon as
    // blocks of the local product retire, instead of queuing behind the whole grid.
    int least = 0, greatest = 0;
    CGS_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    CGS_CUDA_CHECK(cudaStreamCreateWithPriority(&comm_stream_, cudaStreamNonBlocking, greatest));
    for (cudaEvent_t* e : {&packed_ready_, &exchange_start_, &halo_ready_, &start_, &local_done_,
                           &halo_waited_, &done_, &reduce_start_, &reduce_done_})
      CGS_CUDA_CHECK(cudaEventCreate(e));
    if (n_ > 0) {
      BackendOptions options = setup.backend;
      options.device = Device::gpu;
      local_ = make_backend(block.local, options);
      precond_ = make_preconditioner<double>(setup.precond, Device::gpu, 1);
      precond_->analyze(block.local);
    }
    connect_transport();
    name_ = (local_ ? local_->name() : std::string("(no rows)")) +
            " local block + csr halo kernel, " + transport_->name() +
            (shared_gpu ? " (ranks share a GPU)" : "");
  }

  ~CudaRankOps() override {
    // Frees go back to the pool in the shared stream's order; the exchange stream may not have
    // finished with the halo buffers yet.
    if (comm_stream_) (void)cudaStreamSynchronize(comm_stream_);
    for (void* p :
         {(void*)send_rows_, (void*)packed_, (void*)halo_, (void*)halo_rows_, (void*)halo_row_ptr_,
          (void*)halo_col_, (void*)halo_val_, (void*)partial_, (void*)sums_})
      cuda::device_free(p);
  }

  std::string name() const { return name_; }
  std::size_t local_rows() const override { return n_; }
  double* allocate() override {
    auto* p = static_cast<double*>(
        cuda::device_allocate(std::max<std::size_t>(n_, 1) * sizeof(double), "vector"));
    CGS_CUDA_CHECK(cudaMemsetAsync(p, 0, std::max<std::size_t>(n_, 1) * sizeof(double), stream()));
    return p;
  }
  void release(double* v) override { cuda::device_free(v); }
  void upload(const std::vector<double>& host, double* v) override {
    CGS_CUDA_CHECK(cudaStreamSynchronize(stream()));
    if (n_) cuda::copy_to_device(v, host.data(), n_ * sizeof(double));
  }
  std::vector<double> download(const double* v) override {
    CGS_CUDA_CHECK(cudaStreamSynchronize(stream()));
    std::vector<double> host(n_);
    if (n_) cuda::copy_to_host(host.data(), v, n_ * sizeof(double));
    return host;
  }
  void copy(const double* src, double* dst) override {
    if (n_)
      CGS_CUDA_CHECK(
          cudaMemcpyAsync(dst, src, n_ * sizeof(double), cudaMemcpyDeviceToDevice, stream()));
  }

  void multiply(const double* x, double* y) override {
    harvest_product_times();
    ++times_.products;
    CGS_CUDA_CHECK(cudaEventRecord(start_, stream()));
    if (send_count_ > 0)
      pack_kernel<<<blocks_for(send_count_), kBlock, 0, stream()>>>(std::int64_t(send_count_),
                                                                    send_rows_, x, packed_);
    CGS_CUDA_CHECK(cudaEventRecord(packed_ready_, stream()));
    if (local_) local_->apply(x, y);  // queued before the exchange: it runs while the halo moves
    CGS_CUDA_CHECK(cudaEventRecord(local_done_, stream()));
    CGS_CUDA_CHECK(cudaStreamWaitEvent(comm_stream_, packed_ready_, 0));
    CGS_CUDA_CHECK(cudaEventRecord(exchange_start_, comm_stream_));
    transport_->exchange(receives_, halo_, sends_, send_offsets_, packed_, comm_stream_);
    CGS_CUDA_CHECK(cudaEventRecord(halo_ready_, comm_stream_));
    CGS_CUDA_CHECK(cudaStreamWaitEvent(stream(), halo_ready_, 0));
    CGS_CUDA_CHECK(cudaEventRecord(halo_waited_, stream()));
    if (halo_nnz_ > 0)
      halo_spmv_kernel<<<blocks_for(halo_row_count_), kBlock, 0, stream()>>>(
          halo_row_count_, halo_rows_, halo_row_ptr_, halo_col_, halo_val_, halo_, y);
    CGS_CUDA_CHECK(cudaEventRecord(done_, stream()));
    product_pending_ = true;  // its times are read at the next wait for the GPU (dots())
    times_.halo_bytes_received += halo_size_ * sizeof(double);
    times_.halo_bytes_sent += send_count_ * sizeof(double);
  }

  // The split of the last product's time, once its events have happened: read at the host's
  // next wait (dots()), so timing costs no extra synchronisation; a second product before that
  // (single-reduction's replacements) waits for the first.
  void harvest_product_times() const {
    if (!product_pending_) return;
    CGS_CUDA_CHECK(cudaEventSynchronize(done_));
    times_.local_spmv += elapsed(start_, local_done_);
    times_.halo_wait += elapsed(local_done_, halo_waited_);
    times_.halo_spmv += elapsed(halo_waited_, done_);
    times_.halo_exchange += elapsed(exchange_start_, halo_ready_);
    product_pending_ = false;
  }

  bool identity_preconditioner() const override { return identity_; }
  void precondition(const double* r, double* z) override {
    if (n_ == 0) return;
    if (!precond_->pointwise()) {
      precond_->apply(r, z);
      return;
    }
    pointwise_kernel<<<blocks_for(n_), kBlock, 0, stream()>>>(std::int64_t(n_),
                                                              precond_->diagonal(), r, z);
  }
  void residual(const double* b, const double* Ax, double* r) override {
    if (n_) residual_kernel<<<blocks_for(n_), kBlock, 0, stream()>>>(std::int64_t(n_), b, Ax, r);
  }
  void update_xr(double alpha, const double* p, const double* q, double* x, double* r) override {
    if (n_)
      update_xr_kernel<<<blocks_for(n_), kBlock, 0, stream()>>>(std::int64_t(n_), alpha, p, q, x,
                                                                r);
  }
  void update_p(double beta, const double* z, double* p) override {
    if (n_) update_p_kernel<<<blocks_for(n_), kBlock, 0, stream()>>>(std::int64_t(n_), beta, z, p);
  }

  void dots(const DotPair* pairs, int count, double* sums) override {
    if (count > kMaxDots) throw std::logic_error("CudaRankOps::dots: too many at once");
    ++times_.reductions;
    DotArgs args{};
    for (int d = 0; d < count; ++d) args.a[d] = pairs[d].a, args.b[d] = pairs[d].b;
    dot_partial_kernel<<<kDotBlocks, kBlock, 0, stream()>>>(std::int64_t(n_), args, count,
                                                            partial_);
    reduce_partials(count, sums);
  }

  void update_xr_precondition_dots(double alpha, const double* p, const double* q, double* x,
                                   double* r, double* z, double* sums) override {
    if (z != r && precond_ && !precond_->pointwise()) {  // one with a program of its own
      RankOps::update_xr_precondition_dots(alpha, p, q, x, r, z, sums);
      return;
    }
    ++times_.reductions;
    const double* d = z != r && precond_ ? precond_->diagonal() : nullptr;
    update_xr_precondition_dots_kernel<<<kDotBlocks, kBlock, 0, stream()>>>(
        std::int64_t(n_), alpha, p, q, x, r, d, z, partial_);
    reduce_partials(2, sums);
  }

  RankTimes times() const override {
    CGS_CUDA_CHECK(cudaStreamSynchronize(stream()));
    harvest_product_times();
    return times_;
  }
  void clear_times() override {
    harvest_product_times();
    times_ = RankTimes{};
  }

 private:
  // NCCL connects two peers at their first send/receive and sets up its rings at the first
  // collective: tens to hundreds of milliseconds, which the first iterations would otherwise pay
  // (measured: 0.2 s over a 345-iteration solve on two GPUs, 0.6 ms an exchange on average).
  // One exchange and one allreduce here put that cost in the set-up, where it belongs.
  void connect_transport() {
    CGS_CUDA_CHECK(cudaMemsetAsync(sums_, 0, kMaxDots * sizeof(double), stream()));
    if (send_count_ > 0)
      CGS_CUDA_CHECK(cudaMemsetAsync(packed_, 0, send_count_ * sizeof(double), stream()));
    CGS_CUDA_CHECK(cudaStreamSynchronize(stream()));
    transport_->exchange(receives_, halo_, sends_, send_offsets_, packed_, comm_stream_);
    CGS_CUDA_CHECK(cudaStreamSynchronize(comm_stream_));
    transport_->allreduce(sums_, kMaxDots, stream());
    CGS_CUDA_CHECK(cudaStreamSynchronize(stream()));
  }

  // sums[0..count) = the partial sums of the dots, summed on this GPU and then over the ranks.
  void reduce_partials(int count, double* sums) {
    dot_final_kernel<<<count, kBlock, 0, stream()>>>(partial_, sums_);
    CGS_CUDA_CHECK(cudaEventRecord(reduce_start_, stream()));
    transport_->allreduce(sums_, count, stream());
    CGS_CUDA_CHECK(cudaEventRecord(reduce_done_, stream()));
    CGS_CUDA_CHECK(
        cudaMemcpyAsync(sums, sums_, count * sizeof(double), cudaMemcpyDeviceToHost, stream()));
    CGS_CUDA_CHECK(cudaStreamSynchronize(stream()));
    times_.allreduce += elapsed(reduce_start_, reduce_done_);
    harvest_product_times();
  }

  static double elapsed(cudaEvent_t a, cudaEvent_t b) {
    float ms = 0;
    CGS_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    return ms * 1e-3;
  }

  std::size_t n_;
  bool identity_;
  std::unique_ptr<Transport> transport_;
  std::vector<HaloReceive> receives_;
  std::vector<HaloSend> sends_;
  std::vector<std::size_t> send_offsets_;
  std::size_t send_count_ = 0, halo_size_ = 0;
  index_t* send_rows_ = nullptr;
  double* packed_ = nullptr;
  double* halo_ = nullptr;
  std::int64_t halo_row_count_ = 0, halo_nnz_ = 0;
  index_t* halo_rows_ = nullptr;
  index_t* halo_row_ptr_ = nullptr;
  index_t* halo_col_ = nullptr;
  double* halo_val_ = nullptr;
  double* partial_ = nullptr;
  double* sums_ = nullptr;
  cudaStream_t comm_stream_ = nullptr;
  cudaEvent_t packed_ready_, exchange_start_, halo_ready_, start_, local_done_, halo_waited_, done_,
      reduce_start_, reduce_done_;
  std::unique_ptr<SpmvBackend<double>> local_;
  std::unique_ptr<Preconditioner<double>> precond_;
  std::string name_;
  mutable RankTimes times_;
  mutable bool product_pending_ = false;
};

}  // namespace

RankGpu bind_rank_gpu(MPI_Comm comm) {
  static const RankGpu bound = select_device(comm);
  return bound;
}

std::unique_ptr<RankOps> make_cuda_rank_ops(MPI_Comm comm, const RankBlock& block,
                                            const RowBlocks& blocks, const RankSetup& setup) {
  return std::make_unique<CudaRankOps>(comm, block, blocks, setup);
}

std::string gpu_rank_ops_name(const RankOps& ops) {
  const auto* gpu = dynamic_cast<const CudaRankOps*>(&ops);
  return gpu ? gpu->name() : "(not a GPU rank)";
}

}  // namespace cgs::dist
