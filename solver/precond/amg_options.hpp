// The options of `--precond amg:key=value,...`, amgcl's way: the fields with their defaults and a
// line each (AmgOptions, amg::HierarchyOptions in amg_hierarchy.hpp), and one table of keys
// (amg_keys) from which the parser, its error messages, `cgsolve --help-precond amg` and the
// block of docs/amg.md all come, so that none of them can drift from the others.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "solver/precond/amg_hierarchy.hpp"
#include "solver/precond/preconditioner.hpp"  // PrecondSpec

namespace cgs::precond {

enum class Smoother { chebyshev, jacobi };

struct AmgOptions {
  amg::HierarchyOptions hierarchy;          // what shapes the hierarchy
  Smoother smoother = Smoother::chebyshev;  // before and after each coarse correction
  int sweeps = 2;                           // Chebyshev degree, or Jacobi steps, each time
  // A near-nullspace (amg_nullspace.hpp), loaded at the set-up where the rows are known:
  std::string nullspace_file;  // n x k dense Matrix Market (`nullspace`)
  std::string coords;          // nodes x d coordinates, or gen:elasticity2d|3d:M (`coords`)
  int block = 0;               // rows a node (`block`); 0: 1, or d with coords
  bool has_nullspace() const { return !nullspace_file.empty() || !coords.empty() || block > 0; }
};

// One key of `amg:key=value,...`.
struct AmgKey {
  const char* name;
  std::string values;  // what it takes, for the help: "1..20", "cheb|jacobi"
  const char* help;    // one line
  // Sets the field from `value`; returns why the value is refused, or "".
  std::function<std::string(AmgOptions&, const std::string& value)> set;
  // The field's value as the key would set it (the help prints the defaults' through it).
  std::function<std::string(const AmgOptions&)> show;
};

const std::vector<AmgKey>& amg_keys();

// The options `spec` ("amg:levels=6,smoother=jacobi") asks for, over AmgOptions' defaults;
// InputError naming the key, the value and the known keys otherwise.
AmgOptions parse_amg_options(const PrecondSpec& spec);

// The table as text, a key a line with what it takes, its help and its default: what
// `cgsolve --help-precond amg` prints and docs/amg.md holds.
std::string amg_options_help();

}  // namespace cgs::precond
