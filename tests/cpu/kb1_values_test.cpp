// problems/kb1_values: the row-varied inputs are what kb1's problems and their host checks assume:
// 24-bit uniform draws in their documented ranges, about one spike in 4096, neighbours and seeds
// uncorrelated (the bits are SplitMix64's stream; a weak hash would show here first).
#include "problems/kb1_values.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

namespace kiln::problems::kb1 {
namespace {

constexpr std::uint64_t kCount = 1 << 20;

TEST(Kb1Values, RowVariedValuesHaveTheirDistribution) {
  const std::uint64_t seed = 0x5EED1234ull;
  const RowShape shape{1.0f, 0.0f};
  double sum = 0.0, sum_sq = 0.0;
  int spikes = 0;
  for (std::uint64_t i = 0; i < kCount; ++i) {
    const float v = row_varied_value(seed, i, shape, false);
    if (std::fabs(v) > 1.0f) {
      ++spikes;
      EXPECT_LE(std::fabs(v), 16.0f);
      continue;
    }
    ASSERT_GE(v, -1.0f);
    ASSERT_LT(v, 1.0f);
    sum += v;
    sum_sq += static_cast<double>(v) * v;
  }
  const double n = static_cast<double>(kCount - spikes);
  EXPECT_NEAR(sum / n, 0.0, 0.005);                // uniform on [-1, 1): mean 0
  EXPECT_NEAR(sum_sq / n, 1.0 / 3.0, 0.005);       // variance 1/3
  EXPECT_NEAR(spikes, kCount / 4096.0, 4 * 16.0);  // 256 expected; 4 standard deviations
}

TEST(Kb1Values, PositiveValuesArePositive) {
  const RowShape shape{0.25f, -1.0f};
  for (std::uint64_t i = 0; i < 100000; ++i) EXPECT_GT(row_varied_value(99, i, shape, true), 0.0f);
}

// Correlation of x[i] with y[i] over the stream, for draws u in [0, 1) (rescaled values).
double correlation(const std::vector<double>& x, const std::vector<double>& y) {
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < x.size(); ++i) mx += x[i], my += y[i];
  mx /= x.size();
  my /= y.size();
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  return sxy / std::sqrt(sxx * syy);
}

TEST(Kb1Values, NeighboursAndSeedsAreUncorrelated) {
  const RowShape shape{1.0f, 0.0f};
  std::vector<double> a, next, other_seed, next_seed;
  for (std::uint64_t i = 0; i < kCount; ++i) {
    a.push_back(row_varied_value(7, i, shape, false));
    next.push_back(row_varied_value(7, i + 1, shape, false));
    other_seed.push_back(row_varied_value(8, i, shape, false));
    // Seeds a multiple of SplitMix64's step apart share one stream, shifted (the seeds kiln
    // passes are hashed, so this does not happen by accident): far-apart positions of it.
    next_seed.push_back(row_varied_value(7 + 0x9E3779B97F4A7C15ull, i + 1000, shape, false));
  }
  // 1/sqrt(2^20) ~ 0.001: 5 standard deviations.
  EXPECT_LT(std::fabs(correlation(a, next)), 0.005);
  EXPECT_LT(std::fabs(correlation(a, other_seed)), 0.005);
  EXPECT_LT(std::fabs(correlation(a, next_seed)), 0.005);
}

}  // namespace
}  // namespace kiln::problems::kb1
