// The ranks of `mpirun -np N netsolve --study ...`: each runs a shard of the scenarios and rank
// 0 gathers the rows (app/netsolve_study.cpp). MPI lives in a module beside netsolve
// (netsolve_mpi.so, app/netsolve_mpi.cpp) that is opened only when an MPI launcher started the
// process, so a single run never loads MPI.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace cgs::net {

class StudyRanks {
 public:
  virtual ~StudyRanks() = default;  // ends MPI
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual int local_size() const = 0;  // ranks on this node (the node's cores are shared)
  // Every rank's text on rank 0, in rank order (elsewhere: empty). Collective.
  virtual std::vector<std::string> gather(const std::string& mine) const = 0;
  virtual void barrier() const = 0;                   // collective
  [[noreturn]] virtual void abort(int code) const = 0;  // ends every rank of the job
};

// The ranks when an MPI launcher started more than one process, else nullptr. InputError where
// this netsolve has no MPI module (built without MPI) or the module cannot be opened.
std::unique_ptr<StudyRanks> open_study_ranks();

}  // namespace cgs::net
