// A finished solve's CgResult from its cg::State: the status and the counts, the same for
// every loop (each loop adds its history and times).
#pragma once

#include "solver/cg_step.hpp"
#include "solver/cg_types.hpp"

namespace cgs {

CgResult result_of(const cg::State& s);

// History entries are r.r as the loops record them; the result holds ||r||.
void set_history(CgResult& result, const std::vector<double>& rr);

}  // namespace cgs
