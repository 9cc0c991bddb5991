// Format containers, conversions, row sorting and statistics.
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "formats/convert.hpp"
#include "formats/generators.hpp"
#include "formats/row_order.hpp"
#include "formats/stats.hpp"
#include "test_matrices.hpp"

using namespace cgs;
using namespace cgs::testing;

namespace {
// 4 x 4 with row lengths 2, 0, 3, 1:
//  [1 0 2 0]
//  [0 0 0 0]
//  [3 4 0 5]
//  [0 0 6 0]
CsrMatrix<double> small() {
  return {4, 4, {0, 2, 2, 5, 6}, {0, 2, 0, 1, 3, 2}, {1, 2, 3, 4, 5, 6}};
}
}  // namespace

TEST_CASE("csr_from_triplets sorts entries and sums duplicates") {
  const CsrMatrix<double> A =
      csr_from_triplets<double>(3, 3, {2, 0, 2, 0, 2}, {1, 2, 1, 0, 0}, {1.0, 2.0, 3.0, 4.0, 5.0});
  CHECK(A.row_ptr == std::vector<index_t>{0, 2, 2, 4});
  CHECK(A.col_idx == std::vector<index_t>{0, 2, 0, 1});
  CHECK(A.values == std::vector<double>{4.0, 2.0, 5.0, 4.0});
}

TEST_CASE("COO lists the entries by row with their rows") {
  const CooMatrix<double> C = to_coo(small());
  CHECK(C.row_idx == std::vector<index_t>{0, 0, 2, 2, 2, 3});
  CHECK(C.col_idx == std::vector<index_t>{0, 2, 0, 1, 3, 2});
}

TEST_CASE("ELL is column-major, padded with zeros at valid columns") {
  const EllMatrix<double> E = to_ell(small());
  CHECK(E.width == 3);
  CHECK(E.row_length == std::vector<index_t>{2, 0, 3, 1});
  // slot j of row i at j * rows + i
  CHECK(E.values == std::vector<double>{1, 0, 3, 6, 2, 0, 4, 0, 0, 0, 5, 0});
  CHECK(E.col_idx[E.slot(2, 2)] == 3);
  CHECK(E.col_idx[E.slot(0, 2)] == 2);  // padding: the row's last column
  CHECK(E.col_idx[E.slot(1, 0)] == 0);  // empty row: column 0
  for (index_t c : E.col_idx) CHECK((c >= 0 && c < 4));
}

TEST_CASE("HLL hacks have their own widths, offsets and a padded last hack") {
  const HllMatrix<double> H = to_hll(small(), 3);  // hacks: rows 0-2, row 3 (+2 padding rows)
  CHECK(H.hacks() == 2);
  CHECK(H.hack_width == std::vector<index_t>{3, 1});
  CHECK(H.hack_offset == std::vector<offset_t>{0, 9, 12});
  // hack 0, slot j of local row r at j * 3 + r
  CHECK(std::vector<double>(H.values.begin(), H.values.begin() + 9) ==
        std::vector<double>{1, 0, 3, 2, 0, 4, 0, 0, 5});
  CHECK(std::vector<double>(H.values.begin() + 9, H.values.end()) == std::vector<double>{6, 0, 0});
  CHECK(H.col_idx[9] == 2);
  for (index_t c : H.col_idx) CHECK((c >= 0 && c < 4));
  CHECK_THROWS_AS(to_hll(small(), 0), InputError);
}

TEST_CASE("HLL with a HYB tail: the hacks hold each row's first entries, the tail the rest") {
  const HllMatrix<double> H = to_hll(small(), 3, 1);  // rows 0 (2 entries) and 2 (3) go past 1
  CHECK(H.hack_width == std::vector<index_t>{1, 1});
  CHECK(H.hack_offset == std::vector<offset_t>{0, 3, 6});
  CHECK(H.values == std::vector<double>{1, 0, 3, 6, 0, 0});
  CHECK(H.row_length == std::vector<index_t>{2, 0, 3, 1});  // whole lengths
  CHECK(H.tail_rows == std::vector<index_t>{0, 2});
  CHECK(H.tail_ptr == std::vector<index_t>{0, 1, 3});
  CHECK(H.tail_values == std::vector<double>{2, 4, 5});
  CHECK(H.tail_col_idx.back() == 3);
  CHECK(H.tail_nnz() == 3);
  // New values in CSR order land in the hacks and the tail alike.
  HllMatrix<double> G = H;
  const std::vector<double> doubled = {2, 4, 6, 8, 10, 12};
  assign_values(G, doubled.data());
  CHECK(G.values == std::vector<double>{2, 0, 6, 12, 0, 0});
  CHECK(G.tail_values == std::vector<double>{4, 8, 10});
  // Threshold 0: everything in the tail; at the longest row or past it: no tail.
  CHECK(to_hll(small(), 3, 0).hack_offset.back() == 0);
  CHECK(to_hll(small(), 3, 0).tail_nnz() == 6);
  CHECK(to_hll(small(), 3, 3).tail_rows.empty());
  CHECK(to_hll(small(), 3).tail_rows.empty());
  CHECK_THROWS_AS(to_hll(small(), 3, -1), InputError);
}

