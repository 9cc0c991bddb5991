// AMG's set-up phases on the GPU (solver/precond/amg_gpu.hpp): CudaLevelValues, one level's
// patterns and numbers on the device, over the kernels of its parts:
//   amg_gpu_level_kernels.cuh      P's smoothing, R's scatter, Lanczos, D_F, Gershgorin
//   amg_gpu_pattern_kernels.cuh    P's and R's patterns
//   amg_gpu_aggregate_kernels.cuh  strength and MIS(2) aggregation, the greedy's pass 2
//   galerkin_gpu.cuh               R A P by the project's sparse products
//   amg_gpu_device_csr.cuh         device CSR matrices, cuSPARSE's SpGEMM (the side-by-side)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <numeric>
#include <string>

#include "base/tuning.hpp"
#include "solver/precond/amg_gpu.hpp"
#include "solver/precond/amg_gpu_aggregate_kernels.cuh"
#include "solver/precond/amg_gpu_common.cuh"
#include "solver/precond/amg_gpu_device_csr.cuh"
#include "solver/precond/amg_gpu_level_kernels.cuh"
#include "solver/precond/amg_gpu_pattern_kernels.cuh"
#include "solver/precond/amg_hierarchy.hpp"
#include "solver/precond/amg_start.hpp"
#include "solver/precond/galerkin_gpu.cuh"
#include "solver/precond/setup_util.cuh"
#include "solver/precond/spectrum.hpp"
#include "spmv/cuda/cuda_common.cuh"
#include "spmv/cuda/cusparse_api.hpp"

namespace cgs::precond::amg {
namespace {

// R A P by cuSPARSE's SpGEMM instead of the project's kernels (galerkin_gpu.cuh), for the
// side-by-side measurement (BENCHMARKS 20i): CGSOLVE_AMG_GALERKIN=cusparse.
bool cusparse_galerkin() { return tuning().amg_galerkin == AmgGalerkin::cusparse; }

class CudaLevelValues final : public GpuLevelValues {
 public:
  double filtered_radius(const CsrMatrix<double>& A, const std::vector<char>& strong,
                         const std::vector<double>& diagonal, int steps) override {
    operator_current_ = false;  // new values (or a new D_F) may have come since the last call
    upload_operator(A, diagonal);
    if (strong_.size() != strong.size())
      strong_ = DeviceArray<char>(strong, "amg strong couplings");
    return lanczos_radius(A.rows, steps);
  }

  // ---- the set-up's device path (amg_setup.cpp's level_values with gpu): no host pass over
  // the level's rows, D and D_F never copied, the next operator left on the device

  double operator_gershgorin(const CsrMatrix<double>& A) override {
    refresh_values(A);
    const index_t n = A.rows;
    if (d_.size() != std::size_t(n)) {  // kept: the smoothers' scale is made from it
      d_ = DeviceArray<double>(std::size_t(n), "amg diagonal");
      scale_ = DeviceArray<double>(std::size_t(n), "amg smoother scale");
    }
    diagonal_kernel<<<blocks_for(n), kBlock, 0, cuda::stream()>>>(n, a_.ptr(), a_.col(), a_.val(),
                                                                  d_.data());
    CGS_CHECK_LAUNCH();
    return gershgorin(n, nullptr, d_);
  }

  const double* smoother_scale(double factor) override {
    if (d_.size() == 0) throw std::logic_error("amg GPU set-up: a smoother scale before its D");
    const index_t n = index_t(d_.size());
    scaled_inverse_kernel<<<blocks_for(n), kBlock, 0, cuda::stream()>>>(n, d_.data(), factor,
                                                                        scale_.data());
    CGS_CHECK_LAUNCH();
    // The program (another stream, perhaps) reads it next, with the levels' arrays the set-up
    // wrote in place before it: all of them done here.
    CGS_CUDA_CHECK(cudaStreamSynchronize(cuda::stream()));
    return scale_.data();
  }

