// The process's tuning (base/tuning.hpp) in cgsolve's and netsolve's reports. Apart from
// report.cpp so that netsolve, which needs only this, links nothing of the distributed solve.
#pragma once

#include <cstdio>
#include <nlohmann/json.hpp>

#include "base/tuning.hpp"

namespace cgs {

// Every tuning field by name, typed.
nlohmann::json tuning_json(const Tuning& t);
// The fields that differ from their defaults, a line each (netsolve's summary; cgsolve's has
// them among the plan's reasons).
void print_tuning_differences(std::FILE* out, const Tuning& t);

}  // namespace cgs
