// CSR "stream" kernel (--kernel stream): a block per run of consecutive rows holding about the
// same number of nonzeros, after the row-block idea of CSR-Adaptive (Greathouse & Daga, SC14).
//
// Why: a thread per row (scalar) reads a warp's nonzeros with strided, partly wasted loads and
// leaves lanes idle behind the longest row; a warp per row wastes lanes on short rows; neither
// copes with a power-law matrix whose rows run from 1 to 30,000 entries. Here every block gets
// at most a chunk of nonzeros (kBlock x 4 or 8), so the work is balanced whatever the row lengths:
//   - stream mode (several rows): the block's threads read its nonzeros contiguously, coalesced,
//     4 or 8 loads in flight per thread, and park the products in shared memory; then
//     a group of lanes per row (as many as the block's row count allows) adds each row up.
//   - long rows (more than a chunk) are cut into pieces of a chunk, a block each, placed
//     first in the grid; each piece block reduces its piece into a partial, and the last piece
//     block of a row to finish (a counter per long row) adds the row's partials in piece order,
//     so even a row of 10^5 entries costs no more than any other block and y repeats exactly.
// The matrix arrays are read once, so they are loaded with the streaming cache hint (evict
// first): the x gathers, which are reused, keep L2 to themselves.
// Every row is summed in a fixed order, so results repeat exactly. Not a row function, so the
// CG loop with it is the generic one (solver/generic_cg.hpp).
#include <cmath>
#include <cub/block/block_reduce.cuh>
#include <string>
#include <vector>

#include "spmv/cuda/csr_device.cuh"
#include "spmv/cuda/cuda_backend_base.cuh"

