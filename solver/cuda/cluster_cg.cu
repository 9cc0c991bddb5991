// The cluster-resident CG loop's host side (see cluster_cg.hpp): which kernel, which layout,
// whether a system fits, the launch and the results. The kernels: cluster_cg_kernel.cuh (two
// passes an iteration, the default) and one_reduction_cg_kernel.cuh (opt-in).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "base/tuning.hpp"
#include "solver/cg_result.hpp"
#include "solver/cg_step.hpp"
#include "solver/cuda/cluster_cg.hpp"
#include "solver/cuda/cluster_cg_kernel.cuh"
#include "solver/cuda/cluster_common.cuh"
#include "solver/cuda/one_reduction_cg_kernel.cuh"
#include "spmv/cuda/cuda_common.cuh"

namespace cgs {
namespace cluster {

using cuda::DeviceArray;
using cuda::stream;

inline std::size_t aligned16(std::size_t bytes) { return (bytes + 15) / 16 * 16; }

// The shared bytes of `entries` sliced entries in `slices` slices.
template <typename T>
std::size_t matrix_bytes(index_t slices, index_t entries) {
  return aligned16(sizeof(T) * std::size_t(entries)) +
         aligned16(sizeof(index_t) * std::size_t(entries)) +
         aligned16(sizeof(index_t) * (std::size_t(slices) + 1)) +
         aligned16(sizeof(index_t) * std::size_t(slices));
}

// The vectors first (with a program: its work vectors instead of d, then its operations, its
// index and value buffers and the matrix, each where it fits in `room`: latency-bound triangular
// levels gain more from shared memory than the one SpMV pass an iteration), then the matrix.
template <typename T>
Layout layout_of(index_t rows, index_t entries, bool shared_matrix,
                 const ClusterProgramShape* program = nullptr, std::size_t room = 0,
                 bool lean = false, bool one_reduction = false) {
  Layout l;
  l.rows = rows;
  l.lean = lean && !program;
  l.one_reduction = one_reduction && !program && !l.lean;
  l.slices = (rows + kSlice - 1) / kSlice;
  l.entries = entries;
  std::size_t at = 0;
  auto take = [&](std::size_t bytes) {
    const std::size_t start = at;
    at += aligned16(bytes);
    return start;
  };
  const std::size_t vector = sizeof(T) * std::size_t(rows);
  if (l.one_reduction) {
    l.stride = index_t(aligned16(vector) / sizeof(T));
    l.r = take(8 * aligned16(vector));  // the two sets: r, w, s, d each
    l.p0 = take(vector);
    l.x = take(vector);
  } else {
    for (std::size_t* v : {&l.z, &l.p0, &l.p1, &l.r, &l.q})
      *v = take(l.lean && v == &l.r ? 0 : vector);
    // With a program, x stays in global memory (pass A only updates it in place, row by row) and
    // there is no d: room for the program's arrays. The lean layout reads x and d there too.
    l.x = take(program || l.lean ? 0 : vector);
    l.d = take(program || l.lean ? 0 : vector);
    if (program) {
      l.works = int(std::min<std::size_t>(program->work.size(), kMaxWork));
      for (int i = 0; i < l.works; ++i) l.work[i] = take(sizeof(T) * program->work[i]);
      auto stage = [&](std::size_t bytes, std::size_t& at_out, std::size_t& bytes_out, bool& in) {
        bytes_out = bytes;
        in = bytes > 0 && at + aligned16(bytes) <= room;
        if (in) at_out = take(bytes);
      };
      stage(program->op_bytes, l.ops, l.op_bytes, l.ops_shared);
      stage(program->index_bytes, l.index, l.index_bytes, l.index_shared);
      stage(program->value_bytes, l.value, l.value_bytes, l.value_shared);
      shared_matrix = at + matrix_bytes<T>(l.slices, entries) <= room;
    }
  }
  l.shared_matrix = shared_matrix;
  const std::size_t stored = shared_matrix ? std::size_t(entries) : 0;
  const std::size_t slices = shared_matrix ? std::size_t(l.slices) : 0;
  l.values = take(sizeof(T) * stored);
  l.cols = take(sizeof(index_t) * stored);
  l.slice_ptr = take(sizeof(index_t) * (slices + (shared_matrix ? 1 : 0)));
  l.width = take(sizeof(index_t) * slices);
  l.bytes = at;
  return l;
}

// Tuning::cluster_phases: where an iteration's time goes, as block 0's thread 0 saw it (a
// diagnostic: its clock reads and shared-memory sums lengthen that thread's chain a little).
bool trace_phases() { return tuning().cluster_phases; }  // read at each solve

// Per iteration: each phase's cycles and microseconds (at the launch's own clock rate) to stderr.
void print_phases(const long long* clocks, long long iterations, const char* const* names,
                  int phases) {
  if (iterations <= 0 || clocks[0] <= 0) return;
  const double us_per_cycle = double(clocks[1]) * 1e-3 / double(clocks[0]);
  long long traced = 0;
  for (int i = 0; i < phases; ++i) traced += clocks[2 + i];
  std::fprintf(stderr, "cluster phases (block 0, thread 0; per iteration, %lld iterations):\n",
               iterations);
  for (int i = 0; i < phases; ++i)
    std::fprintf(stderr, "  %-44s %8.0f cycles %7.3f us\n", names[i],
                 double(clocks[2 + i]) / double(iterations),
                 double(clocks[2 + i]) * us_per_cycle / double(iterations));
  std::fprintf(stderr, "  %-44s %8.0f cycles %7.3f us\n", "all phases",
               double(traced) / double(iterations),
               double(traced) * us_per_cycle / double(iterations));
}

// The launch configuration of `blocks` per cluster and `count` clusters.
struct Launch {
  cudaLaunchConfig_t config{};
  cudaLaunchAttribute attribute[1]{};
  Launch(int blocks, int count, std::size_t bytes, int threads) {
    config.gridDim = dim3(unsigned(blocks) * unsigned(count));
    config.blockDim = dim3(unsigned(threads));
    config.dynamicSmemBytes = bytes;
    config.stream = stream();
    attribute[0].id = cudaLaunchAttributeClusterDimension;
    attribute[0].val.clusterDim.x = unsigned(blocks);
    attribute[0].val.clusterDim.y = 1;
    attribute[0].val.clusterDim.z = 1;
    config.attrs = attribute;
    config.numAttrs = 1;
  }
};

template <typename T>
using KernelFunction = void (*)(Args<T>);

// The kernel instance a launch runs: a program's; else the pointwise one of the iteration
// (one reduction or two passes), the block size (kSingleThreads or kThreads) and the trace.
template <typename T>
KernelFunction<T> kernel_of(bool program, bool one_reduction, int threads, bool traced) {
  if (program) return cluster_cg_kernel<T, true>;
  const bool single = threads == kSingleThreads;
  if (one_reduction) {
    if (single)
      return traced ? one_reduction_cg_kernel<T, true, kSingleThreads>
                    : one_reduction_cg_kernel<T, false, kSingleThreads>;
    return traced ? one_reduction_cg_kernel<T, true> : one_reduction_cg_kernel<T, false>;
  }
  if (single)
    return traced ? cluster_cg_kernel<T, false, true, kSingleThreads>
                  : cluster_cg_kernel<T, false, false, kSingleThreads>;
  return traced ? cluster_cg_kernel<T, false, true> : cluster_cg_kernel<T, false, false>;
}

// Lets every instance kernel_of can return take `bytes` of dynamic shared memory and clusters
// past the portable 8 blocks.
template <typename T>
void allow_large_clusters(std::size_t bytes) {
  const void* done[16];
  int count = 0;
  for (bool program : {false, true})
    for (bool one_reduction : {false, true})
      for (int threads : {kThreads, kSingleThreads})
        for (bool traced : {false, true}) {
          const auto* kernel =
              reinterpret_cast<const void*>(kernel_of<T>(program, one_reduction, threads, traced));
          if (std::find(done, done + count, kernel) != done + count) continue;  // the program's
          done[count++] = kernel;
          CGS_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              int(bytes)));
          CGS_CUDA_CHECK(
              cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
        }
}

// How many clusters of this shape the device holds at once (0: it cannot launch one).
template <typename T>
int active_clusters(int blocks, std::size_t bytes, int threads, bool program = false,
                    bool one_reduction = false) {
  allow_large_clusters<T>(bytes);
  Launch launch(blocks, 1, bytes, threads);
  int clusters = 0;
  const void* kernel =
      reinterpret_cast<const void*>(kernel_of<T>(program, one_reduction, threads, false));
  const cudaError_t status = cudaOccupancyMaxActiveClusters(&clusters, kernel, &launch.config);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return clusters;
}

// The sliced rows (see kSlice) of n rows in `blocks` blocks of `rows` rows each: per slice its
// first entry and width; per entry its recoded column and its index in A's values (-1: padding,
// which names the block's first row with the value 0). col_idx null: the sizes only.
struct Slices {
  std::vector<index_t> ptr, width, cols, source;
  index_t max_block_entries = 0;
};

inline Slices slice_rows(index_t n, const index_t* row_ptr, const index_t* col_idx, index_t rows,
                         int blocks) {
  Slices s;
  const index_t per_block = (rows + kSlice - 1) / kSlice;
  index_t at = 0;
  for (int b = 0; b < blocks; ++b) {
    const index_t first = std::min<index_t>(n, index_t(b) * rows);
    const index_t end = std::min<index_t>(n, first + rows), block_begin = at;
    for (index_t slice = 0; slice < per_block; ++slice) {
      const index_t r0 = first + slice * kSlice;
      index_t width = 0;
      for (index_t row = r0; row < std::min(end, r0 + kSlice); ++row)
        width = std::max(width, row_ptr[row + 1] - row_ptr[row]);
      s.ptr.push_back(at);
      s.width.push_back(width);
      for (index_t j = 0; col_idx && j < width; ++j)
        for (index_t lane = 0; lane < kSlice; ++lane) {
          const index_t row = r0 + lane;
          const bool real = row < end && j < row_ptr[row + 1] - row_ptr[row];
          const index_t col = real ? col_idx[row_ptr[row] + j] : index_t(b) * rows;
          const index_t owner = col / rows;
          s.cols.push_back((owner << kLocalBits) | (col - owner * rows));
          s.source.push_back(real ? row_ptr[row] + j : -1);
        }
      at += width * kSlice;
    }
    s.max_block_entries = std::max(s.max_block_entries, at - block_begin);
  }
  s.ptr.push_back(at);
  return s;
}

// Rows per block and the fullest block's sliced entries for `blocks` blocks.
inline std::pair<index_t, index_t> split(index_t n, const index_t* row_ptr, int blocks) {
  const index_t rows = (n + blocks - 1) / blocks;
  return {rows, slice_rows(n, row_ptr, nullptr, rows, blocks).max_block_entries};
}

// The dynamic shared memory one block may take beside the kernel's static shared memory (the
// Reduction, the CG state and its flag, a program's slot table and sweeps; 64 bytes of slack).
std::size_t shared_room() {
  int max_bytes = 0;
  CGS_CUDA_CHECK(cudaDeviceGetAttribute(&max_bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                        cuda::cuda_context().device));
  return std::size_t(max_bytes) - sizeof(Reduction) - sizeof(cg::State) - sizeof(int) -
         sizeof(void*) * kMaxSlots - sizeof(Sweeps) - 64;
}

// One block with a program: its vectors and work vectors must fit; the rest goes where it fits.
template <typename T>
ClusterFit program_fit(index_t n, const index_t* row_ptr, const ClusterProgramShape& program) {
  ClusterFit fit;
  fit.program = true;
  fit.threads = kThreads;  // the program's operations are laid out for kThreads
  const std::size_t room = shared_room();
  const auto [rows, nnz] = split(n, row_ptr, 1);
  const Layout l = layout_of<T>(rows, nnz, true, &program, room);
  char text[300];
  if (program.work.size() > std::size_t(kMaxWork)) {
    std::snprintf(text, sizeof text, "the program has %zu work vectors; one block holds %d",
                  program.work.size(), kMaxWork);
  } else if (l.bytes > room || active_clusters<T>(1, l.bytes, kThreads, true) < 1) {
    const std::size_t vectors = layout_of<T>(rows, nnz, true, &program, 0).bytes;  // nothing staged
    std::snprintf(text, sizeof text,
                  "n = %lld: the CG and program vectors need %zu KB of shared memory in one block "
                  "(a program runs in one block); a block has %zu KB",
                  (long long)n, vectors / 1024, room / 1024);
  } else {
    fit.fits = true;
    fit.blocks = 1;
    fit.bytes = l.bytes;
    fit.matrix_in_shared = l.shared_matrix;
    fit.program_in_shared = l.ops_shared && l.index_shared && l.value_shared;
    std::snprintf(text, sizeof text,
                  "n = %lld in one block (a program's operations meet at block barriers), %zu KB "
                  "of shared memory: vectors%s%s",
                  (long long)n, l.bytes / 1024, fit.program_in_shared ? ", the program" : "",
                  l.shared_matrix ? ", the matrix" : " (the matrix read from L2)");
  }
  fit.reason = text;
  return fit;
}

// The measurement switches (base/tuning.hpp, docs/tuning.md), read where a loop is fitted or
// built. Tuning::cluster_lean off keeps a batch's vectors all in shared memory; cluster_reductions
// 1 runs one system in double by the one-reduction iteration where its vectors fit (see
// one_reduction_cg_kernel.cuh), else the two passes.
bool lean_asked() { return tuning().cluster_lean; }
bool one_reduction_asked() { return tuning().cluster_reductions == 1; }

// Tuning::cluster_threads 512 or 1024 sets the threads of a pointwise loop's blocks (the kernels
// are instantiated for these two); otherwise `chosen`.
int threads_asked(int chosen) {
  const int asked = tuning().cluster_threads;
  return asked == kSingleThreads || asked == kThreads ? asked : chosen;
}

// Tuning::cluster_sweeps off runs a program's triangular levels one by one between barriers
// (the same bits; benchmarks compare the two).
bool sweeps_asked() { return tuning().cluster_sweeps; }

}  // namespace cluster

