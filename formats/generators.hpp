// Matrix generators: SPD test and benchmark matrices named by a spec, usable wherever a matrix
// file is accepted (`--matrix gen:poisson3d:128`).
//
//   gen:poisson2d:M          5-point Laplacian on an M x M grid (Dirichlet), n = M^2
//   gen:poisson3d:M          7-point Laplacian on an M x M x M grid (Dirichlet), n = M^3
//   gen:poisson3d:NX:NY:NZ   the same on an NX x NY x NZ box (weak scaling: 200:200:400 is
//                            two 200^3 slabs)
//   gen:powerlaw:N[:seed]    graph Laplacian + 0.1 I of a random graph whose degrees follow a
//                            power law (Chung-Lu, exponent 2.5): a few very long rows, many short
//   gen:banded:N:B           half-bandwidth B (rows of 2B + 1 entries), diagonal 2B + 1, -1 off
//   gen:waternet:N[:seed[:loops[:decades]]]
//                            a water-network-like planar graph: a random spanning tree of a grid
//                            plus loops (loops% of the other grid edges, default 20), 2-6
//                            nonzeros a row, conductance-like weights over `decades` decades
//                            (default 2), a few "reservoir" rows with an extra diagonal term
//   gen:elasticity2d:M       plane-strain Q1 stiffness on M x M elements, gen:elasticity3d:M
//                            trilinear on M^3, one face clamped (formats/elasticity.hpp)
//
// Every generated matrix is symmetric positive definite (each but the elasticity ones is a
// strictly or irreducibly diagonally dominant symmetric matrix with a positive diagonal; those
// are stiffness matrices with a clamped face) with column indices sorted in
// each row. Random generators use their own RNG (not <random>'s distributions, whose output
// differs between standard libraries), so a spec gives the same matrix on every platform.
#pragma once

#include <optional>
#include <string>

#include "formats/csr.hpp"

namespace cgs {

// True for "gen:..." (whether or not the rest is valid: generate_matrix says what is wrong).
bool is_generator_spec(const std::string& spec);

// Builds the matrix a spec names. Throws InputError naming the spec and listing the valid
// ones when it is malformed, or when the matrix would pass 2^31 - 1 nonzeros.
CsrMatrix<double> generate_matrix(const std::string& spec);

// Rows [first, first + count) of the matrix a spec names, with global column indices (cols is
// the whole matrix's n; rows past the end are left out): for the stencils (poisson2d, poisson3d,
// banded), whose rows are written one by one, so a distributed solve's ranks each generate their
// own. Nothing for the random graphs (powerlaw, waternet), whose rows depend on the whole graph.
// Throws InputError for a malformed spec, as generate_matrix does.
std::optional<CsrMatrix<double>> generate_matrix_rows(const std::string& spec, index_t first,
                                                      index_t count);

// A generator spec or a Matrix Market file (.mtx, .mtx.gz): the one entry point for programs
// that take a matrix.
CsrMatrix<double> load_matrix(const std::string& path_or_spec);

}  // namespace cgs
