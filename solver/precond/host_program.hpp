// A program placed in host memory, for the CPU devices: the generic loop's apply (one OpenMP
// region for the whole program, a barrier between operations) and the fused CPU loops, which
// run each operation's share of items between the barriers they already have.
#pragma once

#include <vector>

#include "solver/precond/program_spec.hpp"

namespace cgs::precond {

template <typename T>
class HostProgram {
 public:
  explicit HostProgram(ProgramSpec<T> spec);
  HostProgram(const HostProgram&) = delete;
  HostProgram& operator=(const HostProgram&) = delete;

  // New value arrays (same handles and sizes): the program reads them from now on.
  void update_values(const ProgramSpec<T>& spec);
  // r and z for the runs that follow.
  void bind(const T* r, T* z);

  int size() const { return int(ops_.size()); }
  const Op<T>& op(int i) const { return ops_[i]; }
  // Share `part` of `parts` of operation i's items (an even split); returns its r.z share.
  double run_part(int i, int part, int parts) const;
  // The whole program on `threads` threads (1: no OpenMP region).
  void apply(int threads) const;

 private:
  ProgramSpec<T> spec_;
  std::vector<Op<T>> ops_;
  std::vector<std::vector<T>> work_;
  std::vector<T*> table_;
};

}  // namespace cgs::precond