  double device_filtered_radius(const CsrMatrix<double>& A, int steps) override {
    refresh_values(A);
    const index_t n = A.rows;
    if (strong_.size() != std::size_t(a_.nnz))
      throw std::logic_error("amg GPU set-up: the filtered radius before the level's strength");
    if (diagonal_.size() != std::size_t(n))
      diagonal_ = DeviceArray<double>(std::size_t(n), "amg filtered diagonal");
    filtered_diagonal_kernel<<<blocks_for(n), kBlock, 0, cuda::stream()>>>(
        n, a_.ptr(), a_.col(), a_.val(), strong_.data(), diagonal_.data());
    CGS_CHECK_LAUNCH();
    return steps > 0 ? lanczos_radius(n, steps) : gershgorin(n, strong_.data(), diagonal_);
  }

  GpuPhaseSeconds device_compute(const CsrMatrix<double>& A, double omega, Level& level,
                                 CsrMatrix<double>& next, bool next_on_host) override {
    refresh_values(A);
    values_current_ = false;                              // the next set-up's values are new
    return numbers(A, omega, level, next, next_on_host);  // the pattern comes down at the first
  }

  CsrArrays device_next() const override {
    if (!planned_) return {};
    if (galerkin_) return galerkin_->arrays();  // rows already ascending
    const DeviceCsr& c = rap_->result();
    if (order_.empty()) return c.arrays();
    return {c.row_ptr.data(), next_columns_.data(), next_values_.data(), c.nnz};
  }

  void strength(const CsrMatrix<double>& A, double theta, std::vector<char>& strong) override {
    if (!a_.present) a_.upload(A, "amg level operator");
    values_with_pattern_ = true;
    const index_t n = A.rows;
    const int grid = blocks_for(n);
    DeviceArray<double> d(std::size_t(n), "amg diagonal");
    diagonal_kernel<<<grid, kBlock, 0, cuda::stream()>>>(n, a_.ptr(), a_.col(), a_.val(), d.data());
    strong_ = DeviceArray<char>(std::size_t(a_.nnz), "amg strong couplings");
    strength_kernel<<<grid, kBlock, 0, cuda::stream()>>>(n, a_.ptr(), a_.col(), a_.val(), d.data(),
                                                         theta, strong_.data());
    CGS_CHECK_LAUNCH();
    download_to(strong, strong_);
    strong_theta_ = theta;
  }

  void join_strongest(const std::vector<index_t>& first, std::vector<index_t>& of) override {
    const index_t n = a_.rows;
    if (first.size() != std::size_t(n) || strong_.size() != std::size_t(a_.nnz))
      throw std::logic_error("amg GPU set-up: the greedy's pass 2 before the level's strength");
    const DeviceArray<index_t> first_d(first, "amg greedy pass 1");
    DeviceArray<index_t> of_d(std::size_t(n), "amg greedy pass 2");
    join_strongest_kernel<<<blocks_for(n), kBlock, 0, cuda::stream()>>>(
        n, a_.ptr(), a_.col(), a_.val(), strong_.data(), first_d.data(), kGreedyTie, of_d.data(),
        nullptr);
    CGS_CHECK_LAUNCH();
    download_to(of, of_d);
  }

  void download_next_values(CsrMatrix<double>& next) override {
    const CsrArrays c = device_next();
    if (!c.values || std::size_t(c.nnz) != next.col_idx.size())
      throw std::logic_error("amg GPU set-up: no next operator on the device to download");
    cuda::download_into(next.values, c.values, std::size_t(c.nnz));
  }