TEST_CASE("the HYB tail threshold comes from the row lengths: long rows in, regular rows out") {
  // One row holding a third of the nonzeros: it alone goes to the tail.
  const HllTail hub = choose_hll_tail(hub_and_chain(1000), 32);
  REQUIRE(hub.any());
  CHECK(hub.rows == 1);
  CHECK(hub.from < 10);
  CHECK(hub.slots * 5 < hub.slots_without);
  // Power-law rows (mean 7, the longest thousands): a tail of a few per cent of the rows.
  const CsrMatrix<double> P = generate_matrix("gen:powerlaw:20000");
  const HllTail power = choose_hll_tail(P, 32);
  REQUIRE(power.any());
  CHECK(power.rows < P.rows / 5);
  CHECK(power.from >= 4);
  CHECK(double(power.slots) + kHllTailEntryCost * double(power.nnz) +
            kHllTailRowCost * double(power.rows) <
        (1 - kHllTailMinSaving) * double(power.slots_without));
  // Regular matrices keep one kernel: no tail.
  CHECK_FALSE(choose_hll_tail(poisson2d(40), 32).any());
  CHECK_FALSE(choose_hll_tail(generate_matrix("gen:waternet:5000"), 32).any());
  CHECK_FALSE(choose_hll_tail(CsrMatrix<double>{}, 32).any());
  CHECK_FALSE(choose_hll_tail(CsrMatrix<double>{1, 1, {0, 0}, {}, {}}, 32).any());
}

namespace {

// y = H x through the container alone (hacks, tail, storage order): checks the layout itself,
// independently of every kernel.
std::vector<double> product_through_layout(const HllMatrix<double>& H,
                                           const std::vector<double>& x) {
  std::vector<double> y(std::size_t(H.rows), 0.0);
  for (index_t s = 0; s < H.rows; ++s) {
    const index_t h = s / H.hack_size, local = s % H.hack_size;
    double sum = 0;
    for (index_t j = 0; j < std::min(H.row_length[s], H.tail_from); ++j) {
      const offset_t slot = H.hack_offset[h] + offset_t(j) * H.hack_size + local;
      sum += H.values[slot] * x[H.col_idx[slot]];
    }
    const auto t = std::find(H.tail_rows.begin(), H.tail_rows.end(), s);
    if (t != H.tail_rows.end())
      for (index_t k = H.tail_ptr[t - H.tail_rows.begin()];
           k < H.tail_ptr[t - H.tail_rows.begin() + 1]; ++k)
        sum += H.tail_values[k] * x[H.tail_col_idx[k]];
    y[H.row_of_slot(s)] += sum;
  }
  return y;
}

}  // namespace