template <typename T>
ClusterFit cluster_fit(index_t n, const index_t* row_ptr, int blocks, bool batch,
                       const ClusterProgramShape* program) {
  using namespace cluster;
  ClusterFit fit;
  fit.matrix_in_shared = !batch;
  if (n <= 0) {
    fit.reason = "the cluster loop needs a non-empty system";
    return fit;
  }
  if (program && batch) {
    fit.reason = "the cluster loop runs a program for one system, not a batch";
    return fit;
  }
  if (blocks == 0) blocks = tuning().cluster_blocks;
  int major = 0;
  CGS_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor,
                                        cuda::cuda_context().device));
  if (major < 9) {
    fit.reason = "thread-block clusters need compute capability 9.0 (Hopper) or later";
    return fit;
  }
  if (program) return program_fit<T>(n, row_ptr, *program);
  const std::size_t room = shared_room();
  // One system: the most blocks (16, else 8, ...): measured (BENCHMARKS §13), every
  // system was fastest in 16 blocks, even Exnet's 1,891 rows (6.45 us an iteration; 8.16 in one
  // block, 7.60 in the persistent loop). A batch: the fewest blocks that hold a system's vectors,
  // so that the most clusters run at once; where the lean layout (x, d, r in global memory, L2)
  // halves them, the lean one: BWSN_Network_2's 12,523 rows take 2 blocks instead of 4, so 64
  // systems run in one wave of a 132-SM GPU instead of two.
  const int single_order[] = {16, 8, 4, 2, 1}, batch_order[] = {1, 2, 4, 8, 16};
  const int threads = threads_asked(batch ? kThreads : kSingleThreads);
  fit.threads = threads;
  for (int b : batch ? batch_order : single_order) {
    if (blocks > 0 && b != blocks) continue;
    const auto [rows, nnz] = split(n, row_ptr, b);
    // One system in double, asked for: the one-reduction iteration where its vectors fit.
    for (const int kind : {0, 1, 2}) {  // one reduction; two passes; two passes, lean
      const bool one_reduction = kind == 0, lean = kind == 2;
      if (one_reduction && (batch || sizeof(T) != 8 || !one_reduction_asked())) continue;
      if (lean && (!batch || !lean_asked())) continue;
      const Layout l = layout_of<T>(rows, nnz, !batch, nullptr, 0, lean, one_reduction);
      if (l.bytes > room || rows > kLocalMask ||
          active_clusters<T>(b, l.bytes, threads, false, one_reduction) < 1)
        continue;
      fit.fits = true;
      fit.blocks = b;
      fit.bytes = l.bytes;
      fit.lean = lean;
      fit.one_reduction = one_reduction;
      break;
    }
    if (fit.fits) break;
  }
  char text[220];
  if (fit.fits) {
    std::snprintf(text, sizeof text,
                  "n = %lld in one cluster of %d blocks of %d threads, %zu KB of shared memory "
                  "each%s",
                  (long long)n, fit.blocks, fit.threads, fit.bytes / 1024,
                  fit.one_reduction ? ", one reduction and one cluster barrier an iteration"
                  : !batch          ? ", two passes an iteration"
                  : fit.lean        ? " (z, p and q; x, d, r and the matrix read from L2)"
                                    : " (vectors; the matrix read from L2)");
  } else {
    const int b = blocks > 0 ? blocks : kMaxBlocks;
    const auto [rows, nnz] = split(n, row_ptr, b);
    std::snprintf(text, sizeof text,
                  "n = %lld, %lld entries need %zu KB of shared memory per block in a cluster of "
                  "%d; a block has %zu KB",
                  (long long)n, (long long)row_ptr[n], layout_of<T>(rows, nnz, !batch).bytes / 1024,
                  b, room / 1024);
  }
  fit.reason = text;
  return fit;
}

