// The GPU's share of AMG's set-up, used when the solve runs on the GPU: per
// level, the numeric phases that cost most on the host, on the patterns the host made once.
//   prolongator   P = (I - omega D_F^-1 A_F) T, one thread a row (the host's order and rounding)
//   restriction   R = P^T's values, scattered through transpose_with_map's positions
//   Galerkin      R A P as R (A P) by the project's sparse products (galerkin_gpu.cuh):
//                 the patterns at the first set-up only, the values (equal to the host's R (A P)
//                 bit for bit) at every set-up; cuSPARSE's SpGEMM with pattern reuse where
//                 CGSOLVE_AMG_GALERKIN=cusparse (for the side-by-side measurement)
//   omega         P's damping 4 / (3 rho(D_F^-1 A_F)), rho by Lanczos with the device's products
//   patterns      P's (one thread a row: the aggregates it reaches) and R's (P's entries
//                 stably sorted by column), once per pattern (make_patterns)
//   aggregation   with HierarchyOptions::device_aggregation, strength and MIS(2) aggregation
//                 (kernels; the host's mis2_aggregate is their reference, bit for bit)
// Otherwise strength and the greedy aggregation run on the host, once per pattern.
// The V-cycle's program reads the level's A, P and R where this object keeps them on the device
// (device_operator() and the others: borrowed arrays, program_spec.hpp) instead of copies.
// Built without CUDA, making one throws DeviceError.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "formats/csr.hpp"
#include "solver/precond/amg_hierarchy.hpp"  // Level, Aggregates
#include "solver/precond/program_spec.hpp"   // CsrArrays

