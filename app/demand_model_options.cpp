#include "app/demand_model_options.hpp"

#include "formats/types.hpp"

namespace cgs::net {
namespace {

std::string given(const DemandModelFlags& flags) {
  std::string text;
  auto add = [&](const char* name, const std::string& value) {
    text += (text.empty() ? "" : " ") + std::string(name) + " " + value;
  };
  auto number = [](double v) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%g", v);
    return std::string(buffer);
  };
  if (!flags.model.empty()) add("--demand-model", flags.model);
  if (flags.minimum_pressure) add("--minimum-pressure", number(*flags.minimum_pressure));
  if (flags.required_pressure) add("--required-pressure", number(*flags.required_pressure));
  if (flags.exponent) add("--pressure-exponent", number(*flags.exponent));
  return text;
}

}  // namespace

void add_demand_model_options(CLI::App& app, DemandModelFlags& flags) {
  app.add_option("--demand-model", flags.model,
                 "Demand model instead of the file's DEMAND MODEL: dda (demands delivered "
                 "whatever the pressure) or pda (pressure-driven, EPANET 2.2+'s)")
      ->check(CLI::IsMember({"dda", "pda"}, CLI::ignore_case));
  app.add_option("--minimum-pressure", flags.minimum_pressure,
                 "PDA: pressure at or below which a junction delivers nothing (the file's "
                 "pressure units: psi, m or kPa)");
  app.add_option("--required-pressure", flags.required_pressure,
                 "PDA: pressure at or above which a junction delivers its full demand (at least "
                 "0.1 above the minimum, as EPANET)");
  app.add_option("--pressure-exponent", flags.exponent,
                 "PDA: delivered = demand x ((p - min) / (req - min))^exponent between the two "
                 "pressures (EPANET's default 0.5)");
}

void apply_demand_model_flags(const DemandModelFlags& flags, Network& net) {
  if (!flags.any()) return;
  DemandModelOptions& d = net.options.demand;
  if (!flags.model.empty())
    d.model = flags.model == "pda" || flags.model == "PDA" ? DemandModel::pda : DemandModel::dda;
  const bool required_at_default = d.required_pressure == kMinPressureDifference;
  if (flags.minimum_pressure) {
    d.minimum_pressure = *flags.minimum_pressure;
    if (!flags.required_pressure && required_at_default)
      d.required_pressure = d.minimum_pressure + kMinPressureDifference;
  }
  if (flags.required_pressure) d.required_pressure = *flags.required_pressure;
  if (flags.exponent) d.exponent = *flags.exponent;
  DemandModelOptions check = d;
  if (flags.minimum_pressure || flags.required_pressure || flags.exponent)
    check.model = DemandModel::pda;  // a pressure given is checked under either model
  const std::string error = pda_limits_error(check);
  if (!error.empty()) throw InputError(given(flags) + " (over " + net.source + "): " + error);
}

}  // namespace cgs::net