namespace cluster {

template <typename T>
class ClusterCgImpl final : public ClusterCg<T> {
 public:
  ClusterCgImpl(const CsrView<T>& A, index_t n, const T* d, const ClusterFit& fit,
                const std::vector<index_t>& row_ptr,
                const precond::DeviceProgramView<T>* program = nullptr,
                const ClusterProgramShape* shape = nullptr)
      : A_(A),
        n_(n),
        nnz_(row_ptr[std::size_t(n)]),
        d_(d),
        fit_(fit),
        clocks_(2 + kPhases, "cluster CG clocks") {
    const auto [rows, entries] = split(n, row_ptr.data(), fit.blocks);
    layout_ = program ? layout_of<T>(rows, entries, true, shape, shared_room())
                      : layout_of<T>(rows, entries, fit.matrix_in_shared, nullptr, 0, fit.lean,
                                     fit.one_reduction);
    if (program) place_program(*program);
    std::vector<index_t> col_idx(static_cast<std::size_t>(nnz_));
    cuda::copy_to_host(col_idx.data(), A_.col_idx, col_idx.size() * sizeof(index_t));
    const Slices slices = slice_rows(n, row_ptr.data(), col_idx.data(), rows, fit.blocks);
    entries_ = slices.ptr.back();
    slice_ptr_ = DeviceArray<index_t>(slices.ptr, "cluster CG slices");
    width_ = DeviceArray<index_t>(slices.width, "cluster CG slice widths");
    cols_ = DeviceArray<index_t>(slices.cols.empty() ? std::vector<index_t>{0} : slices.cols,
                                 "cluster CG columns");
    source_ = DeviceArray<index_t>(slices.source.empty() ? std::vector<index_t>{-1} : slices.source,
                                   "cluster CG value sources");
    allow_large_clusters<T>(layout_.bytes);
    CGS_CUDA_CHECK(cudaEventCreate(&begin_));
    CGS_CUDA_CHECK(cudaEventCreate(&end_));
  }
  ~ClusterCgImpl() override {
    (void)cudaEventDestroy(begin_);
    (void)cudaEventDestroy(end_);
  }

