// Linear elasticity stiffness matrices on a box: the structural test problem of AMG's
// near-nullspace (`--precond amg:coords=...`), usable wherever a matrix is accepted:
//
//   gen:elasticity2d:M   plane strain, M x M bilinear (Q1) square elements on [0,1]^2
//   gen:elasticity3d:M   M x M x M trilinear hexahedra on [0,1]^3
//
// Young's modulus 1, Poisson's ratio 0.3, 2 x 2 (x 2) Gauss points, the nodes on the face x = 0
// clamped (their rows and columns left out), so the matrix is symmetric positive definite;
// dofs interleaved by node (u_x, u_y[, u_z] of node 0, then node 1, ...), nodes numbered x
// fastest, then y, then z. The coordinates of the matrix's nodes come with it (coords), so
// rigid-body modes can be made from them.
#pragma once

#include <string>
#include <vector>

#include "formats/csr.hpp"

namespace cgs {

struct ElasticityProblem {
  CsrMatrix<double> A;
  int dim = 2;
  std::vector<double> coords;  // nodes x dim, row by row: node p's coordinates at p * dim
};

// The stiffness matrix of an M^dim element box (dim 2 or 3); clamped false keeps every node
// (singular: the rigid-body modes are its kernel); matrix false leaves A empty (the coordinates
// alone, for `amg:coords=gen:...`).
ElasticityProblem elasticity_problem(int dim, index_t m, bool clamped = true, bool matrix = true);

// The problem a spec names ("gen:elasticity2d:M", "gen:elasticity3d:M"); nothing for another
// spec. Throws InputError for a malformed elasticity spec.
bool is_elasticity_spec(const std::string& spec);
ElasticityProblem elasticity_from_spec(const std::string& spec, bool matrix = true);

}  // namespace cgs