namespace cgs::cuda {
namespace {

constexpr int kBlock = 256;
// Nonzeros per block = kBlock * loads per thread. Measured with spmvbench:
// 8 loads (2048 nonzeros, 16 KiB of products) stream regular matrices best (89% of copy on 2D
// Poisson 3000^2 against 86% with 4); on power-law matrices, whose x gathers are random, 4 loads
// (more, smaller blocks) win (1.03-1.05x cuSPARSE against 0.97x with 8; 16 loads halve the speed).
// So: 4 when row lengths vary wildly (coefficient of variation above kIrregularCv), else 8.
constexpr int kRegularLoads = 8, kIrregularLoads = 4;
constexpr double kIrregularCv = 1.0;

// Row blocks: block b covers rows [starts[b], starts[b + 1]); at most `chunk` nonzeros and
// `chunk` rows each, except a single row longer than `chunk`, which is a block of its own (left
// to the piece blocks).
std::vector<index_t> row_blocks(const std::vector<index_t>& row_ptr, index_t rows, int chunk) {
  std::vector<index_t> starts{0};
  index_t first = 0;
  while (first < rows) {
    index_t last = first + 1;  // at least one row, however long
    while (last < rows && last - first < chunk && row_ptr[last + 1] - row_ptr[first] <= chunk) {
      ++last;
    }
    starts.push_back(last);
    first = last;
  }
  return starts;
}

// The long rows cut into pieces of `chunk` nonzeros.
struct LongRowPieces {
  std::vector<index_t> row;          // per piece: its row
  std::vector<index_t> begin;        // per piece: its first nonzero
  std::vector<index_t> long_row;     // per piece: the index of its row among the long rows
  std::vector<index_t> first_piece;  // per long row, + 1: its pieces are [first, next first)
};

LongRowPieces long_row_pieces(const std::vector<index_t>& row_ptr, index_t rows, int chunk) {
  LongRowPieces pieces;
  pieces.first_piece.push_back(0);
  for (index_t r = 0; r < rows; ++r) {
    if (row_ptr[r + 1] - row_ptr[r] <= chunk) continue;
    const auto index = index_t(pieces.first_piece.size() - 1);
    for (index_t k = row_ptr[r]; k < row_ptr[r + 1]; k += chunk) {
      pieces.row.push_back(r);
      pieces.begin.push_back(k);
      pieces.long_row.push_back(index);
    }
    pieces.first_piece.push_back(index_t(pieces.row.size()));
  }
  return pieces;
}

struct PieceView {
  index_t count;
  const index_t* __restrict__ row;
  const index_t* __restrict__ begin;
  const index_t* __restrict__ long_row;
  const index_t* __restrict__ first_piece;
  double* partials;        // per piece
  unsigned int* finished;  // per long row: pieces done in this product (back to 0 after it)
};

// The products of the block's nonzeros [begin, end) into shared memory; unrolled so that each
// thread has all its loads in flight at once.
template <int Loads, typename T>
__device__ __forceinline__ void load_products(const CsrView<T>& A, const T* __restrict__ x,
                                              index_t begin, index_t end, double* products) {
#pragma unroll
  for (int i = 0; i < Loads; ++i) {
    const index_t k = begin + i * kBlock + int(threadIdx.x);
    if (k < end)
      products[k - begin] = double(__ldcs(&A.values[k])) * double(x[__ldcs(&A.col_idx[k])]);
  }
}

// Rows [first, last) from the products: `lanes` threads per row (a power of two <= 32, with
// rows * lanes <= kBlock, so every thread has at most one row and every shuffle is warp-wide).
template <typename T>
__device__ void reduce_rows(const CsrView<T>& A, index_t first, index_t last, index_t begin,
                            const double* products, T* __restrict__ y) {
  const index_t rows = last - first;
  int lanes = 32;
  while (lanes > 1 && rows * lanes > kBlock) lanes /= 2;
  if (lanes == 1) {  // many short rows: a thread per row, possibly several rows per thread
    for (index_t r = first + index_t(threadIdx.x); r < last; r += kBlock) {
      double sum = 0;
      for (index_t k = A.row_ptr[r]; k < A.row_ptr[r + 1]; ++k) sum += products[k - begin];
      y[r] = T(sum);
    }
    return;
  }
  const index_t r = first + index_t(threadIdx.x) / lanes;
  const int lane = int(threadIdx.x) % lanes;
  double sum = 0;
  if (r < last) {
    for (index_t k = A.row_ptr[r] + lane; k < A.row_ptr[r + 1]; k += lanes)
      sum += products[k - begin];
  }
  for (int offset = lanes / 2; offset > 0; offset /= 2)
    sum += __shfl_down_sync(kFullMask, sum, offset, lanes);
  if (lane == 0 && r < last) y[r] = T(sum);
}

// One piece of a long row: its partial sum; the row's last piece to finish adds them all up.
template <int Loads, typename T>
__device__ void long_row_piece(const CsrView<T>& A, const PieceView& pieces, index_t piece,
                               const T* __restrict__ x, T* __restrict__ y) {
  using BlockReduce = cub::BlockReduce<double, kBlock>;
  __shared__ typename BlockReduce::TempStorage temp;
  __shared__ bool last;
  const index_t row = pieces.row[piece], begin = pieces.begin[piece];
  const index_t end = min(begin + Loads * kBlock, A.row_ptr[row + 1]);
  double sum = 0;
#pragma unroll
  for (int i = 0; i < Loads; ++i) {
    const index_t k = begin + i * kBlock + int(threadIdx.x);
    if (k < end) sum += double(__ldcs(&A.values[k])) * double(x[__ldcs(&A.col_idx[k])]);
  }
  const double total = BlockReduce(temp).Sum(sum);
  const index_t long_row = pieces.long_row[piece];
  if (threadIdx.x == 0) {
    pieces.partials[piece] = total;
    __threadfence();  // the partial is visible before the count says so
    const index_t first = pieces.first_piece[long_row],
                  count = pieces.first_piece[long_row + 1] - first;
    last = atomicAdd(&pieces.finished[long_row], 1u) == unsigned(count - 1);
  }
  __syncthreads();
  if (!last || threadIdx.x != 0) return;
  __threadfence();  // see every other piece's partial
  const index_t first = pieces.first_piece[long_row], next = pieces.first_piece[long_row + 1];
  double row_sum = 0;
  for (index_t p = first; p < next; ++p) row_sum += __ldcg(&pieces.partials[p]);
  y[row] = T(row_sum);
  pieces.finished[long_row] = 0;  // ready for the next product (kernels on one stream)
}

// Blocks [0, pieces.count) take the long rows' pieces, the rest the row blocks.
template <int Loads, typename T>
__global__ void __launch_bounds__(kBlock)
    csr_stream_kernel(CsrView<T> A, const index_t* __restrict__ starts, PieceView pieces,
                      const T* __restrict__ x, T* __restrict__ y) {
  if (index_t(blockIdx.x) < pieces.count) {
    long_row_piece<Loads>(A, pieces, index_t(blockIdx.x), x, y);
    return;
  }
  const index_t block = index_t(blockIdx.x) - pieces.count;
  const index_t first = starts[block], last = starts[block + 1];
  const index_t begin = A.row_ptr[first], end = A.row_ptr[last];
  if (end - begin > Loads * kBlock) return;  // a long row: done by its pieces
  __shared__ double products[Loads * kBlock];
  load_products<Loads>(A, x, begin, end, products);
  __syncthreads();
  reduce_rows(A, first, last, begin, products, y);
}

template <typename T>
class CsrStreamBackend final : public CudaBackendBase<T> {
 public:
  // loads: 4 or 8 per thread (chunk = kBlock * loads).
  CsrStreamBackend(const CsrMatrix<T>& A, int loads, bool warm_up)
      : CudaBackendBase<T>(Format::csr, A, "csr/cuda-stream" + std::to_string(loads)),
        loads_(loads),
        row_ptr_(A.row_ptr, "CSR row pointers"),
        col_idx_(A.col_idx, "CSR column indices"),
        values_(A.values, "CSR values"),
        starts_(row_blocks(A.row_ptr, A.rows, kBlock * loads), "CSR row blocks") {
    const LongRowPieces pieces = long_row_pieces(A.row_ptr, A.rows, kBlock * loads);
    piece_row_ = DeviceArray<index_t>(pieces.row, "CSR long-row pieces");
    piece_begin_ = DeviceArray<index_t>(pieces.begin, "CSR long-row pieces");
    piece_long_row_ = DeviceArray<index_t>(pieces.long_row, "CSR long-row pieces");
    first_piece_ = DeviceArray<index_t>(pieces.first_piece, "CSR long rows");
    partials_ = DeviceArray<double>(pieces.row.size(), "CSR long-row partial sums");
    finished_ = DeviceArray<unsigned int>(pieces.first_piece.size() - 1, "CSR long-row counters");
    if (finished_.size() > 0)
      CGS_CUDA_CHECK(cudaMemsetAsync(finished_.data(), 0, finished_.bytes(), stream()));
    this->warm_up(warm_up);
  }