  const ClusterFit& fit() const override { return fit_; }

  CgResult solve(const T* b, T* x, const CgOptions& options) override {
    return solve_batch(b, x, 1, nullptr, nullptr, options).front();
  }

  std::vector<CgResult> solve_batch(const T* b, T* x, int count, const T* values, const T* d,
                                    const CgOptions& options) override {
    if (count < 1) return {};
    if (op_count_ > 0 && count > 1)
      throw DeviceError("the cluster CG loop runs a program for one system at a time");
    Args<T> a = args(b, x, count, values, d, options);
    Launch launch(fit_.blocks, count, layout_.bytes, fit_.threads);
    allow_large_clusters<T>(layout_.bytes);  // this loop's bytes: another loop may have set less
    CGS_CUDA_CHECK(cudaEventRecord(begin_, stream()));
    CGS_CUDA_CHECK(cudaLaunchKernelEx(
        &launch.config,
        kernel_of<T>(op_count_ > 0, layout_.one_reduction, fit_.threads, a.trace_phases), a));
    CGS_CUDA_CHECK(cudaEventRecord(end_, stream()));
    cuda::synchronize();
    return results(count, x, options);
  }

 private:
  // The program's operations as the kernel reads them: a pointer into a buffer the layout
  // copies to shared memory becomes its tagged shared offset (see untag).
  void place_program(const precond::DeviceProgramView<T>& program) {
    std::vector<precond::Op<T>> ops = program.host_ops;
    const auto* index = static_cast<const unsigned char*>(program.index_data);
    const auto* value = static_cast<const unsigned char*>(program.value_data);
    auto tag = [&](auto*& p) {
      if (!p) return;
      const auto* at = reinterpret_cast<const unsigned char*>(p);
      std::size_t offset = 0;
      if (layout_.index_shared && at >= index && at < index + program.index_bytes)
        offset = layout_.index + std::size_t(at - index);
      else if (layout_.value_shared && at >= value && at < value + program.value_bytes)
        offset = layout_.value + std::size_t(at - value);
      else
        return;
      p = reinterpret_cast<std::remove_reference_t<decltype(p)>>((offset << 1) | 1);
    };
    for (precond::Op<T>& op : ops) {
      tag(op.rows);
      tag(op.row_ptr);
      tag(op.col_idx);
      tag(op.values);
      tag(op.d);
      tag(op.blocks);
    }
    ops_ = DeviceArray<precond::Op<T>>(ops, "cluster CG program operations");
    ops_scratch_ = DeviceArray<precond::Op<T>>(ops.size(), "cluster CG program operations");
    op_count_ = int(ops.size());
    index_buffer_ = index;
    value_buffer_ = value;
  }

