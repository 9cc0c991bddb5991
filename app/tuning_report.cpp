#include "tuning_report.hpp"

namespace cgs {

nlohmann::json tuning_json(const Tuning& t) {
  nlohmann::json j = nlohmann::json::object();
  for (const TuningField& f : tuning_fields(t)) {
    switch (f.kind) {
      case TuningField::Kind::flag: j[f.name] = f.value == "on"; break;
      case TuningField::Kind::integer: j[f.name] = std::stoll(f.value); break;
      case TuningField::Kind::real: j[f.name] = std::stod(f.value); break;
      case TuningField::Kind::choice: j[f.name] = f.value; break;
    }
  }
  return j;
}

void print_tuning_differences(std::FILE* out, const Tuning& t) {
  for (const std::string& line : tuning_differences(t)) std::fprintf(out, "  %s\n", line.c_str());
}

}  // namespace cgs
