// Reader for EPANET 2.x .inp files.
//
// Reads the sections that matter to the hydraulics, the water quality ([QUALITY], [REACTIONS],
// [SOURCES], [MIXING]: Network::quality), pump energy ([ENERGY]) and EPANET's output file
// ([TITLE]), skips the ones that do not ([COORDINATES], [VERTICES], [LABELS], [BACKDROP], [TAGS],
// [REPORT], [ROUGHNESS]), and converts everything to EPANET's internal units (ft, cfs).
// Every problem is an InputError naming the file and the line.
#pragma once

#include <istream>
#include <string>

#include "network/network.hpp"

namespace cgs::net {

Network read_inp(const std::string& path);
Network parse_inp(std::istream& in, const std::string& name);

}  // namespace cgs::net
