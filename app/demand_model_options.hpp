// netsolve's pressure-driven demand flags (--demand-model, --minimum-pressure,
// --required-pressure, --pressure-exponent): they override the .inp file's [OPTIONS] DEMAND MODEL,
// MINIMUM PRESSURE, REQUIRED PRESSURE and PRESSURE EXPONENT, in the file's pressure units.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "network/network.hpp"

namespace cgs::net {

struct DemandModelFlags {
  std::string model;  // dda, pda; empty: the file's
  std::optional<double> minimum_pressure, required_pressure, exponent;
  bool any() const {
    return !model.empty() || minimum_pressure || required_pressure || exponent;
  }
};

void add_demand_model_options(CLI::App& app, DemandModelFlags& flags);

// The flags over the file's settings, then EPANET's check of the whole set (EN_setdemandmodel:
// exponent > 0, minimum >= 0, required >= minimum + 0.1; error 208), made whenever the model is
// PDA or a pressure flag is given. A minimum given while the required pressure is still EPANET's
// default moves it to minimum + 0.1, as the .inp reader does. InputError naming the flags.
void apply_demand_model_flags(const DemandModelFlags& flags, Network& net);

}  // namespace cgs::net
