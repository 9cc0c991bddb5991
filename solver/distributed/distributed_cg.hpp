// The distributed CG loops: the one CG of solver/cg_step.hpp (its scalars, stop rule and
// breakdown tests) run by every rank on its rows, with the dot products summed over the ranks.
// Every rank takes the same decisions because every rank gets the same sums (RankOps::dots).
//
//   classic           the textbook iteration: two reductions per iteration (p.q; then r.r and
//                     r.z together), each an allreduce of one or two doubles.
//   single-reduction  Chronopoulos and Gear's form (1989): with s = A p and w = A u (u = M^-1 r)
//                     carried by recurrences, p.q = w.u - beta rz / alpha_prev, so r.r, r.u and
//                     w.u go in one allreduce per iteration. Same products, one more vector
//                     update; the recurrences drift from the true residual, so r = b - A x and
//                     s = A p are recomputed (residual replacement, two more products that
//                     iteration) whenever ||r|| has fallen 100-fold since the last replacement
//                     (reliable updating), or every `replace_every` iterations when that is set.
//                     Replacing at a fixed short period (50) cost 5% more iterations on an EPANET
//                     system with Jacobi (2112 against classic's 2001; the criterion: 2001).
//
// Each runs as one of two loops (--dist-loop):
//   plain  one RankOps call per operation: the product, then separate passes over the vectors
//          (x and r, z, p) — every variant, every device, every preconditioner.
//   fused  classic CG on ranks with fused passes (CPU ranks, pointwise M): two passes over the
//          rank's rows per iteration as in solver/fused/ (p formed inside the product, x lagging
//          one iteration; then r, z and the dots), the halo exchange still overlapping the local
//          block's product. Where it is not offered the plain loop runs (the result says which).
#pragma once

#include <string>

#include "solver/cg_types.hpp"
#include "solver/distributed/rank_ops.hpp"

namespace cgs::dist {

enum class CgVariant { classic, single_reduction };
CgVariant parse_cg_variant(const std::string& name);  // InputError for another name
std::string to_string(CgVariant variant);

enum class DistLoop { fused, plain };
DistLoop parse_dist_loop(const std::string& name);  // InputError for another name
std::string to_string(DistLoop loop);

struct DistributedCgOptions {
  CgOptions cg;  // max_iters resolved (> 0)
  CgVariant variant = CgVariant::classic;
  int replace_every = 0;            // single-reduction: replacement period; 0: by the criterion
  DistLoop loop = DistLoop::fused;  // asked for; fused_offered() says whether it runs
};

// Whether the fused loop runs for these options on these ranks (the same on every rank).
bool fused_offered(const RankOps& ops, const DistributedCgOptions& options);

struct DistributedCgResult {
  CgResult cg;
  long replacements = 0;  // single-reduction: residual replacements
  long fallbacks = 0;     // single-reduction: iterations that took p.Ap by a dot (see the loop)
  DistLoop loop = DistLoop::plain;  // the loop that ran
};

// Solves A x = b over all ranks (collective); b and x are the rank's rows in ops' memory, x
// holding the initial guess. The result is the same on every rank.
DistributedCgResult distributed_cg(RankOps& ops, const double* b, double* x,
                                   const DistributedCgOptions& options);

}  // namespace cgs::dist