namespace cgs::precond::amg {

// Seconds of each phase of one level's numbers, host-device copies included.
struct GpuPhaseSeconds {
  double prolongator = 0, restriction = 0, galerkin = 0;
  double download = 0;  // the next operator to the host, where it is read there
};

// Seconds of making one level's patterns on the device, the host copies' downloads included.
struct GpuPatternSeconds {
  double prolongator = 0, restriction = 0;
};

class GpuLevelValues {
 public:
  virtual ~GpuLevelValues() = default;
  // P's and R's patterns made on the device from A's pattern, level.strong and
  // level.aggregates: the arrays prolongator_pattern and transpose_with_map make on the host
  // (P's columns ascending, the positions of A's entries in P, the tentative weights, R's rows
  // in P's row order, where each entry of P goes in R), equal to them, downloaded into
  // level.prolongator and level.restriction (values zero) for the host's readers (unless
  // keep_host_copies(false)). Once per pattern, before the first filtered_radius/compute of the
  // level (A's values uploaded here serve that set-up). Without it, compute() uploads the host's
  // patterns.
  virtual GpuPatternSeconds make_patterns(const CsrMatrix<double>& A, Level& level) = 0;
  // Whether make_patterns and compute download P and R for the host (default yes). No: they
  // stay on the device only (level.prolongator.P and level.restriction.At keep their sizes, no
  // arrays), for a double program that reads them there (0.6 GB of patterns at 9M rows, and
  // 0.5 GB of values at every set_values, not copied).
  virtual void keep_host_copies(bool keep) = 0;
  // A's arrays (pattern and values) where another owner already keeps them on the device: the
  // SpMV backend's copy that the solver lends to the preconditioner (Preconditioner::lend_matrix,
  // HierarchyOptions::finest_on_device), read in place from then on instead of an upload of
  // A's own (0.54 GB at every set-up of poisson2d:3000's finest level, BENCHMARKS 20f). The
  // owner writes each set-up's values there before the set-up runs. Before any other call.
  virtual void lend_operator(const CsrMatrix<double>& A, const CsrArrays& on_device) = 0;
  // Strength of connection (strong_connections(A, theta)) and then MIS(2) aggregation on it
  // (mis2_aggregate(A, strong): the same hashed priorities and rounds, roots numbered in row
  // order by scans), on the device, equal to the host's, downloaded for the host's readers.
  // strength() may run again with another theta (the coarsening retries); mis2_aggregate reads
  // the last strength().
  virtual void strength(const CsrMatrix<double>& A, double theta, std::vector<char>& strong) = 0;
  virtual Aggregates mis2_aggregate(const CsrMatrix<double>& A) = 0;
  // The greedy's pass 2 (join_strongest in amg_setup.cpp: each row without an aggregate in
  // `first` joins its strongest aggregated strong neighbour's, the same rule and ties) on A's
  // values and the last strength() as the device holds them: for a coarse level whose values the
  // first set-up left on the device only. `of` is first with those rows filled in.
  virtual void join_strongest(const std::vector<index_t>& first, std::vector<index_t>& of) = 0;
  // The next operator's values (device_next's) into next.values: for a level whose values stayed
  // on the device at the first set-up and that turned out to be the coarsest (its inverse is
  // made on the host).
  virtual void download_next_values(CsrMatrix<double>& next) = 0;
  // Level's P and R values (also in level.prolongator.P and level.restriction.At unless
  // keep_host_copies(false)) and the next level's operator `next` (its pattern too at the first
  // call), from the level's operator A, the filtered diagonal D_F and P's damping omega. Later
  // calls must see the same patterns (A, P, R): only values travel, and only the numeric products
  // run. rho(D_F^-1 A_F), as spectrum_bounds(A, D_F^-1/2, steps, {&strong, &diagonal}).ritz_max
  // finds it on the host: the same Lanczos (the hashed start of amg_start.hpp, made by a kernel;
  // steps, stopping rule, tridiagonal) with the products and sums on the device (the sums in
  // another order: equal to rounding). A's
  // pattern and values, strong (the first call only) and D_F stay on the device for compute().
  // The host's took 0.55 s of a 3.3 s set-up on poisson2d:3000 (9M rows, 16 cores), and as much
  // again at each set_values.
  virtual double filtered_radius(const CsrMatrix<double>& A, const std::vector<char>& strong,
                                 const std::vector<double>& diagonal, int steps) = 0;
  virtual GpuPhaseSeconds compute(const CsrMatrix<double>& A, const std::vector<double>& diagonal,
                                  double omega, Level& level, CsrMatrix<double>& next) = 0;
  // The set-up's device path (amg_setup.cpp's level_values with gpu), one set-up as:
  // operator_gershgorin, device_filtered_radius, device_compute, then smoother_scale (the
  // program's). Kernels over A where the device holds it (uploaded once per set-up unless lent),
  // so no pass over the level's rows on the host and no copy of D, D_F or the smoothers' scale
  // either way (BENCHMARKS 20g's round trips: D_F 72 MB at level 0, each R A P's values down and
  // up again). Each equals its host function to rounding:
  //   operator_gershgorin   spectrum_bounds(A, D^-1/2, 0).gershgorin, D = A's diagonal (kept)
  //   device_filtered_radius D_F = filtered_diagonal(A, strong) from the strength on the device
  //                         (strength() or make_patterns first), then rho(D_F^-1 A_F) by `steps`
  //                         Lanczos steps (filtered_radius's), or with steps = 0 Gershgorin's
  //                         bound of D_F^-1/2 A_F D_F^-1/2
  //   device_compute        compute's P, R and R A P on that D_F; `next`'s values downloaded only
  //                         at the first call or where next_on_host (its host readers: host
  //                         copies, the coarsest level's inverse); otherwise they stay on the
  //                         device (device_next), in the host's order
  //   smoother_scale        factor / D on the device (amg.cpp's smoother_scale), in one array
  //                         that keeps its place across set-ups: the program borrows it
  //   device_next           the next operator (pattern and values) on the device in the host's
  //                         order, after the first device_compute: the next level's object
  //                         borrows it (lend_operator) instead of an upload of the download
  virtual double operator_gershgorin(const CsrMatrix<double>& A) = 0;
  virtual double device_filtered_radius(const CsrMatrix<double>& A, int steps) = 0;
  virtual GpuPhaseSeconds device_compute(const CsrMatrix<double>& A, double omega, Level& level,
                                         CsrMatrix<double>& next, bool next_on_host) = 0;
  virtual const double* smoother_scale(double factor) = 0;
  virtual CsrArrays device_next() const = 0;
  // The level's operator A (as filtered_radius or compute uploaded it, in the host's order), P
  // and R on the device, after the first compute() (nulls before). They live as long as this
  // object, and later set-ups rewrite their values in place: the program reads them there.
  virtual CsrArrays device_operator() const = 0;
  virtual CsrArrays device_prolongator() const = 0;
  virtual CsrArrays device_restriction() const = 0;
};

std::unique_ptr<GpuLevelValues> make_gpu_level_values();

// R A P (R: nc x n, A: n x n, P: n x nc) by the GPU set-up's own Galerkin kernels
// (solver/precond/galerkin_gpu.cuh), the factors uploaded and the product downloaded: for its
// tests. Where wide_rows is given it receives how many rows the bitmap path made (rows with
// more columns than a warp's hash table holds). Built without CUDA it throws DeviceError.
CsrMatrix<double> device_galerkin_product(const CsrMatrix<double>& R, const CsrMatrix<double>& A,
                                          const CsrMatrix<double>& P, index_t* wide_rows = nullptr);

}  // namespace cgs::precond::amg