  Aggregates mis2_aggregate(const CsrMatrix<double>& A) override {
    const index_t n = A.rows;
    const int grid = blocks_for(n);
    const index_t* ptr = a_.ptr();
    const index_t* col = a_.col();
    DeviceArray<std::uint64_t> state(std::size_t(n), "amg MIS(2) states");
    {
      DeviceArray<std::uint64_t> keys(std::size_t(n), "amg MIS(2) keys");
      DeviceArray<std::uint64_t> near(std::size_t(n), "amg MIS(2) keys");
      DeviceArray<int> undecided(1, "amg MIS(2) flag");
      mis_start_kernel<<<grid, kBlock, 0, cuda::stream()>>>(n, ptr, strong_.data(), state.data());
      for (int left = 1; left;) {  // rounds until no row is undecided
        CGS_CUDA_CHECK(cudaMemsetAsync(undecided.data(), 0, sizeof(int), cuda::stream()));
        mis_keys_kernel<<<grid, kBlock, 0, cuda::stream()>>>(n, state.data(), keys.data());
        mis_near_kernel<<<grid, kBlock, 0, cuda::stream()>>>(n, ptr, col, strong_.data(),
                                                             keys.data(), near.data());
        mis_decide_kernel<<<grid, kBlock, 0, cuda::stream()>>>(
            n, ptr, col, strong_.data(), keys.data(), near.data(), state.data(), undecided.data());
        CGS_CHECK_LAUNCH();
        cuda::copy_to_host(&left, undecided.data(), sizeof(int));
      }
    }
    DeviceArray<index_t> flag(std::size_t(n), "amg aggregation flags");
    DeviceArray<index_t> number(std::size_t(n), "amg aggregation numbers");
    DeviceArray<index_t> first(std::size_t(n), "amg aggregation roots");
    root_flag_kernel<<<grid, kBlock, 0, cuda::stream()>>>(n, state.data(), flag.data());
    CGS_CHECK_LAUNCH();
    Aggregates g;
    g.count = exclusive_numbers(flag, number);
    join_roots_kernel<<<grid, kBlock, 0, cuda::stream()>>>(n, ptr, col, strong_.data(), flag.data(),
                                                           number.data(), first.data());
    of_ = DeviceArray<index_t>(std::size_t(n), "amg aggregates");
    join_strongest_kernel<<<grid, kBlock, 0, cuda::stream()>>>(
        n, ptr, col, a_.val(), strong_.data(), first.data(), 0.0, of_.data(), flag.data());
    CGS_CHECK_LAUNCH();
    const index_t leftovers = exclusive_numbers(flag, number);
    number_leftovers_kernel<<<grid, kBlock, 0, cuda::stream()>>>(n, g.count, flag.data(),
                                                                 number.data(), of_.data());
    CGS_CHECK_LAUNCH();
    g.count += leftovers;
    download_to(g.of, of_);
    return g;
  }

  void keep_host_copies(bool keep) override { host_copies_ = keep; }

  void lend_operator(const CsrMatrix<double>& A, const CsrArrays& on_device) override {
    if (a_.present) throw std::logic_error("amg GPU set-up: A lent after its upload");
    a_.lend(A, on_device);
  }

  GpuPatternSeconds make_patterns(const CsrMatrix<double>& A, Level& level) override {
    GpuPatternSeconds seconds;
    auto start = Clock::now();
    upload_pattern_inputs(A, level);
    const index_t n = A.rows, aggregates = level.aggregates.count;
    p_.rows = n;
    p_.cols = aggregates;
    {
      DeviceArray<index_t> counts(std::size_t(n), "amg prolongator row counts");
      prolongator_count_kernel<<<blocks_for(n), kBlock, 0, cuda::stream()>>>(
          n, a_.ptr(), a_.col(), strong_.data(), of_.data(), counts.data());
      CGS_CHECK_LAUNCH();
      p_.row_ptr = DeviceArray<index_t>(std::size_t(n) + 1, "amg prolongator");
      counts_to_row_pointers(counts, p_.row_ptr);
    }
    p_.nnz = last_of(p_.row_ptr);
    p_.col_idx = DeviceArray<index_t>(std::size_t(p_.nnz), "amg prolongator");
    p_.values = DeviceArray<double>(std::size_t(p_.nnz), "amg prolongator");
    position_ = DeviceArray<index_t>(std::size_t(a_.nnz), "amg prolongator positions");
    prolongator_fill_kernel<<<blocks_for(n), kBlock, 0, cuda::stream()>>>(
        n, a_.ptr(), a_.col(), strong_.data(), of_.data(), p_.row_ptr.data(), p_.col_idx.data(),
        position_.data());
    CGS_CHECK_LAUNCH();
    p_.arrays_changed();
    {
      DeviceArray<index_t> size(std::size_t(aggregates), "amg aggregate sizes");
      CGS_CUDA_CHECK(cudaMemsetAsync(size.data(), 0, size.bytes(), cuda::stream()));
      aggregate_size_kernel<<<blocks_for(n), kBlock, 0, cuda::stream()>>>(n, of_.data(),
                                                                          size.data());
      weight_ = DeviceArray<double>(std::size_t(aggregates), "amg tentative weights");
      tentative_weight_kernel<<<blocks_for(aggregates), kBlock, 0, cuda::stream()>>>(
          aggregates, size.data(), weight_.data());
      CGS_CHECK_LAUNCH();
    }
    download_prolongator(level);
    seconds.prolongator = since(start);
    start = Clock::now();
    transpose_prolongator();
    download_restriction(level);
    seconds.restriction = since(start);
    patterns_on_device_ = true;
    return seconds;
  }

