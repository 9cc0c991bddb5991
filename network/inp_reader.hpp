// Reader for EPANET 2.x .inp files.
//
// Reads the sections that matter to hydraulics, pump energy ([ENERGY]) and EPANET's output file
// ([QUALITY]'s initial values, [TITLE]), checks [SOURCES], skips the others ([COORDINATES],
// [VERTICES], [LABELS], [BACKDROP], [TAGS], [REACTIONS], [MIXING], [REPORT]), and converts
// everything to EPANET's internal units (ft, cfs).
// Every problem is an InputError naming the file and the line.
#pragma once

#include <istream>
#include <string>

#include "network/network.hpp"

namespace cgs::net {

Network read_inp(const std::string& path);
Network parse_inp(std::istream& in, const std::string& name);

}  // namespace cgs::net
