// EPANET's time values: how [TIMES], [CONTROLS] and [RULES] write times, and netsolve's
// --duration.
#pragma once

#include <string>

namespace cgs::net {

// EPANET's hour(): a time in hours from a value and an optional unit. The value is decimal hours
// or h:mm[:ss]; the unit SEC, MIN, HOURS or DAYS (matched by prefix, case-insensitive, decimal
// values only) or AM/PM (12 AM is midnight, 12 PM noon; 13 or more is refused). Returns a
// negative number for what EPANET refuses (as hour() returns -1).
double epanet_hours(const std::string& value, const std::string& unit);

// --duration: EPANET's forms ("24", "24:00", "24 HOURS", "1440 MIN") and a unit glued on or set
// apart ("24h", "90min", "1d", "86400s", "24 h"). Seconds; throws InputError naming the option.
long parse_duration(const std::string& text, const std::string& option = "--duration");

// "h:mm:ss" (hours beyond 24 kept), for messages and the step table.
std::string clock_text(long seconds);

}  // namespace cgs::net