  GpuPhaseSeconds compute(const CsrMatrix<double>& A, const std::vector<double>& diagonal,
                          double omega, Level& level, CsrMatrix<double>& next) override {
    const auto start = Clock::now();
    if (!operator_current_) upload_operator(A, diagonal);  // filtered_radius may have
    operator_current_ = false;                             // the next set-up's are new
    const double upload = since(start);
    GpuPhaseSeconds seconds = numbers(A, omega, level, next, true);
    seconds.prolongator += upload;
    return seconds;
  }

  CsrArrays device_operator() const override { return planned_ ? a_.arrays() : CsrArrays{}; }
  CsrArrays device_prolongator() const override { return planned_ ? p_.arrays() : CsrArrays{}; }
  CsrArrays device_restriction() const override { return planned_ ? r_.arrays() : CsrArrays{}; }

 private:
  // A's values of this set-up on the device, once per set-up: uploaded unless strength() or
  // make_patterns() just did, or A is lent (its owner wrote them).
  void refresh_values(const CsrMatrix<double>& A) {
    if (!a_.present)
      a_.upload(A, "amg level operator");
    else if (!values_current_ && !values_with_pattern_ && !a_.is_lent())
      a_.upload_values(A.values);
    values_with_pattern_ = false;
    values_current_ = true;
  }

  // Gershgorin's bound of D^-1/2 M D^-1/2 (M = A, or A_F where strong is given, D = d): the
  // partial maxima of a fixed grid, the largest taken on the host.
  // Its scratch is kept with the object (cudaFree waits for the whole device: not once per call
  // at every set_values).
  double gershgorin(index_t n, const char* strong, const DeviceArray<double>& d) {
    if (gershgorin_scale_.size() != std::size_t(n))
      gershgorin_scale_ = DeviceArray<double>(std::size_t(n), "amg Gershgorin scale");
    if (gershgorin_partial_.size() != std::size_t(kReduceBlocks))
      gershgorin_partial_ =
          DeviceArray<double>(std::size_t(kReduceBlocks), "amg Gershgorin partial maxima");
    inverse_sqrt_kernel<<<blocks_for(n), kBlock, 0, cuda::stream()>>>(n, d.data(),
                                                                      gershgorin_scale_.data());
    partial_gershgorin_kernel<<<kReduceBlocks, kBlock, 0, cuda::stream()>>>(
        n, a_.ptr(), a_.col(), a_.val(), strong, d.data(), gershgorin_scale_.data(),
        gershgorin_partial_.data());
    CGS_CHECK_LAUNCH();
    std::vector<double> largest(std::size_t(kReduceBlocks), 0.0);
    cuda::copy_to_host(largest.data(), gershgorin_partial_.data(), gershgorin_partial_.bytes());
    return *std::max_element(largest.begin(), largest.end());
  }