  Args<T> args(const T* b, T* x, int count, const T* values, const T* d, const CgOptions& o) {
    if (std::size_t(count) > out_.size()) out_ = DeviceArray<cg::State>(count, "cluster CG states");
    const std::size_t r_entries = layout_.lean ? std::size_t(count) * std::size_t(n_) : 0;
    if (r_entries > r_lean_.size()) r_lean_ = DeviceArray<T>(r_entries, "cluster CG residuals");
    history_capacity_ = o.record_history ? o.max_iters + 1 : 0;
    if (std::size_t(history_capacity_) > history_.size())
      history_ = DeviceArray<double>(history_capacity_, "cluster CG history");
    spmv_capacity_ = o.time_spmv ? std::min<long long>(o.max_iters, 1 << 20) : 0;
    if (std::size_t(spmv_capacity_) > spmv_.size())
      spmv_ = DeviceArray<double>(spmv_capacity_, "cluster CG SpMV times");
    Args<T> a{};
    a.n = n_;
    a.ops = ops_.data();
    a.ops_scratch = ops_scratch_.data();
    a.op_count = op_count_;
    a.index_buffer = index_buffer_;
    a.value_buffer = value_buffer_;
    a.sweeps = sweeps_;
    a.slice_ptr = slice_ptr_.data();
    a.width = width_.data();
    a.cols = cols_.data();
    a.values = sliced_values(values, count);
    a.values_stride = values ? (long long)entries_ : 0;
    a.d = d ? d : d_;
    a.d_stride = d ? n_ : 0;
    a.b = b;
    a.x = x;
    a.r_lean = r_lean_.data();
    a.layout = layout_;
    a.tol = o.tol;
    a.atol = o.atol;
    a.max_iters = o.max_iters;
    a.out = out_.data();
    a.history = history_.data();
    a.history_capacity = history_capacity_;
    a.spmv = spmv_.data();
    a.spmv_capacity = spmv_capacity_;
    a.spmv_every = spmv_capacity_ > 0
                       ? std::max<long long>(1, (o.max_iters + spmv_capacity_ - 1) / spmv_capacity_)
                       : 1;
    spmv_every_ = a.spmv_every;
    a.time_spmv = o.time_spmv;
    a.clocks = clocks_.data();
    a.trace_phases = trace_phases() && op_count_ == 0;  // the pointwise kernel's trace only
    a.replacement_slack = tuning().cluster_replacement_slack;
    return a;
  }

