// The batched sparse Cholesky on the device: the schedule and executor of cholesky_executor.hpp run
// one GPU thread a system over a batch of systems of one pattern (netsolve --study ... --device
// gpu --batch-engine cholesky).
#pragma once

#include <cstddef>
#include <memory>

#include "network/cholesky_executor.hpp"

namespace cgs {

// The batched factorisation and solve on the device, for one schedule (one network's pattern and
// elimination order), one thread a system.
class BatchCholesky {
 public:
  virtual ~BatchCholesky() = default;
  // count systems of the schedule's pattern, host arrays one system after another: values
  // [count * a_nnz] (A's values in CSR order), b and x [count * n] (A's row order). x gets each
  // solution; failed_row[s] is -1, or the row of A whose pivot was <= 0 (x of that system is
  // left as it was). One call: upload, gather into the interleaved layout, factorise, sweep,
  // download; the systems do not wait for each other's failures.
  virtual void factorize_solve(const double* values, const double* b, double* x, int count,
                               int* failed_row) = 0;
  // Page-locks host memory that later calls will pass (a caller's staging arrays, allocated once),
  // until this object is destroyed: their copies then go by DMA at the link's rate instead of
  // through the driver's pageable staging. Where the driver refuses, nothing changes.
  virtual void pin(void* host, std::size_t bytes) = 0;
  // Milliseconds of the last call on the device (the kernels, without the copies), and of the
  // whole call.
  virtual double kernel_ms() const = 0;
  virtual double call_ms() const = 0;
};

// The schedule copied to the device (a host view). DeviceError without CUDA or a GPU.
std::unique_ptr<BatchCholesky> make_batch_cholesky(const CholeskyScheduleView& schedule);

}  // namespace cgs