  // rho(D_F^-1 A_F) by `steps` Lanczos steps on A, strong_ and diagonal_ as the device holds them.
  double lanczos_radius(index_t n, int steps) {
    steps = int(std::min<index_t>(n, steps));
    LanczosVectors L(n);
    const int grid = blocks_for(n);
    inverse_sqrt_kernel<<<grid, kBlock, 0, cuda::stream()>>>(n, diagonal_.data(), L.scale.data());
    // The host's hashed start, made here (the host's serial mt19937 stream took ~0.1 s at 9M
    // rows, and its upload more); normalized by a device sum: equal to the host's to rounding.
    lanczos_start_kernel<<<grid, kBlock, 0, cuda::stream()>>>(n, L.w.data());
    CGS_CHECK_LAUNCH();
    const double root = std::sqrt(L.dot(n, L.w, L.w));
    divide_kernel<<<grid, kBlock, 0, cuda::stream()>>>(n, L.w.data(), root, L.v.data());
    CGS_CHECK_LAUNCH();
    CGS_CUDA_CHECK(cudaMemsetAsync(L.v_old.data(), 0, L.v_old.bytes(), cuda::stream()));
    std::vector<double> alpha, beta;
    double beta_prev = 0;
    for (int j = 0; j < steps; ++j) {  // spectrum_bounds's loop
      filtered_product_kernel<<<grid, kBlock, 0, cuda::stream()>>>(
          n, a_.ptr(), a_.col(), a_.val(), strong_.data(), diagonal_.data(), L.scale.data(),
          L.v.data(), L.w.data());
      CGS_CHECK_LAUNCH();
      const double a = L.dot(n, L.w, L.v);
      orthogonalize_kernel<<<grid, kBlock, 0, cuda::stream()>>>(n, a, beta_prev, L.v.data(),
                                                                L.v_old.data(), L.w.data());
      CGS_CHECK_LAUNCH();
      const double b = std::sqrt(L.dot(n, L.w, L.w));
      alpha.push_back(a);
      if (j + 1 == steps || b <= 1e-12 * std::abs(a)) break;  // an invariant subspace: exact
      beta.push_back(b);
      std::swap(L.v_old, L.v);
      divide_kernel<<<grid, kBlock, 0, cuda::stream()>>>(n, L.w.data(), b, L.v.data());
      CGS_CHECK_LAUNCH();
      beta_prev = b;
    }
    return ritz_extremes(alpha, beta).second;
  }

  // P, R and R A P from A's values, D_F and omega on the device (compute's and device_compute's
  // common part); the next operator's values downloaded only where next_on_host.
  GpuPhaseSeconds numbers(const CsrMatrix<double>& A, double omega, Level& level,
                          CsrMatrix<double>& next, bool next_on_host) {
    GpuPhaseSeconds seconds;
    auto start = Clock::now();
    if (!planned_ && !patterns_on_device_) upload_patterns(level);
    smooth_prolongator_kernel<<<blocks_for(A.rows), kBlock, 0, cuda::stream()>>>(
        A.rows, a_.ptr(), a_.col(), a_.val(), position_.data(), of_.data(), weight_.data(),
        diagonal_.data(), omega, p_.row_ptr.data(), p_.col_idx.data(), p_.values.data());
    CGS_CHECK_LAUNCH();
    if (host_copies_) {
      CsrMatrix<double>& P = level.prolongator.P;
      cuda::copy_to_host(P.values.data(), p_.values.data(), p_.values.bytes());
    }
    seconds.prolongator = since(start);

    start = Clock::now();
    scatter_kernel<<<blocks_for(p_.nnz), kBlock, 0, cuda::stream()>>>(
        p_.nnz, p_.values.data(), to_r_.data(), r_.values.data());
    CGS_CHECK_LAUNCH();
    if (host_copies_) {
      CsrMatrix<double>& R = level.restriction.At;
      cuda::copy_to_host(R.values.data(), r_.values.data(), r_.values.bytes());
    }
    seconds.restriction = since(start);

    start = Clock::now();
    if (!planned_) {
      if (cusparse_galerkin()) {
        ra_ = std::make_unique<ReusedProduct>(r_, a_);
        rap_ = std::make_unique<ReusedProduct>(ra_->result(), p_);
      } else {
        galerkin_ = std::make_unique<GalerkinProduct>(a_.rows, r_.rows, r_.arrays(), a_.arrays(),
                                                      p_.arrays());
      }
    }
    if (galerkin_) {
      galerkin_->compute();
    } else {
      ra_->compute();
      rap_->compute();
    }
    seconds.galerkin = cuda::waited_since(start);
    start = Clock::now();
    next_operator(next, next_on_host);
    seconds.download = since(start);
    planned_ = true;
    return seconds;
  }