  void apply(const T* x, T* y) override {
    const index_t rows = this->rows();
    if (rows == 0) return;
    const CsrView<T> view{rows, row_ptr_.data(), col_idx_.data(), values_.data(), 1, {}};
    const PieceView pieces{
        index_t(piece_row_.size()), piece_row_.data(), piece_begin_.data(), piece_long_row_.data(),
        first_piece_.data(),        partials_.data(),  finished_.data()};
    const auto blocks = unsigned(pieces.count + starts_.size() - 1);
    if (loads_ == kIrregularLoads) {
      csr_stream_kernel<kIrregularLoads, T>
          <<<blocks, kBlock, 0, stream()>>>(view, starts_.data(), pieces, x, y);
    } else {
      csr_stream_kernel<kRegularLoads, T>
          <<<blocks, kBlock, 0, stream()>>>(view, starts_.data(), pieces, x, y);
    }
    CGS_CHECK_LAUNCH();
  }

  std::string no_rows_reason() const override {
    return "csr/stream is a whole-product kernel (row blocks shared by a thread block), with no "
           "row function for the fused loops";
  }
  void set_values(const T* csr_values) override {
    copy_to_device(values_.data(), csr_values, values_.bytes());
  }

 private:
  int loads_;
  DeviceArray<index_t> row_ptr_, col_idx_;
  DeviceArray<T> values_;
  DeviceArray<index_t> starts_;
  DeviceArray<index_t> piece_row_, piece_begin_, piece_long_row_, first_piece_;
  DeviceArray<double> partials_;
  DeviceArray<unsigned int> finished_;
};

// Standard deviation over mean of the row lengths.
template <typename T>
double row_length_cv(const CsrMatrix<T>& A) {
  if (A.rows == 0 || A.nnz() == 0) return 0;
  const double mean = double(A.nnz()) / A.rows;
  double sum = 0;
  for (index_t r = 0; r < A.rows; ++r) sum += (A.row_length(r) - mean) * (A.row_length(r) - mean);
  return std::sqrt(sum / A.rows) / mean;
}

}  // namespace

template <typename T>
std::unique_ptr<SpmvBackend<T>> make_csr_stream_backend(const CsrMatrix<T>& A,
                                                        const BackendOptions& options) {
  if ((options.block_size != 0 && options.block_size != kBlock) || options.blocks != 0) {
    throw InputError("the CSR stream kernel has a fixed shape (" + std::to_string(kBlock) +
                     " threads, a block per row block): leave --block-size and --blocks unset");
  }
  int loads = row_length_cv(A) > kIrregularCv ? kIrregularLoads : kRegularLoads;
  if (options.kernel == "stream4") loads = kIrregularLoads;
  if (options.kernel == "stream8") loads = kRegularLoads;
  return std::make_unique<CsrStreamBackend<T>>(A, loads, options.warm_up);
}

template std::unique_ptr<SpmvBackend<float>> make_csr_stream_backend(const CsrMatrix<float>&,
                                                                     const BackendOptions&);
template std::unique_ptr<SpmvBackend<double>> make_csr_stream_backend(const CsrMatrix<double>&,
                                                                      const BackendOptions&);

}  // namespace cgs::cuda
