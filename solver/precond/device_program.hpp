// A program placed in GPU memory (solver/precond/device_program.cu): its operations and arrays
// copied to the device once, the value arrays again on update_values(), and a table of the
// slots' vectors that bind() points at r and z. The fused GPU loops read the view (operations
// and slot table in device memory, item counts on the host); apply() runs one kernel per
// operation on the solver's stream (the generic loop), or, for a narrow program (a factor's
// levels of a few rows each), all of them in one block with a barrier between operations
// (DeviceProgramView::apply_launch says which and why). Built without CUDA, making one throws
// DeviceError.
//
// The arrays lie packed in two device buffers, the index arrays in one and the value arrays in
// the other (each array 16-byte aligned): two allocations and two copies instead of one per
// array (IC(0) has an index array per level, 244 on Exnet), and a loop that keeps the program in
// shared memory (the cluster loop in one block, solver/cuda/cluster_cg.hpp) copies two ranges.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "solver/precond/program_spec.hpp"
#include "solver/precond/triangular_sweep.hpp"

namespace cgs::precond {

template <typename T>
struct DeviceProgramView {
  const Op<T>* ops = nullptr;   // device memory, size() of them
  T* const* table = nullptr;    // device memory: the slots' vectors
  std::vector<index_t> items;   // host copy of each operation's item count
  std::vector<int> dot;         // host copy of each operation's dot flag
  std::vector<Op<T>> host_ops;  // the operations as in `ops` (device pointers), on the host
  // The two packed buffers (device memory) and their sizes in bytes.
  const void* index_data = nullptr;
  std::size_t index_bytes = 0;
  const void* value_data = nullptr;
  std::size_t value_bytes = 0;
  std::vector<std::size_t> work;  // the work slots' lengths (kFirstWorkSlot, ...)
  int slots = kFirstWorkSlot;     // slots of the table (r, z, work...)
  std::string apply_launch;       // how apply() runs, and why (the report's fact)
  // The triangular solves that run as sweeps (triangular_sweep.hpp), in device memory and as
  // host copies, in program order; none: every loop runs the levels one by one.
  const Sweep* sweeps = nullptr;
  std::vector<Sweep> host_sweeps;
  std::string sweep_fact;  // the report's line on them ("" where none)
  int size() const { return int(items.size()); }
};

template <typename T>
class DeviceProgram {
 public:
  virtual ~DeviceProgram() = default;
  virtual void update_values(const ProgramSpec<T>& spec) = 0;
  virtual void bind(const T* r, T* z) = 0;
  virtual void apply() = 0;
  virtual const DeviceProgramView<T>& view() const = 0;
};

template <typename T>
std::unique_ptr<DeviceProgram<T>> make_device_program(const ProgramSpec<T>& spec);

}  // namespace cgs::precond