  // R A P in the host's order (each row's columns ascending, as the host's product gives them
  // and the next level's aggregation walks them). The first set-up downloads its pattern, finds
  // that order on the host and, where cuSPARSE's rows are not in it already, keeps a sorted
  // copy on the device; every set-up gathers the values into it there (the next level reads
  // them in place: device_next), and downloads them only where the host reads them (on_host:
  // the first set-up, host copies, the coarsest level's inverse), not 0.1 GB of level 1's at
  // every set_values of poisson2d:3000 and their upload again into the next level.
  void next_operator(CsrMatrix<double>& next, bool on_host) {
    if (galerkin_) {
      next_from_kernels(next, on_host);
      return;
    }
    const DeviceCsr& c = rap_->result();
    if (!planned_) {
      next.rows = c.rows;
      next.cols = c.cols;
      next.row_ptr.resize(std::size_t(c.rows) + 1);
      next.col_idx.resize(std::size_t(c.nnz));
      cuda::copy_to_host(next.row_ptr.data(), c.row_ptr.data(), next.row_ptr.size() * 4);
      cuda::copy_to_host(next.col_idx.data(), c.col_idx.data(), c.col_idx.bytes());
      order_ = ascending_order(next);
      if (!order_.empty()) {
        next.col_idx = permuted(next.col_idx, order_);
        next_order_ = DeviceArray<std::int64_t>(order_, "amg R A P order");
        next_columns_ = DeviceArray<index_t>(next.col_idx, "amg R A P columns, ascending");
        next_values_ = DeviceArray<double>(std::size_t(c.nnz), "amg R A P values, ascending");
      }
    }
    if (!order_.empty()) {
      gather_kernel<<<blocks_for(c.nnz), kBlock, 0, cuda::stream()>>>(
          c.nnz, c.values.data(), next_order_.data(), next_values_.data());
      CGS_CHECK_LAUNCH();
    }
    if (!on_host) return;
    next.values.resize(std::size_t(c.nnz));
    cuda::copy_to_host(next.values.data(), order_.empty() ? c.values.data() : next_values_.data(),
                       c.values.bytes());
  }

  // next_operator for the project's product: its rows already ascend, so no order is found or
  // kept; the pattern comes down at the first set-up, the values where the host reads them.
  void next_from_kernels(CsrMatrix<double>& next, bool on_host) {
    const GalerkinProduct& c = *galerkin_;
    const std::size_t nnz = std::size_t(c.nnz());
    if (!planned_) {
      next.rows = c.rows();
      next.cols = c.rows();
      download_to(next.row_ptr, c.row_ptr());
      cuda::download_into(next.col_idx, c.col_idx().data(), nnz);
    }
    if (!on_host) return;
    cuda::download_into(next.values, c.values().data(),
                        nnz);  // empty before where they stayed here
  }

  // A (its pattern at the first set-up, its values after) and D_F, for this set-up.
  void upload_operator(const CsrMatrix<double>& A, const std::vector<double>& diagonal) {
    if (!a_.present)
      a_.upload(A, "amg level operator");
    else if (!operator_current_ && !values_with_pattern_ && !a_.is_lent())
      a_.upload_values(A.values);  // a lent A already holds this set-up's values (its owner's)
    values_with_pattern_ = false;  // make_patterns's upload served this set-up; later ones not
    if (diagonal_.size() != std::size_t(A.rows))
      diagonal_ = DeviceArray<double>(std::size_t(A.rows), "amg filtered diagonal");
    cuda::copy_to_device(diagonal_.data(), diagonal.data(), diagonal_.bytes());
    operator_current_ = true;
  }