TEST_CASE("SELL-C-sigma: rows sorted by length inside each window, stable, storage order only") {
  // small(): lengths 2, 0, 3, 1. One window of 4 rows, hacks of 2: rows 2, 0 | 3, 1.
  const HllMatrix<double> H = to_hll(small(), 2, kNoHllTail, 4);
  CHECK(H.sigma == 4);
  CHECK(H.slot_row == std::vector<index_t>{2, 0, 3, 1});
  CHECK(H.row_slot == std::vector<index_t>{1, 3, 0, 2});
  CHECK(H.row_length == std::vector<index_t>{3, 2, 1, 0});  // by slot
  CHECK(H.hack_width == std::vector<index_t>{3, 1});
  CHECK(H.hack_offset == std::vector<offset_t>{0, 6, 8});
  CHECK(H.values == std::vector<double>{3, 1, 4, 2, 5, 0, 6, 0});
  CHECK(H.col_idx[5] == 2);  // row 0's padding: its last column
  // Windows of 2 rows (0, 1 | 2, 3) are sorted already: the layout of the rows' own order.
  const HllMatrix<double> same = to_hll(small(), 2, kNoHllTail, 2);
  const HllMatrix<double> plain = to_hll(small(), 2);
  CHECK_FALSE(same.sorted());
  CHECK(same.values == plain.values);
  CHECK(same.col_idx == plain.col_idx);
  // Ties keep their order: lengths 1, 2, 1, 2 -> rows 1, 3, 0, 2.
  const CsrMatrix<double> ties{4, 4, {0, 1, 3, 4, 6}, {0, 0, 1, 2, 2, 3}, {1, 2, 3, 4, 5, 6}};
  CHECK(sigma_order(ties, 4) == std::vector<index_t>{1, 3, 0, 2});
  CHECK(sigma_order(ties, 64) == std::vector<index_t>{1, 3, 0, 2});  // a window past n
  // The HYB tail on the sorted hacks, in slot order; new values in CSR order land in place.
  HllMatrix<double> T = to_hll(small(), 2, 1, 4);
  CHECK(T.tail_rows == std::vector<index_t>{0, 1});  // slots of rows 2 and 0
  CHECK(T.tail_ptr == std::vector<index_t>{0, 2, 3});
  CHECK(T.tail_values == std::vector<double>{4, 5, 2});
  CHECK(T.values == std::vector<double>{3, 1, 6, 0});
  const std::vector<double> doubled = {2, 4, 6, 8, 10, 12};
  assign_values(T, doubled.data());
  CHECK(T.values == std::vector<double>{6, 2, 12, 0});
  CHECK(T.tail_values == std::vector<double>{8, 10, 4});
  CHECK_THROWS_AS(to_hll(small(), 2, kNoHllTail, 3), InputError);  // not whole hacks
  CHECK_THROWS_AS(to_hll(small(), 2, kNoHllTail, -2), InputError);
}

TEST_CASE("SELL-C-sigma layouts multiply as the dense matrix: windows, tails, odd sizes") {
  std::vector<NamedMatrix> matrices = {
      {"n = 1", random_matrix(1, 1, 4)},
      {"n = 1 empty", CsrMatrix<double>{1, 1, {0, 0}, {}, {}}},
      {"n = 45 with empty rows", random_matrix(45, 20, 2, 3)},
      {"n = 203, one row of 150", random_matrix(203, 8, 3, 0, 150)},
      {"gen:powerlaw:700", generate_matrix("gen:powerlaw:700")}};
  for (const NamedMatrix& m : matrices) {
    const std::vector<double> x = random_vector(std::size_t(m.A.cols), 5);
    const std::vector<double> expected = dense_product(m.A, x);
    for (index_t hack_size : {1, 4, 32})
      for (index_t windows : {0, 1, 2, 3, 50})  // sigma = windows x hack size; 50 x 32 > n
        for (index_t tail : {kNoHllTail, 0, 2, 7}) {
          CAPTURE(m.name);
          CAPTURE(hack_size);
          CAPTURE(windows);
          CAPTURE(tail);
          const HllMatrix<double> H = to_hll(m.A, hack_size, tail, windows * hack_size);
          CHECK(relative_error(product_through_layout(H, x), expected) <= 1e-13);
          if (!H.sorted()) continue;
          for (index_t s = 0; s < H.rows; ++s) {  // a window's slots hold its own rows
            CHECK(H.slot_row[s] / H.sigma == s / H.sigma);
            CHECK(H.row_slot[H.slot_row[s]] == s);
          }
        }
  }
}