  // The values (A's, or `count` systems' own) in the sliced order, gathered at every solve
  // (set_values may have changed them).
  const T* sliced_values(const T* values, int count) {
    const int systems = values ? count : 1;
    const std::size_t size = std::max<std::size_t>(1, std::size_t(entries_) * std::size_t(systems));
    if (size > sliced_.size()) sliced_ = DeviceArray<T>(size, "cluster CG sliced values");
    const long long total = (long long)entries_ * systems;
    if (total > 0) {
      const int grid = int(std::min<long long>((total + 255) / 256, 4096));
      gather_values<T><<<grid, 256, 0, stream()>>>(sliced_.data(), values ? values : A_.values,
                                                   source_.data(), entries_, values ? nnz_ : 0,
                                                   systems);
      CGS_CHECK_LAUNCH();
    }
    return sliced_.data();
  }

  std::vector<CgResult> results(int count, T* x, const CgOptions& o) {
    std::vector<cg::State> states(count);
    cuda::copy_to_host(states.data(), out_.data(), sizeof(cg::State) * std::size_t(count));
    float ms = 0;
    CGS_CUDA_CHECK(cudaEventElapsedTime(&ms, begin_, end_));
    std::vector<CgResult> out;
    for (int i = 0; i < count; ++i) {
      CgResult r = result_of(states[i]);
      r.solve_seconds = ms * 1e-3;
      if (states[i].zero_rhs)
        CGS_CUDA_CHECK(cudaMemsetAsync(x + std::size_t(i) * n_, 0, n_ * sizeof(T), stream()));
      out.push_back(std::move(r));
    }
    cuda::synchronize();
    CgResult& first = out.front();
    const long long iterations = states[0].iterations;
    if (o.record_history && history_capacity_ > 0) {
      std::vector<double> rr(std::size_t(std::min(iterations + 1, history_capacity_)));
      cuda::copy_to_host(rr.data(), history_.data(), rr.size() * sizeof(double));
      set_history(first, rr);
    }
    const long long samples =
        std::min(spmv_capacity_, (iterations + spmv_every_ - 1) / spmv_every_);
    if (o.time_spmv && samples > 0 && !states[0].zero_rhs) {
      long long clocks[2 + kPhases];
      cuda::copy_to_host(clocks, clocks_.data(), sizeof clocks);
      if (trace_phases() && op_count_ == 0) {
        if (layout_.one_reduction) {
          print_phases(clocks, iterations, kOnePhaseNames, kOnePhases);
          std::fprintf(stderr,
                       "  passes that formed p and A p: %lld; restarts from b - A x: %lld\n",
                       clocks[2 + kOnePhases], clocks[3 + kOnePhases]);
        } else
          print_phases(clocks, iterations, kPhaseNames, kPhases);
      }
      std::vector<double> ticks(static_cast<std::size_t>(samples));
      cuda::copy_to_host(ticks.data(), spmv_.data(), ticks.size() * sizeof(double));
      const double seconds_per_cycle =
          clocks[0] > 0 ? double(clocks[1]) * 1e-9 / double(clocks[0]) : 0;
      for (double& t : ticks) t *= seconds_per_cycle;
      first.spmv.samples = std::move(ticks);
      first.spmv.every = int(spmv_every_);
      first.spmv.what = layout_.one_reduction
                            ? "the iteration's one pass (SpMV w = A u, the updates fused in)"
                            : "SpMV pass (p and x updates fused in)";
    }
    return out;
  }

