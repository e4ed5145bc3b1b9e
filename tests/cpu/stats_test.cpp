#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/error.hpp"
#include "core/event_timer.hpp"
#include "core/stats.hpp"

using kiln::core::summarize;

TEST(Stats, OddCountMedianMinMaxMean) {
  const std::vector<double> samples = {5.0, 1.0, 3.0, 2.0, 4.0};
  const auto stats = summarize(std::span<const double>(samples));
  EXPECT_EQ(stats.count, 5);
  EXPECT_DOUBLE_EQ(stats.median, 3.0);
  EXPECT_DOUBLE_EQ(stats.min, 1.0);
  EXPECT_DOUBLE_EQ(stats.max, 5.0);
  EXPECT_DOUBLE_EQ(stats.mean, 3.0);
  // Sample variance of 1..5 is 2.5.
  EXPECT_NEAR(stats.stddev, std::sqrt(2.5), 1e-12);
  EXPECT_NEAR(stats.cv, std::sqrt(2.5) / 3.0, 1e-12);
}

TEST(Stats, EvenCountMedianIsMeanOfMiddlePair) {
  const std::vector<float> samples = {10.0f, 2.0f, 4.0f, 8.0f};
  const auto stats = summarize(std::span<const float>(samples));
  EXPECT_DOUBLE_EQ(stats.median, 6.0);
  EXPECT_DOUBLE_EQ(stats.mean, 6.0);
}

TEST(Stats, SingleSampleHasNoSpread) {
  const std::vector<double> samples = {7.5};
  const auto stats = summarize(std::span<const double>(samples));
  EXPECT_DOUBLE_EQ(stats.median, 7.5);
  EXPECT_DOUBLE_EQ(stats.stddev, 0.0);
  EXPECT_DOUBLE_EQ(stats.cv, 0.0);
}

TEST(Stats, RejectsEmptyAndNonFinite) {
  const std::vector<double> empty;
  EXPECT_THROW(summarize(std::span<const double>(empty)), kiln::Error);
  const std::vector<double> nan = {1.0, std::numeric_limits<double>::quiet_NaN()};
  EXPECT_THROW(summarize(std::span<const double>(nan)), kiln::Error);
}

// The interleaved timer's order is host logic: round r starts at variant r (mod n).
TEST(InterleavedRounds, RotatesTheFirstVariantEveryRound) {
  EXPECT_EQ(kiln::core::round_order(3, 0), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(kiln::core::round_order(3, 1), (std::vector<int>{1, 2, 0}));
  EXPECT_EQ(kiln::core::round_order(3, 5), (std::vector<int>{2, 0, 1}));
  EXPECT_EQ(kiln::core::round_order(1, 7), (std::vector<int>{0}));
}

TEST(InterleavedRounds, IterationsSpreadOverRoundsAtLeastOneEach) {
  EXPECT_EQ(kiln::core::per_round(20, 4), 5);
  EXPECT_EQ(kiln::core::per_round(21, 4), 5);
  EXPECT_EQ(kiln::core::per_round(3, 4), 1);
}

TEST(TimingStatsJson, EveryResultFileWritesTheSameFields) {
  const std::vector<double> samples = {1.0, 2.0, 3.0, 10.0};
  const nlohmann::json j =
      kiln::core::to_json(kiln::core::summarize(std::span<const double>(samples)));
  EXPECT_EQ(j.at("median"), 2.5);
  EXPECT_EQ(j.at("min"), 1.0);
  EXPECT_EQ(j.at("max"), 10.0);
  EXPECT_EQ(j.at("mean"), 4.0);
  EXPECT_EQ(j.at("count"), 4);
  EXPECT_GT(j.at("cv").get<double>(), 0.0);
}