TEST_CASE("the sort window comes from the row lengths: power-law rows sorted, regular rows not") {
  const CsrMatrix<double> P = generate_matrix("gen:powerlaw:20000");
  const HllOrder power = choose_hll_sigma(P, 32);
  REQUIRE(power.sorted());
  CHECK(power.sigma % 32 == 0);
  CHECK(power.tail.from <= kHllSortedMaxWidth);  // no thread walks a row of thousands
  CHECK(power.tail.cost() <= (1 - kHllSortMinSaving) * power.unsorted.cost());
  CHECK(power.tail.slots * 10 < power.unsorted.slots * 7);  // the hacks pad materially less
  std::vector<index_t> lengths(P.rows);
  for (index_t r = 0; r < P.rows; ++r) lengths[r] = P.row_length(r);
  const std::vector<HllSigmaCandidate> all = hll_sigma_candidates(lengths, 32);
  double best = all.front().tail.cost();
  for (const HllSigmaCandidate& c : all) best = std::min(best, c.tail.cost());
  for (const HllSigmaCandidate& c : all) {
    CAPTURE(c.sigma);
    if (c.sigma > 0 && c.sigma < power.sigma) CHECK(c.tail.cost() > (1 + kHllSigmaSlack) * best);
    // The model's counts are the layout's.
    const HllMatrix<double> H = to_hll(P, 32, c.tail.from, c.sigma);
    CHECK(H.hack_offset.back() == c.tail.slots);
    CHECK(H.tail_nnz() == c.tail.nnz);
    CHECK(index_t(H.tail_rows.size()) == c.tail.rows);
    CHECK(to_hll(P, 32, kNoHllTail, c.sigma).hack_offset.back() == c.tail.slots_without);
  }
  CHECK(power.tail.from == choose_hll_tail(P, 32, power.sigma).from);
  // Regular rows keep their order: Poisson, water networks (generated and from data/), bcsstk13.
  for (const std::string spec : {"gen:poisson2d:40", "gen:waternet:5000",
                                 CGSOLVE_SOURCE_DIR "/data/systems/Exnet_EXN_step3.mtx.gz",
                                 CGSOLVE_SOURCE_DIR "/data/systems/Net3_step1.mtx.gz",
                                 CGSOLVE_SOURCE_DIR "/data/matrices/bcsstk13.mtx"}) {
    CAPTURE(spec);
    const CsrMatrix<double> A = load_matrix(spec);
    const HllOrder order = choose_hll_sigma(A, 32);
    CHECK_FALSE(order.sorted());
    CHECK(order.tail.from == choose_hll_tail(A, 32).from);
  }
  CHECK_FALSE(choose_hll_sigma(CsrMatrix<double>{}, 32).sorted());
  CHECK_FALSE(choose_hll_sigma(CsrMatrix<double>{1, 1, {0, 0}, {}, {}}, 32).sorted());
}

TEST_CASE("rows sorted by descending length, ties in original order") {
  const RowPermutation P = sort_rows_by_length(small());
  CHECK(P.new_to_old == std::vector<index_t>{2, 0, 3, 1});
  CsrMatrix<double> A = poisson2d(3);  // lengths 3 4 3 / 4 5 4 / 3 4 3
  CHECK(sort_rows_by_length(A).new_to_old == std::vector<index_t>{4, 1, 3, 5, 7, 0, 2, 6, 8});
}

TEST_CASE("P A P^T moves rows and columns together and keeps symmetry") {
  const CsrMatrix<double> A = random_spd(40, 3, 11);
  const RowPermutation P = sort_rows_by_length(A);
  const CsrMatrix<double> B = permute_symmetric(A, P);
  const std::vector<double> DA = to_dense(A), DB = to_dense(B);
  for (index_t i = 0; i < 40; ++i)
    for (index_t j = 0; j < 40; ++j)
      CHECK(DB[i * 40 + j] == DA[P.new_to_old[i] * 40 + P.new_to_old[j]]);
  CHECK(is_symmetric(B, 0.0, nullptr, nullptr));
  for (index_t r = 0; r < B.rows; ++r)
    CHECK(std::is_sorted(B.col_idx.begin() + B.row_ptr[r], B.col_idx.begin() + B.row_ptr[r + 1]));
  const std::vector<double> v{1, 2, 3, 4};
  const RowPermutation Q = sort_rows_by_length(small());
  CHECK(Q.to_new(v) == std::vector<double>{3, 1, 4, 2});
  CHECK(Q.to_original(Q.to_new(v)) == v);
}

