// Hacked ELLPACK kernel: a thread per row; the rows of a hack read their block column-major
// (hack_offset[h] + j * hack_size + r), so a warp over one hack loads coalesced, and each hack
// costs only its own width. Each thread stops at its row's length: padding is never read.
//
// The HYB tail (formats/hll.hpp) is cut at set-up into pieces of at most kTailPiece
// entries, a warp each, so that a row of thousands costs as many warps as its length needs
// instead of one thread walking it. The piece kernel runs first and leaves one partial sum per
// piece; the row kernel then adds a tail row's partials in piece order, so y is written once
// and repeats exactly (no atomics).
//
// A slot's entries are loaded in batches of four before their x gathers (hll_device.cuh,
// hack_product), and evict-first: A streams once per product, x stays in L2.
//
// Sorted (SELL-C-sigma, formats/hll.hpp): a thread per slot, the hacks holding rows of similar
// length, and the sum goes to y[slot_row[s]]; the writes stay inside a window of sigma rows.
#include <algorithm>
#include <vector>

#include "formats/convert.hpp"
#include "spmv/cuda/cuda_backend_base.cuh"
#include "spmv/cuda/hll_device.cuh"
#include "spmv/kernel_registry.hpp"

namespace cgs::cuda {
namespace {

constexpr int kTailPiece = 256;  // entries per warp: 8 loads in flight per lane

// The tail's pieces: piece p covers tail entries [start[p], start[p + 1]); tail row t's pieces
// are first[t] .. first[t + 1] - 1; partial[p] is the piece's sum.
struct TailPieces {
  index_t count = 0;
  const index_t* __restrict__ start = nullptr;
  const index_t* __restrict__ first = nullptr;
  double* __restrict__ partial = nullptr;
};

template <typename T>
__global__ void hll_tail_pieces_kernel(HllView<T> A, TailPieces P, const T* __restrict__ x) {
  const long long warps = (long long)gridDim.x * blockDim.x / 32;
  const int lane = int(threadIdx.x % 32);
  for (long long piece = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32; piece < P.count;
       piece += warps) {
    double sum = 0;
    const index_t end = P.start[piece + 1];
    // Four of the lane's entries loaded before their x gathers (the last batch predicated),
    // summed in the lane's order as one at a time would (the same bits): the SpMV 1% faster on
    // gen:powerlaw:2000000 (BENCHMARKS 12g).
    for (index_t k0 = P.start[piece] + lane; k0 < end; k0 += 4 * 32) {
      index_t col[4];
      T value[4];
#pragma unroll
      for (int u = 0; u < 4; ++u)
        if (k0 + 32 * u < end) {
          col[u] = __ldcs(&A.tail_col_idx[k0 + 32 * u]);
          value[u] = __ldcs(&A.tail_values[k0 + 32 * u]);
        }
#pragma unroll
      for (int u = 0; u < 4; ++u)
        if (k0 + 32 * u < end) sum += double(value[u]) * double(x[col[u]]);
    }
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(kFullMask, sum, offset);
    if (lane == 0) P.partial[piece] = sum;
  }
}

template <typename T>
__global__ void hll_kernel(HllView<T> A, TailPieces P, const T* __restrict__ x, T* __restrict__ y) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long slot = (long long)blockIdx.x * blockDim.x + threadIdx.x; slot < A.rows;
       slot += stride) {
    const index_t length = A.row_length[slot];
    double sum = hack_product<true, 4>(A, slot, length < A.tail_from ? length : A.tail_from,
                                       [x](index_t col) { return x[col]; });
    if (length > A.tail_from) {
      const index_t t = tail_index(A, slot);
      for (index_t p = P.first[t]; p < P.first[t + 1]; ++p) sum += P.partial[p];
    }
    y[A.slot_row ? (long long)A.slot_row[slot] : slot] = T(sum);
  }
}

// Piece boundaries over the tail, each tail row cut into pieces of at most kTailPiece entries.
struct HostPieces {
  std::vector<index_t> start, first;
};
HostPieces cut_tail(const std::vector<index_t>& tail_ptr) {
  HostPieces pieces;
  for (std::size_t t = 0; t + 1 < tail_ptr.size(); ++t) {
    pieces.first.push_back(index_t(pieces.start.size()));
    for (index_t k = tail_ptr[t]; k < tail_ptr[t + 1]; k += kTailPiece) pieces.start.push_back(k);
  }
  pieces.first.push_back(index_t(pieces.start.size()));
  pieces.start.push_back(tail_ptr.empty() ? 0 : tail_ptr.back());
  return pieces;
}

