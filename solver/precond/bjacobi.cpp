// Block-Jacobi: the exact inverse of each diagonal block of `block` consecutive rows (the last
// one shorter), z = blockdiag(A_bb)^-1 r as one dense block product (on the GPU a thread per
// row, its block's row of the inverse against the block of r). The planner renumbers rows by
// reverse Cuthill-McKee first, so that a block holds neighbours and most of A's weight.
#include <Eigen/Dense>

#include "formats/types.hpp"
#include "solver/precond/builtin.hpp"

namespace cgs::precond {
namespace {

template <typename T>
class BlockJacobi final : public Preconditioner<T> {
 public:
  BlockJacobi(Device device, int threads, int block)
      : Preconditioner<T>(device, threads, false), block_(block) {}
  std::string name() const override { return "bjacobi:" + std::to_string(block_); }

 protected:
  void analyze_pattern(const CsrMatrix<double>& A) override {
    const double bytes = double(A.rows) * block_ * sizeof(T);
    if (bytes > double(1ull << 31))
      throw InputError("bjacobi:" + std::to_string(block_) + " would store " +
                       std::to_string(long(bytes / (1 << 20))) + " MiB of block inverses for " +
                       std::to_string(A.rows) + " rows; ask for smaller blocks");
    this->report_.set_fact("blocks", std::to_string((A.rows + block_ - 1) / block_) + " of " +
                                         std::to_string(block_) + " rows");
  }

  void compute_values(const CsrMatrix<double>& A, ProgramSpec<T>& spec) override {
    const index_t n = A.rows, m = index_t(block_);
    std::vector<T> inverses(std::size_t(n + m - 1) / std::size_t(m) * std::size_t(m) * m, T(0));
    Eigen::MatrixXd local;
    for (index_t first = 0; first < n; first += m) {
      const index_t count = std::min(m, n - first);
      local.setZero(count, count);
      for (index_t i = first; i < first + count; ++i)
        for (index_t e = A.row_ptr[i]; e < A.row_ptr[i + 1]; ++e) {
          const index_t j = A.col_idx[e];
          if (j >= first && j < first + count) local(i - first, j - first) = A.values[e];
        }
      const Eigen::LLT<Eigen::MatrixXd> llt(local);
      if (llt.info() != Eigen::Success)
        throw InputError("bjacobi: the diagonal block of rows " + std::to_string(first + 1) + ".." +
                         std::to_string(first + count) +
                         " is not positive definite (A is not SPD)");
      // The inverse of an SPD block is symmetric; the one LLT computes is so only to rounding
      // times the block's condition, and a non-symmetric M^-1 stalls CG (BWSN_Network_2 step 10
      // stalled at 4e-8, its blocks holding pockets behind closed valves). Symmetrised, M^-1 is
      // symmetric to the last bit, as CG's theory needs.
      Eigen::MatrixXd inverse = llt.solve(Eigen::MatrixXd::Identity(count, count));
      inverse = (0.5 * (inverse + inverse.transpose())).eval();
      T* out = inverses.data() + std::size_t(first) * m;  // block first / m, column-major m x m
      for (index_t c = 0; c < count; ++c)
        for (index_t r = 0; r < count; ++r) out[std::size_t(c) * m + r] = T(inverse(r, c));
    }
    if (!spec.ops.empty()) {
      spec.value_arrays[inverses_] = std::move(inverses);
      return;
    }
    inverses_ = spec.add_values(std::move(inverses));
    OpSpec op;
    op.kind = OpKind::block_product;
    op.items = n;
    op.block = m;
    op.blocks = inverses_;
    op.x = kSlotR;
    op.y = kSlotZ;
    op.alpha = 1;
    op.dot = 1;
    spec.ops.push_back(op);
  }

 private:
  int block_;
  int inverses_ = kNoArray;
};

}  // namespace

template <typename T>
std::unique_ptr<Preconditioner<T>> make_bjacobi(const PrecondSpec& spec, Device device,
                                                int threads) {
  return std::make_unique<BlockJacobi<T>>(device, threads, integer_argument(spec, 64, 1, 4096));
}

template std::unique_ptr<Preconditioner<float>> make_bjacobi(const PrecondSpec&, Device, int);
template std::unique_ptr<Preconditioner<double>> make_bjacobi(const PrecondSpec&, Device, int);

}  // namespace cgs::precond
