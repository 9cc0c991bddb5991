// netsolve's stable C++ API (docs/cpp-api.md): an EPANET network opened from a file or a string,
// run at its steady state or over an extended period (as the netsolve program runs it, with the
// same options), or put through a scenario study; results as arrays in the file's units.
//   auto net = cgsolve::network::Network::from_file("Net3.inp");
//   cgsolve::network::Results r = cgsolve::network::run(net, {.duration = "24h"});
//   r.head[t * r.node_ids.size() + i]   // node i's head at r.times[t]
// Needs nothing but the standard library; link cgsolve::network (find_package(cgsolve)).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cgsolve/api.hpp"  // InputError, DeviceError

namespace cgsolve::network {

// A network as read (InputError with EPANET's error number, words, file and line).
class Network {
 public:
  static Network from_file(const std::string& path);
  // The text of an .inp file; name stands for its file in messages.
  static Network from_string(const std::string& text, const std::string& name = "network.inp");
  ~Network();
  Network(Network&&) noexcept;
  Network& operator=(Network&&) noexcept;

  std::vector<std::string> node_ids() const;  // junctions, then reservoirs and tanks
  std::vector<std::string> link_ids() const;
  int junction_count() const;

  struct Impl;
  const Impl& impl() const { return *impl_; }

 private:
  explicit Network(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// netsolve's options by the same names (netsolve --help).
struct Options {
  std::string duration;           // "24h", "0" (the steady state); empty: the file's DURATION
  std::string solver = "direct";  // direct or cg
  std::string demand_model;       // dda or pda; empty: the file's
  // During the run, glibc keeps the memory it frees (mallopt: no mmap per large block, no
  // trimming), as the netsolve program does all its life: a fresh page's fault per vector made a
  // 24 h run of BWSN_Network_2 1.25x slower. glibc's documented defaults are set again after it.
  bool keep_freed_memory = true;
  // Any other option of the program by its name and value, e.g. {"--precond", "jacobi"},
  // {"--minimum-pressure", "5"}; a flag takes an empty value.
  std::vector<std::pair<std::string, std::string>> more;
};

// The reporting times' results, each array times.size() x count, time-major: the columns of
// netsolve --nodes, --links and --tanks, in full double precision (the CSV has 10 digits).
struct Results {
  std::vector<long> times;  // seconds
  std::vector<std::string> node_ids, link_ids, tank_ids;
  std::vector<double> head, pressure, demand, required_demand, delivered_demand, deficit,
      deficit_pct, leakage;  // leakage: EPANET's EN_LEAKAGEFLOW (pipes' leaks at the node)
  std::vector<std::uint8_t> cut_off;  // 1: joined to no reservoir or tank at that time
  std::vector<double> flow, headloss;
  std::vector<std::uint8_t> open;  // the CSV's status: 1 open, 0 closed
  std::vector<double> level, tank_head, volume;
  // The run: as the program's JSON report (--report) has it, as JSON text.
  std::string summary_json;
  bool completed = false;   // every period up to the duration solved
  bool unbalanced = false;  // a period ended unbalanced (the program's exit 5)
  std::string error;        // a period that could not be solved (EPANET's error 110)
};

Results run(const Network& net, const Options& options = {});

// A scenario study (netsolve --study KIND: fireflow, closure, demand:N[:cv[:seed]]); the CSV text
// that --study-csv writes, one row per scenario and the baseline.
std::string study(const Network& net, const std::string& kind, const Options& options = {});

}  // namespace cgsolve::network
