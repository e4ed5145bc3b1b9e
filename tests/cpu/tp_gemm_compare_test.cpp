// The tensor-parallel GEMM problems' output comparison (problems/tp_gemm_common.hpp) without a
// GPU: two bf16 reductions over ranks in different orders (NCCL's ring for the reference, another
// order for a solution) pass at 2, 4 and 8 ranks; a missing rank, a wrong block and an unwritten
// element fail.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "core/half_bits.hpp"
#include "problems/tp_gemm_common.hpp"

namespace kiln::problems {
namespace {

// Each element: `ranks` bf16 partials (GEMM outputs, roughly normal), summed in bf16 in the order
// given (a rounding after every addition, as a bf16 all-reduce does).
struct Partials {
  int ranks;
  std::vector<float> values;  // [element][rank]
  float at(std::size_t e, int r) const { return values[e * ranks + r]; }
};

Partials random_partials(int ranks, std::size_t elements, unsigned seed) {
  std::mt19937 random(seed);
  std::normal_distribution<float> normal(0.0f, 40.0f);  // |sums| up to ~300: ulps of 1 and 2
  Partials p{ranks, std::vector<float>(elements * ranks)};
  for (float& v : p.values) v = core::round_to_bf16(normal(random));
  return p;
}

std::vector<float> bf16_sum(const Partials& p, const std::vector<int>& order, int skip = -1) {
  std::vector<float> out(p.values.size() / p.ranks);
  for (std::size_t e = 0; e < out.size(); ++e) {
    float sum = 0.0f;
    bool first = true;
    for (int r : order) {
      if (r == skip) continue;
      sum = first ? p.at(e, r) : core::round_to_bf16(sum + p.at(e, r));
      first = false;
    }
    out[e] = sum;
  }
  return out;
}

std::vector<int> ring_order(int ranks, int start) {
  std::vector<int> order;
  for (int i = 0; i < ranks; ++i) order.push_back((start + i) % ranks);
  return order;
}

TEST(TpGemmCompare, ReductionsOverRanksInAnotherOrderPass) {
  for (int ranks : {2, 4, 8}) {
    const Partials p = random_partials(ranks, 1 << 18, 11u + ranks);
    const std::vector<float> want = bf16_sum(p, ring_order(ranks, 0));
    for (int start = 1; start < ranks; ++start) {
      std::vector<int> reversed = ring_order(ranks, start);
      std::reverse(reversed.begin(), reversed.end());
      EXPECT_EQ(compare_relative(want, bf16_sum(p, reversed), 0, ranks), "") << ranks;
    }
  }
}

TEST(TpGemmCompare, MissingRankWrongBlockAndUnwrittenElementFail) {
  for (int ranks : {2, 4, 8}) {
    const Partials p = random_partials(ranks, 1 << 16, 3u + ranks);
    const std::vector<int> order = ring_order(ranks, 0);
    const std::vector<float> want = bf16_sum(p, order);
    EXPECT_NE(compare_relative(want, bf16_sum(p, order, /*skip=*/ranks - 1), 0, ranks), "")
        << ranks;
    std::vector<float> shifted = want;  // one 256-element block from elsewhere
    for (int e = 0; e < 256; ++e) shifted[1024 + e] = want[4096 + e];
    EXPECT_NE(compare_relative(want, shifted, 0, ranks), "") << ranks;
    std::vector<float> unwritten = want;
    unwritten[77] = std::numeric_limits<float>::quiet_NaN();
    EXPECT_NE(compare_relative(want, unwritten, 0, ranks), "") << ranks;
  }
}

// A reference that is not finite fails the comparison (it would otherwise make every tolerance
// pass or fail by accident), and names which side is at fault.
TEST(TpGemmCompare, NonFiniteReferenceOrOutputIsNamed) {
  std::vector<float> want(64, 1.0f), got(64, 1.0f);
  EXPECT_EQ(compare_relative(want, got, 0, 2), "");
  want[5] = std::numeric_limits<float>::infinity();
  EXPECT_NE(compare_relative(want, got, 3, 2).find("rank 3: reference element 5 is not finite"),
            std::string::npos);
  want[5] = 1.0f;
  got[9] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_NE(compare_relative(want, got, 0, 2).find("element 9 is not finite (unwritten)"),
            std::string::npos);
  core::RelativeDifference d;
  d.max_abs_want = 100.0;
  d.max_abs_difference = 1.01;  // just above 1e-2 of 100
  EXPECT_NE(judge_relative(d, 0, 2), "");
  d.max_abs_difference = 0.99;
  EXPECT_EQ(judge_relative(d, 0, 2), "");
}

TEST(TpGemmCompare, ToleranceGrowsWithTheRanksSummedFromOnePercent) {
  EXPECT_DOUBLE_EQ(relative_tolerance(1), 1e-2);
  EXPECT_DOUBLE_EQ(relative_tolerance(2), 1e-2);
  EXPECT_DOUBLE_EQ(relative_tolerance(4), 3.0 / 128);
  EXPECT_DOUBLE_EQ(relative_tolerance(8), 7.0 / 128);
}

}  // namespace
}  // namespace kiln::problems
