// The suite's fast_p / roof_u summary over its rows, without a GPU: skipped rows are not
// outcomes, and a suite whose every row was skipped has no metric (not an error, not zeros).
#include <gtest/gtest.h>

#include <string>

#include "bench/suite.hpp"

namespace kiln::bench {
namespace {

SuiteRow measured(bool correct, double solution_us, double reference_us) {
  SuiteRow r;
  r.problem = "allgather";
  r.size = "1M";
  r.solution = "kiln-nvlink";
  r.correct = correct;
  r.solution_us.median = solution_us;
  r.reference_us.median = reference_us;
  r.roof_us = 0.6 * solution_us;  // U = 0.6
  return r;
}

SuiteRow skipped() {
  SuiteRow r = measured(true, 1, 1);
  r.skipped = "blocks of 5460 bytes are not whole 16-byte vectors";
  return r;
}

TEST(SuiteMetrics, EveryRowSkippedHasNoMetric) {
  const nlohmann::json m = suite_metrics({skipped(), skipped()});
  EXPECT_EQ(m.at("measured_rows").get<int>(), 0);
  EXPECT_FALSE(m.contains("fast_0"));
  EXPECT_FALSE(m.contains("roof_0.5"));
}

TEST(SuiteMetrics, SkippedRowsAreNotOutcomes) {
  // One correct row 2x faster than its reference at U = 0.6, one wrong row, and
  // a skipped one that would count as fast and correct if it were an outcome.
  const nlohmann::json m =
      suite_metrics({measured(true, 10, 20), measured(false, 10, 20), skipped()});
  EXPECT_EQ(m.at("measured_rows").get<int>(), 2);
  EXPECT_DOUBLE_EQ(m.at("fast_1").get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(m.at("fast_2").get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(m.at("roof_0.5").get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(m.at("roof_0.75").get<double>(), 0.0);
}

}  // namespace
}  // namespace kiln::bench
