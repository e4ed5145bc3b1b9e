// The rate measurements' operand values: normal_value is a standard normal (PyTorch's randn, which
// kiln's GEMMs are compared with), uniform_value stays in [-1, 1), and --inputs parses or names
// the argument it refuses.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "core/fill.hpp"
#include "core/test_values.hpp"

namespace kiln::core {
namespace {

constexpr std::uint64_t kSamples = 400000;

TEST(ValueDistribution, NormalHasTheMomentsAndMassOfAStandardNormal) {
  double sum = 0, sum_squares = 0, sum_fourth = 0;
  std::uint64_t within_one = 0, within_two = 0;
  for (std::uint64_t i = 0; i < kSamples; ++i) {
    const double z = normal_value(0x1234, i);
    ASSERT_TRUE(std::isfinite(z)) << "sample " << i;
    sum += z;
    sum_squares += z * z;
    sum_fourth += z * z * z * z;
    within_one += std::fabs(z) < 1.0;
    within_two += std::fabs(z) < 2.0;
  }
  const double n = static_cast<double>(kSamples);
  const double mean = sum / n, variance = sum_squares / n - mean * mean;
  // Standard errors at 400k samples: mean 0.0016, variance 0.0022, kurtosis ~0.008.
  EXPECT_NEAR(mean, 0.0, 0.01);
  EXPECT_NEAR(variance, 1.0, 0.015);
  EXPECT_NEAR(sum_fourth / n / (variance * variance), 3.0, 0.06);  // not a uniform's 1.8
  EXPECT_NEAR(static_cast<double>(within_one) / n, 0.6827, 0.004);
  EXPECT_NEAR(static_cast<double>(within_two) / n, 0.9545, 0.003);
}

TEST(ValueDistribution, NormalIsDeterministicAndSeeded) {
  int differing = 0;
  for (std::uint64_t i = 0; i < 1000; ++i) {
    EXPECT_EQ(normal_value(7, i), normal_value(7, i));
    differing += normal_value(7, i) != normal_value(8, i);
  }
  EXPECT_GT(differing, 990);
}

TEST(ValueDistribution, UniformStaysInItsRange) {
  double sum_squares = 0;
  for (std::uint64_t i = 0; i < kSamples; ++i) {
    const float u = uniform_value(0x1234, i);
    ASSERT_GE(u, -1.0f);
    ASSERT_LT(u, 1.0f);
    sum_squares += static_cast<double>(u) * u;
  }
  EXPECT_NEAR(sum_squares / static_cast<double>(kSamples), 1.0 / 3.0, 0.005);
}

TEST(ValueDistribution, ParsesTheTwoNamesAndRefusesOthersByArgument) {
  EXPECT_EQ(parse_value_distribution("uniform", "--inputs"), ValueDistribution::kUniform);
  EXPECT_EQ(parse_value_distribution("normal", "--inputs"), ValueDistribution::kNormal);
  EXPECT_EQ(value_distribution_name(ValueDistribution::kNormal), "normal");
  EXPECT_EQ(value_distribution_name(ValueDistribution::kUniform), "uniform");
  for (const std::string bad : {"randn", "Normal", ""}) {
    try {
      parse_value_distribution(bad, "--inputs");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const UsageError& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find("--inputs"), std::string::npos) << message;
      EXPECT_NE(message.find("normal"), std::string::npos) << message;
    }
  }
}

}  // namespace
}  // namespace kiln::core
