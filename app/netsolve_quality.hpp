// netsolve's water quality: the summary lines and the JSON report's "quality" object (the
// engine and the --quality CSV: network/quality/).
#pragma once

#include <nlohmann/json.hpp>

#include "network/quality/quality_run.hpp"

namespace cgs::net {

// "water quality CHEMICAL Chlorine (mg/L): 25 reporting times, quality step 300 s, 0.012 s;
// mass balance: initial ..., ratio 1.00001"
void print_quality_summary(const Network& net, const QualityResults& q);
nlohmann::json quality_json(const Network& net, const QualityResults& q);

}  // namespace cgs::net