namespace {

index_t bandwidth(const CsrMatrix<double>& A) {
  index_t band = 0;
  for (index_t r = 0; r < A.rows; ++r)
    for (index_t e = A.row_ptr[r]; e < A.row_ptr[r + 1]; ++e)
      band = std::max(band, std::abs(A.col_idx[e] - r));
  return band;
}

bool is_permutation_of_rows(const RowPermutation& P, index_t n) {
  std::vector<index_t> sorted = P.new_to_old;
  std::sort(sorted.begin(), sorted.end());
  std::vector<index_t> all(n);
  std::iota(all.begin(), all.end(), 0);
  return sorted == all;
}

// P A P^T with a random P (fixed seed): the scattered numbering RCM has to undo.
CsrMatrix<double> shuffled(const CsrMatrix<double>& A, unsigned seed) {
  RowPermutation P;
  P.new_to_old.resize(A.rows);
  std::iota(P.new_to_old.begin(), P.new_to_old.end(), 0);
  std::shuffle(P.new_to_old.begin(), P.new_to_old.end(), std::mt19937(seed));
  return permute_symmetric(A, P);
}

// Reverse Cuthill-McKee as the textbook writes it (George and Liu's pseudo-peripheral root from
// each part's first row, up to 8 breadth-first passes; each row's new neighbours by increasing
// degree, ties in column order, by std::stable_sort): the order formats/row_order.cpp must give.
RowPermutation textbook_rcm(const CsrMatrix<double>& A) {
  const index_t n = A.rows;
  auto degree = [&](index_t r) { return A.row_ptr[r + 1] - A.row_ptr[r]; };
  std::vector<char> numbered(std::size_t(n), 0);
  std::vector<index_t> order;
  for (index_t first = 0; first < n; ++first) {
    if (numbered[std::size_t(first)]) continue;
    index_t root = first, eccentricity = -1;
    for (int attempt = 0; attempt < 8; ++attempt) {
      std::vector<index_t> depth(std::size_t(n), -1), queue{root};
      depth[std::size_t(root)] = 0;
      for (std::size_t k = 0; k < queue.size(); ++k)
        for (index_t e = A.row_ptr[queue[k]]; e < A.row_ptr[queue[k] + 1]; ++e) {
          const index_t c = A.col_idx[e];
          if (numbered[std::size_t(c)] || depth[std::size_t(c)] >= 0) continue;
          depth[std::size_t(c)] = depth[std::size_t(queue[k])] + 1;
          queue.push_back(c);
        }
      const index_t deepest = depth[std::size_t(queue.back())];
      if (deepest <= eccentricity) break;
      eccentricity = deepest;
      index_t best = queue.back();
      for (index_t r : queue)
        if (depth[std::size_t(r)] == deepest && degree(r) < degree(best)) best = r;
      root = best;
    }
    std::size_t k = order.size();
    order.push_back(root);
    numbered[std::size_t(root)] = 1;
    for (; k < order.size(); ++k) {
      std::vector<index_t> fresh;
      for (index_t e = A.row_ptr[order[k]]; e < A.row_ptr[order[k] + 1]; ++e)
        if (!numbered[std::size_t(A.col_idx[e])]) {
          numbered[std::size_t(A.col_idx[e])] = 1;
          fresh.push_back(A.col_idx[e]);
        }
      std::stable_sort(fresh.begin(), fresh.end(),
                       [&](index_t a, index_t b) { return degree(a) < degree(b); });
      order.insert(order.end(), fresh.begin(), fresh.end());
    }
  }
  std::reverse(order.begin(), order.end());
  return RowPermutation{order};
}

}  // namespace