template <typename T>
class HllCudaBackend final : public CudaBackendBase<T> {
 public:
  HllCudaBackend(const CsrMatrix<T>& A, const BackendOptions& options, LaunchShape shape)
      : CudaBackendBase<T>(Format::hll, A, "hll/cuda", options.hack_size),
        hack_size_(options.hack_size),
        shape_(shape) {
    host_ = make_hll(A, options);
    hack_offset_ = DeviceArray<offset_t>(host_.hack_offset, "HLL hack offsets");
    hack_width_ = DeviceArray<index_t>(host_.hack_width, "HLL hack widths");
    row_length_ = DeviceArray<index_t>(host_.row_length, "HLL row lengths");
    col_idx_ = DeviceArray<index_t>(host_.col_idx, "HLL column indices");
    values_ = DeviceArray<T>(host_.values, "HLL values");
    slot_row_ = DeviceArray<index_t>(host_.slot_row, "HLL storage order");
    row_slot_ = DeviceArray<index_t>(host_.row_slot, "HLL slot of each row");
    upload_tail();
    host_.col_idx = {};  // set_values() needs the layout and the value slots only
    host_.tail_col_idx = {};
    this->warm_up(shape.warm_up);
  }

  void apply(const T* x, T* y) override {
    const index_t rows = this->rows();
    if (rows == 0) return;
    if (pieces_.count > 0) {
      const int warps_per_block = shape_.block_size / 32;
      const int grid = grid_for(pieces_.count, warps_per_block, shape_.user_blocks);
      hll_tail_pieces_kernel<T><<<grid, shape_.block_size, 0, stream()>>>(view(), pieces_, x);
      CGS_CHECK_LAUNCH();
    }
    const int grid = grid_for(rows, shape_.block_size, shape_.user_blocks);
    hll_kernel<T><<<grid, shape_.block_size, 0, stream()>>>(view(), pieces_, x, y);
    CGS_CHECK_LAUNCH();
  }

  std::optional<Rows<T>> row_view() const override { return Rows<T>{view(), true, {}}; }
  void set_values(const T* csr_values) override {
    assign_values(host_, csr_values);
    copy_to_device(values_.data(), host_.values.data(), values_.bytes());
    if (!host_.tail_values.empty())
      copy_to_device(tail_values_.data(), host_.tail_values.data(), tail_values_.bytes());
  }

 private:
  void upload_tail() {
    tail_rows_ = DeviceArray<index_t>(host_.tail_rows, "HLL tail rows");
    tail_ptr_ = DeviceArray<index_t>(host_.tail_ptr, "HLL tail row offsets");
    tail_col_idx_ = DeviceArray<index_t>(host_.tail_col_idx, "HLL tail column indices");
    tail_values_ = DeviceArray<T>(host_.tail_values, "HLL tail values");
    if (host_.tail_rows.empty()) return;
    const HostPieces pieces = cut_tail(host_.tail_ptr);
    piece_start_ = DeviceArray<index_t>(pieces.start, "HLL tail pieces");
    piece_first_ = DeviceArray<index_t>(pieces.first, "HLL tail pieces of each row");
    partial_ = DeviceArray<double>(pieces.start.size() - 1, "HLL tail partial sums");
    pieces_ = {index_t(pieces.start.size() - 1), piece_start_.data(), piece_first_.data(),
               partial_.data()};
  }

  HllView<T> view() const {
    return {this->rows(),
            hack_size_,
            hack_offset_.data(),
            hack_width_.data(),
            row_length_.data(),
            col_idx_.data(),
            values_.data(),
            host_.tail_from,
            index_t(host_.tail_rows.size()),
            tail_rows_.data(),
            tail_ptr_.data(),
            tail_col_idx_.data(),
            tail_values_.data(),
            host_.sigma,
            host_.sorted() ? slot_row_.data() : nullptr,
            host_.sorted() ? row_slot_.data() : nullptr};
  }

  index_t hack_size_;
  LaunchShape shape_;
  HllMatrix<T> host_;  // layout and values on the host, for set_values()
  DeviceArray<offset_t> hack_offset_;
  DeviceArray<index_t> hack_width_, row_length_, col_idx_, slot_row_, row_slot_;
  DeviceArray<T> values_;
  DeviceArray<index_t> tail_rows_, tail_ptr_, tail_col_idx_, piece_start_, piece_first_;
  DeviceArray<T> tail_values_;
  DeviceArray<double> partial_;
  TailPieces pieces_;
};

}  // namespace

template <typename T>
std::unique_ptr<SpmvBackend<T>> make_hll_cuda_backend(const CsrMatrix<T>& A,
                                                      const BackendOptions& options) {
  require_gpu_kernel(Format::hll, options.kernel);
  if (options.hack_size <= 0) throw InputError("HLL hack size must be positive");
  return std::make_unique<HllCudaBackend<T>>(A, options, LaunchShape::from(options));
}

template std::unique_ptr<SpmvBackend<float>> make_hll_cuda_backend(const CsrMatrix<float>&,
                                                                   const BackendOptions&);
template std::unique_ptr<SpmvBackend<double>> make_hll_cuda_backend(const CsrMatrix<double>&,
                                                                    const BackendOptions&);

}  // namespace cgs::cuda
