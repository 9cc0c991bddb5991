// The order in which EPANET 2.3 eliminates the junctions of a network (smatrix.c: reordernodes,
// genmmd), so that netsolve's factorisation (sparse_cholesky.hpp) rounds as EPANET's does.
//
// Where a network's answer is set by rounding -- zones joined to the rest only by closed links'
// 1e-8 couplings, pumps at near-zero flow, knife-edge time steps -- the elimination order decides
// it: EPANET's own series changes when only the junctions are listed in another order. Eliminating
// in EPANET's order, with its left-looking factorisation, gives EPANET's answer there
// (BENCHMARKS.md section 11: ky14 from 2 of 30 variants equal to EPANET's to 30 of 30).
#pragma once

#include <vector>

#include "network/network.hpp"

namespace cgs::net {

// Liu's multiple minimum (external) degree ordering of a graph (A. George and J. W. H. Liu, "The
// evolution of the minimum degree ordering algorithm", SIAM Review 31, 1989), as EPANET runs it:
// one node eliminated per degree update (delta = -1), indistinguishable nodes merged into
// supernodes, ties broken by the order of the degree lists. neighbours[v]: v's neighbours
// (0-based, each once, no v), in the order EPANET lists them. Returns order[k] = the node
// eliminated k-th. The order of ties depends on the order of every list, so the lists must be
// given in EPANET's order (epanet_junction_graph) for EPANET's order to come out.
std::vector<int> multiple_minimum_degree(const std::vector<std::vector<int>>& neighbours);

// The junction graph as EPANET's localadjlists builds it: a junction's neighbours (junctions
// only) in reverse order of the links joining them (each link goes to the front of its end
// nodes' lists), a pair joined by parallel links once, at its first link.
std::vector<std::vector<int>> epanet_junction_graph(const Network& net);

// EPANET's elimination order of the network's junctions (order[k]: the junction eliminated k-th).
std::vector<int> epanet_elimination_order(const Network& net);

}  // namespace cgs::net
