// The CG loops a plan can run (solver/plan.hpp): the generic one (solver/generic_cg.hpp) on any
// device and backend, and the fused ones: serial and team on the CPU (solver/fused/cpu_loop.hpp),
// persistent and graph on the GPU (solver/cuda/fused_cg.hpp), and cluster for systems that fit
// one thread-block cluster's shared memory (solver/cuda/cluster_cg.hpp).
#pragma once

#include <string>

namespace cgs {

enum class Loop { generic, serial, team, persistent, graph, cluster };

inline std::string to_string(Loop loop) {
  switch (loop) {
    case Loop::generic: return "generic";
    case Loop::serial: return "fused-serial";
    case Loop::team: return "fused-team";
    case Loop::persistent: return "persistent";
    case Loop::graph: return "graph";
    case Loop::cluster: return "cluster";
  }
  return "?";
}

inline bool is_fused(Loop loop) { return loop != Loop::generic; }

}  // namespace cgs