  // What the patterns are made from: A (values too: this set-up's), strength, aggregates.
  void upload_pattern_inputs(const CsrMatrix<double>& A, const Level& level) {
    if (!a_.present) a_.upload(A, "amg level operator");  // else strength() did
    values_with_pattern_ = true;
    // strength() left the level's couplings here unless a later retry of another theta was
    // dropped (level_pattern keeps the last aggregation that coarsened)
    if (!(strong_theta_ == level.theta && strong_.size() == level.strong.size()))
      strong_ = DeviceArray<char>(level.strong, "amg strong couplings");
    of_ = DeviceArray<index_t>(level.aggregates.of, "amg aggregates");
  }

  // R = P^T's pattern: P's entries stably sorted by column (cub's radix sort), R's row lengths
  // from P's column counts, and where each entry of P goes in R (to_r_).
  void transpose_prolongator() {
    const std::int64_t nnz = p_.nnz;
    const index_t aggregates = p_.cols;
    r_.rows = aggregates;
    r_.cols = p_.rows;
    r_.nnz = nnz;
    {
      DeviceArray<index_t> counts(std::size_t(aggregates), "amg restriction row counts");
      CGS_CUDA_CHECK(cudaMemsetAsync(counts.data(), 0, counts.bytes(), cuda::stream()));
      column_count_kernel<<<blocks_for(nnz), kBlock, 0, cuda::stream()>>>(nnz, p_.col_idx.data(),
                                                                          counts.data());
      CGS_CHECK_LAUNCH();
      r_.row_ptr = DeviceArray<index_t>(std::size_t(aggregates) + 1, "amg restriction");
      counts_to_row_pointers(counts, r_.row_ptr);
    }
    DeviceArray<index_t> row_of(std::size_t(nnz), "amg prolongator entry rows");
    DeviceArray<index_t> entry(std::size_t(nnz), "amg prolongator entries");
    DeviceArray<index_t> sorted_columns(std::size_t(nnz), "amg sorted columns");
    DeviceArray<index_t> order(std::size_t(nnz), "amg restriction order");
    entry_rows_kernel<<<blocks_for(p_.rows), kBlock, 0, cuda::stream()>>>(
        p_.rows, p_.row_ptr.data(), row_of.data(), entry.data());
    CGS_CHECK_LAUNCH();
    const int bits = key_bits(aggregates);
    std::size_t bytes = 0;
    CGS_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, p_.col_idx.data(),
                                                   sorted_columns.data(), entry.data(),
                                                   order.data(), nnz, 0, bits, cuda::stream()));
    DeviceArray<char> scratch(bytes, "amg radix sort scratch");
    CGS_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(scratch.data(), bytes, p_.col_idx.data(),
                                                   sorted_columns.data(), entry.data(),
                                                   order.data(), nnz, 0, bits, cuda::stream()));
    r_.col_idx = DeviceArray<index_t>(std::size_t(nnz), "amg restriction");
    r_.values = DeviceArray<double>(std::size_t(nnz), "amg restriction");
    to_r_ = DeviceArray<index_t>(std::size_t(nnz), "amg restriction positions");
    restriction_fill_kernel<<<blocks_for(nnz), kBlock, 0, cuda::stream()>>>(
        nnz, order.data(), row_of.data(), r_.col_idx.data(), to_r_.data());
    CGS_CHECK_LAUNCH();
    r_.arrays_changed();
  }

  // The host copies of what make_patterns made (the level's arrays, as the host set-up has them:
  // the next level's aggregation, the tests and a float program read them).
  void download_prolongator(Level& level) {
    Prolongator& p = level.prolongator;
    p = {};
    p.P.rows = p_.rows;
    p.P.cols = p_.cols;
    if (!host_copies_) return;
    download_to(p.P.row_ptr, p_.row_ptr);
    download_to(p.P.col_idx, p_.col_idx);
    p.P.values.assign(std::size_t(p_.nnz), 0.0);
    download_to(p.position, position_);
    download_to(p.weight, weight_);
  }
  void download_restriction(Level& level) {
    precond::Transposed& r = level.restriction;
    r = {};
    r.At.rows = r_.rows;
    r.At.cols = r_.cols;
    if (!host_copies_) return;
    download_to(r.At.row_ptr, r_.row_ptr);
    download_to(r.At.col_idx, r_.col_idx);
    r.At.values.assign(std::size_t(r_.nnz), 0.0);
    download_to(r.position, to_r_);
  }

  void upload_patterns(const Level& level) {
    p_.upload(level.prolongator.P, "amg prolongator");
    r_.upload(level.restriction.At, "amg restriction");
    position_ = DeviceArray<index_t>(level.prolongator.position, "amg prolongator positions");
    of_ = DeviceArray<index_t>(level.aggregates.of, "amg aggregates");
    weight_ = DeviceArray<double>(level.prolongator.weight, "amg tentative weights");
    to_r_ = DeviceArray<index_t>(level.restriction.position, "amg restriction positions");
  }

  bool planned_ = false;
  bool operator_current_ = false;     // A's values and D_F of this set-up already on the device
  bool values_with_pattern_ = false;  // make_patterns uploaded A's values of this set-up
  bool patterns_on_device_ = false;   // P's and R's patterns made here, not uploaded
  bool host_copies_ = true;           // P and R downloaded for the host's readers
  DeviceCsr a_, p_, r_;
  DeviceArray<char> strong_;
  DeviceArray<index_t> position_, of_, to_r_;
  DeviceArray<double> weight_, diagonal_;
  std::unique_ptr<GalerkinProduct> galerkin_;  // R A P by the project's kernels (the default)
  std::unique_ptr<ReusedProduct> ra_, rap_;    // or by cuSPARSE (CGSOLVE_AMG_GALERKIN=cusparse)
  std::vector<std::int64_t> order_;  // R A P's entries in ascending columns, empty if they are
  // ... and on the device with R A P's columns and values in that order (next_operator)
  DeviceArray<std::int64_t> next_order_;
  DeviceArray<index_t> next_columns_;
  DeviceArray<double> next_values_;
  DeviceArray<double> d_, scale_;  // A's diagonal and the smoothers' scale (operator_gershgorin)
  DeviceArray<double> gershgorin_scale_, gershgorin_partial_;  // gershgorin()'s scratch
  bool values_current_ = false;  // A's values of this set-up on the device (refresh_values)
  double strong_theta_ = -1;     // the threshold strong_ was made with by strength()
};

}  // namespace

std::unique_ptr<GpuLevelValues> make_gpu_level_values() {
  return std::make_unique<CudaLevelValues>();
}

CsrMatrix<double> device_galerkin_product(const CsrMatrix<double>& R, const CsrMatrix<double>& A,
                                          const CsrMatrix<double>& P, index_t* wide_rows) {
  if (R.cols != A.rows || A.cols != P.rows || P.cols != R.rows)
    throw std::invalid_argument("device_galerkin_product: R, A and P do not chain");
  DeviceCsr r, a, p;
  r.upload(R, "R A P test: R");
  a.upload(A, "R A P test: A");
  p.upload(P, "R A P test: P");
  GalerkinProduct c(A.rows, R.rows, r.arrays(), a.arrays(), p.arrays());
  c.compute();
  if (wide_rows) *wide_rows = c.wide_rows();
  CsrMatrix<double> C;
  C.rows = C.cols = R.rows;
  download_to(C.row_ptr, c.row_ptr());
  cuda::download_into(C.col_idx, c.col_idx().data(), std::size_t(c.nnz()));
  cuda::download_into(C.values, c.values().data(), std::size_t(c.nnz()));
  return C;
}

}  // namespace cgs::precond::amg