  CsrView<T> A_;
  index_t n_, nnz_;
  const T* d_;
  ClusterFit fit_;
  Layout layout_;
  index_t entries_ = 0;
  DeviceArray<index_t> slice_ptr_, width_, cols_, source_;
  DeviceArray<T> sliced_;
  DeviceArray<cg::State> out_;
  DeviceArray<T> r_lean_;  // the lean layout's r, count x n
  DeviceArray<double> history_, spmv_;
  DeviceArray<long long> clocks_;
  DeviceArray<precond::Op<T>> ops_, ops_scratch_;
  int op_count_ = 0;
  const unsigned char* index_buffer_ = nullptr;
  const unsigned char* value_buffer_ = nullptr;
  bool sweeps_ = sweeps_asked();
  long long history_capacity_ = 0, spmv_capacity_ = 0, spmv_every_ = 1;
  cudaEvent_t begin_ = nullptr, end_ = nullptr;
};

}  // namespace cluster

template <typename T>
std::unique_ptr<ClusterCg<T>> make_cluster_cg(const CsrView<T>& A, index_t n, const T* d,
                                              int blocks, bool batch,
                                              const precond::DeviceProgramView<T>* program) {
  std::vector<index_t> row_ptr(std::size_t(n) + 1);
  cuda::copy_to_host(row_ptr.data(), A.row_ptr, row_ptr.size() * sizeof(index_t));
  ClusterProgramShape shape;
  if (program) {
    if (d) throw DeviceError("the cluster CG loop takes a diagonal or a program, not both");
    shape.work = program->work;
    shape.op_bytes = sizeof(precond::Op<T>) * program->host_ops.size();
    shape.index_bytes = program->index_bytes;
    shape.value_bytes = program->value_bytes;
  }
  const ClusterFit fit =
      cluster_fit<T>(n, row_ptr.data(), blocks, batch, program ? &shape : nullptr);
  if (!fit.fits) throw DeviceError("the cluster CG loop cannot hold this system: " + fit.reason);
  return std::make_unique<cluster::ClusterCgImpl<T>>(A, n, d, fit, row_ptr, program,
                                                     program ? &shape : nullptr);
}

template ClusterFit cluster_fit<float>(index_t, const index_t*, int, bool,
                                       const ClusterProgramShape*);
template ClusterFit cluster_fit<double>(index_t, const index_t*, int, bool,
                                        const ClusterProgramShape*);
template std::unique_ptr<ClusterCg<float>> make_cluster_cg(
    const CsrView<float>&, index_t, const float*, int, bool,
    const precond::DeviceProgramView<float>*);
template std::unique_ptr<ClusterCg<double>> make_cluster_cg(
    const CsrView<double>&, index_t, const double*, int, bool,
    const precond::DeviceProgramView<double>*);

}  // namespace cgs
