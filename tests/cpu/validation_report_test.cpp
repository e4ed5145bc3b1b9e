// `kiln tune validate`'s report without a GPU: error statistics, CSV and JSON from known points.
#include <gtest/gtest.h>

#include "tune/validation_report.hpp"

namespace kiln::tune {
namespace {

ValidationPoint point(double predicted, double measured, bool chosen) {
  ValidationPoint p;
  p.shape = {4096, 8192, 2048};
  p.plan = "tile=128x256 cap=0 comm=ce groups=1,2";
  p.waves = 3;
  p.predicted_us = predicted;
  p.predicted_saved_us = predicted * 2;
  p.measured_us = measured;
  p.predictive_choice = chosen;
  return p;
}

TEST(ValidationReport, ErrorStatisticsFromThePoints) {
  const std::vector<ValidationPoint> points = {point(101, 100, true), point(97, 100, false),
                                               point(110, 100, false)};
  ShapeValidation shape;
  shape.predictive_us = 100;
  shape.best_us = 99.5;  // ratio 0.995: within 1%
  ShapeValidation slow = shape;
  slow.best_us = 90;
  const ValidationSummary s = summarize_validation(points, {shape, slow});
  EXPECT_NEAR(s.mean_error, (0.01 + 0.03 + 0.10) / 3, 1e-12);
  EXPECT_NEAR(s.max_error, 0.10, 1e-12);
  EXPECT_NEAR(s.chosen_median, 0.01, 1e-12);
  EXPECT_NEAR(s.mean_saved_error, (1.02 + 0.94 + 1.20) / 3, 1e-12);
  EXPECT_EQ(s.shapes_within_1pct, 1);
  EXPECT_EQ(s.errors.size(), 3u);
}

TEST(ValidationReport, CsvQuotesThePlanAndJsonCarriesTheShapes) {
  const std::string csv = validation_csv({point(101, 100, true)});
  EXPECT_EQ(csv.rfind("shape,waves,plan,", 0), 0u);
  EXPECT_NE(csv.find("4096x8192x2048,3,\"tile=128x256 cap=0 comm=ce groups=1,2\",101.00,100.00"),
            std::string::npos)
      << csv;
  ShapeValidation shape;
  shape.shape = {4096, 8192, 2048};
  shape.predictive_us = 100;
  shape.best_us = 100;
  const nlohmann::json j = validation_json(summarize_validation({}, {shape}), {shape});
  EXPECT_EQ(j.at("shapes").at(0).at("shape"), "4096x8192x2048");
  EXPECT_EQ(j.at("shapes_within_1pct"), 1);
  EXPECT_EQ(j.at("mean_abs_error"), 0.0);
  EXPECT_FALSE(j.at("shapes").at(0).contains("fresh_gemm"));
  // The GEMM profile measured in the validation's rounds travels with its shape (for replay).
  GemmProfile fresh;
  fresh.shape = shape.shape;
  fresh.base_plan = "tile=128x256 cap=0 raster=n swizzle=1 signal=eager comm=ce groups=each";
  fresh.launch = {132, 1024, 32, 32};
  fresh.gemm_alone_us = 180.5;
  fresh.gemm_with_comm_us = 190.25;
  fresh.overhead_us = -12.5;
  fresh.anchor_per_wave_us = 201.0;
  fresh.anchor_coarse_us = 195.5;
  shape.fresh_gemm = fresh;
  const nlohmann::json with = validation_json(summarize_validation({}, {shape}), {shape});
  const GemmProfile back =
      gemm_profile_from_json(with.at("shapes").at(0).at("fresh_gemm"), "fresh_gemm");
  EXPECT_EQ(gemm_profile_to_json(back), gemm_profile_to_json(fresh));
  EXPECT_EQ(back.gemm_with_comm_us, 190.25);
  EXPECT_EQ(back.anchor_coarse_us, 195.5);
}

}  // namespace
}  // namespace kiln::tune