TEST_CASE("reverse Cuthill-McKee: a permutation that brings neighbours together") {
  SUBCASE("the textbook's order exactly: grids, a hub of 998 neighbours, power-law rows") {
    for (const CsrMatrix<double>& A :
         {shuffled(poisson2d(30), 5), shuffled(hub_and_chain(1000), 7), hub_and_chain(1000),
          shuffled(generate_matrix("gen:powerlaw:5000"), 11), poisson2d(1)}) {
      CAPTURE(A.rows);
      CHECK(reverse_cuthill_mckee(A).new_to_old == textbook_rcm(A).new_to_old);
    }
  }
  SUBCASE("a shuffled path becomes tridiagonal again") {
    std::vector<index_t> r, c;
    std::vector<double> v;
    for (index_t i = 0; i < 200; ++i)
      for (index_t j = std::max<index_t>(0, i - 1); j <= std::min<index_t>(199, i + 1); ++j) {
        r.push_back(i);
        c.push_back(j);
        v.push_back(i == j ? 2.0 : -1.0);
      }
    const CsrMatrix<double> path = csr_from_triplets(200, 200, r, c, v);
    const CsrMatrix<double> A = shuffled(path, 3);
    REQUIRE(bandwidth(A) > 50);
    const RowPermutation P = reverse_cuthill_mckee(A);
    REQUIRE(is_permutation_of_rows(P, A.rows));
    CHECK(bandwidth(permute_symmetric(A, P)) == 1);
  }
  SUBCASE("a shuffled 30 x 30 grid gets back to a band of about its width") {
    const CsrMatrix<double> A = shuffled(poisson2d(30), 5);
    REQUIRE(bandwidth(A) > 500);
    const RowPermutation P = reverse_cuthill_mckee(A);
    REQUIRE(is_permutation_of_rows(P, A.rows));
    const CsrMatrix<double> B = permute_symmetric(A, P);
    CHECK(bandwidth(B) <= 60);
    CHECK(is_symmetric(B, 0.0, nullptr, nullptr));
  }
  SUBCASE("parts not connected to each other, lone rows, n = 1, n = 0") {
    // Two grids side by side (no entry between them) and 5 rows with only a diagonal.
    const CsrMatrix<double> grid = poisson2d(6);
    std::vector<index_t> r, c;
    std::vector<double> v;
    for (index_t copy = 0; copy < 2; ++copy)
      for (index_t row = 0; row < 36; ++row)
        for (index_t e = grid.row_ptr[row]; e < grid.row_ptr[row + 1]; ++e) {
          r.push_back(copy * 36 + row);
          c.push_back(copy * 36 + grid.col_idx[e]);
          v.push_back(grid.values[e]);
        }
    for (index_t row = 72; row < 77; ++row) {
      r.push_back(row);
      c.push_back(row);
      v.push_back(1.0);
    }
    const CsrMatrix<double> A = shuffled(csr_from_triplets(77, 77, r, c, v), 9);
    const RowPermutation P = reverse_cuthill_mckee(A);
    REQUIRE(is_permutation_of_rows(P, 77));
    CHECK(bandwidth(permute_symmetric(A, P)) <= 12);
    CHECK(reverse_cuthill_mckee(poisson2d(1)).new_to_old == std::vector<index_t>{0});
    CHECK(reverse_cuthill_mckee(CsrMatrix<double>{}).new_to_old.empty());
  }
  CHECK_THROWS_AS(reverse_cuthill_mckee(random_varying(40, 70, 70, 104)), InputError);
}

TEST_CASE("symmetry check finds the asymmetric entry") {
  index_t row = -1, col = -1;
  CHECK(is_symmetric(poisson2d(4), 0.0, &row, &col));
  CsrMatrix<double> A = poisson2d(4);
  A.values[1] += 1e-3;  // A(0,1) changes, A(1,0) does not
  CHECK_FALSE(is_symmetric(A, 1e-12, &row, &col));
  CHECK(((row == 0 && col == 1) || (row == 1 && col == 0)));
  CHECK_FALSE(is_symmetric(small(), 0.0, &row, &col));
  CHECK(transpose(transpose(small())).values == small().values);
}

TEST_CASE("statistics: lengths, deviation, fill and bytes") {
  const MatrixStats s = compute_stats(small(), 2);
  CHECK(s.rows == 4);
  CHECK(s.nnz == 6);
  CHECK(s.min_row_length == 0);
  CHECK(s.max_row_length == 3);
  CHECK(s.empty_rows == 1);
  CHECK(s.mean_row_length == doctest::Approx(1.5));
  // |2-1.5| + |0-1.5| + |3-1.5| + |1-1.5| = 4; 4 / 4 rows / 1.5 = 66.7 %
  CHECK(s.row_length_avg_deviation_pct == doctest::Approx(66.6667).epsilon(1e-4));
  CHECK(s.ell_fill == doctest::Approx(12.0 / 6));
  CHECK(s.hll_fill == doctest::Approx((2 * 2 + 3 * 2) / 6.0));  // hacks of 2: widths 2 and 3
  CHECK(s.bytes_csr == 6 * 12 + 5 * 4);
  CHECK(format_stats(s).find("avg deviation 66.7%") != std::string::npos);
}

TEST_CASE("ELL size guard: fill ratio and memory limit") {
  MatrixStats s = compute_stats(random_matrix(2000, 4, 3, 0, 1500), 32);
  CHECK_THROWS_AS(check_ell_size(s, 10.0, std::size_t(1) << 40), InputError);
  CHECK_NOTHROW(check_ell_size(s, 1e6, std::size_t(1) << 40));
  CHECK_THROWS_WITH_AS(check_ell_size(s, 1e6, 1000), doctest::Contains("more than the limit"),
                       InputError);
}
