#include "network/epanet_time.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "formats/types.hpp"

namespace cgs::net {
namespace {

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// EPANET's match(): the word begins with the keyword (case-insensitive).
bool matches(const std::string& word, const char* keyword) {
  return upper(word).rfind(keyword, 0) == 0;
}

// EPANET's getfloat(): strtod must take the whole text.
bool get_number(const std::string& s, double& v) {
  char* end = nullptr;
  v = std::strtod(s.c_str(), &end);
  return end != s.c_str() && *end == '\0';
}

}  // namespace

namespace {
// EPANET's parse as written (a negative result: not a time).
double epanet_hours_unchecked(const std::string& value, const std::string& unit) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t colon = value.find(':', start);
    parts.push_back(value.substr(start, colon == std::string::npos ? colon : colon - start));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  if (parts.size() > 3) return -1.0;
  double y[3] = {0, 0, 0};
  for (std::size_t i = 0; i < parts.size(); ++i)
    if (!get_number(parts[i], y[i])) return -1.0;
  if (parts.size() == 1) {
    if (unit.empty()) return y[0];
    if (matches(unit, "SEC")) return y[0] / 3600.0;
    if (matches(unit, "MIN")) return y[0] / 60.0;
    if (matches(unit, "HOU")) return y[0];
    if (matches(unit, "DAY")) return y[0] * 24.0;
  } else {
    y[0] = y[0] + y[1] / 60.0 + y[2] / 3600.0;
  }
  if (unit.empty()) return y[0];
  if (matches(unit, "AM")) {
    if (y[0] >= 13.0) return -1.0;
    return y[0] >= 12.0 ? y[0] - 12.0 : y[0];
  }
  if (matches(unit, "PM")) {
    if (y[0] >= 13.0) return -1.0;
    return y[0] >= 12.0 ? y[0] : y[0] + 12.0;
  }
  return -1.0;
}
}  // namespace

// Beyond 1e9 hours (about 114,000 years) a time is refused like any unreadable one: converting it
// to whole seconds (a long) would be undefined (fuzz_inp: 'AT TIME 1e20'); NaN and Inf too.
double epanet_hours(const std::string& value, const std::string& unit) {
  const double hours = epanet_hours_unchecked(value, unit);
  return std::isfinite(hours) && hours <= 1e9 ? hours : -1.0;
}

long parse_duration(const std::string& text, const std::string& option) {
  std::string value = text, unit;
  const std::size_t space = text.find_first_of(" \t");
  if (space != std::string::npos) {
    value = text.substr(0, space);
    const std::size_t rest = text.find_first_not_of(" \t", space);
    if (rest != std::string::npos) unit = text.substr(rest);
  } else {
    // A unit glued on: the letters after the number (":" forms have none).
    std::size_t end = value.size();
    while (end > 0 && std::isalpha(static_cast<unsigned char>(value[end - 1]))) --end;
    unit = value.substr(end);
    value = value.substr(0, end);
  }
  const std::string u = upper(unit);
  if (u == "S")
    unit = "SEC";
  else if (u == "M")
    unit = "MIN";
  else if (u == "H" || u == "HR" || u == "HRS")
    unit = "HOURS";
  else if (u == "D")
    unit = "DAYS";
  const double hours = epanet_hours(value, unit);
  if (!(hours >= 0) || !std::isfinite(hours))
    throw InputError(option + ": cannot read '" + text +
                     "' as a time (hours, h:mm[:ss], or a number with SEC, MIN, HOURS, DAYS or "
                     "s, min, h, d)");
  return static_cast<long>(3600.0 * hours + 0.5);
}

std::string clock_text(long seconds) {
  char text[48];
  std::snprintf(text, sizeof text, "%ld:%02ld:%02ld", seconds / 3600, seconds / 60 % 60,
                seconds % 60);
  return text;
}

}  // namespace cgs::net
