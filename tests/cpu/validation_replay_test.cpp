// kiln tune replay's host logic: the validation CSV parser and the offline re-prediction, on a
// recorded 4xH200 AllReduce validation (docs/results/2026-11-28-h200-x4/call3/).
#include "tune/validation_replay.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/error.hpp"

namespace kiln::tune {
namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(KILN_TEST_SOURCE_DIR) + "/tests/data/tuner/" + name);
  EXPECT_TRUE(in.good()) << name;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ValidationReplay, ParsesTheCsvByItsHeader) {
  const std::string csv =
      "shape,waves,plan,predicted_us,measured_us,measured_cv,relative_error,predictive,"
      "predicted_saved_us,saved_relative_error\n"
      "2048x8192x4096,8,\"tile=128x128 cap=128 raster=n swizzle=1 signal=eager comm=ce "
      "groups=2,5,1\",405.09,481.49,0.0395,-0.15866,1,365.12,-0.24169\n";
  const std::vector<RecordedPoint> p = parse_validation_csv(csv, "t.csv");
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].shape.m, 2048);
  EXPECT_EQ(p[0].plan, "tile=128x128 cap=128 raster=n swizzle=1 signal=eager comm=ce groups=2,5,1");
  EXPECT_DOUBLE_EQ(p[0].predicted_us, 405.09);
  EXPECT_DOUBLE_EQ(p[0].measured_us, 481.49);
  EXPECT_DOUBLE_EQ(p[0].predicted_saved_us, 365.12);
  const auto message = [](const std::string& text) {
    try {
      parse_validation_csv(text, "t.csv");
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("shape,plan\n").find("no column \"measured_us\""), std::string::npos);
  EXPECT_NE(message(csv.substr(0, csv.find('\n') + 1) + "2048x8192x4096,8\n").find("line 2"),
            std::string::npos);
  EXPECT_NE(message(csv.substr(0, csv.find('\n') + 1)).find("no measured pair"), std::string::npos);
  std::string bad = csv;
  bad.replace(bad.find("481.49"), 6, "fast!!");
  EXPECT_NE(message(bad).find("not a finite number"), std::string::npos);
}

// The record predates fresh GEMM profiles in the JSON: every pair is re-predicted from the saved
// profile, as validate's "saved" column was, and the model that ran it reproduces it.
TEST(ValidationReplay, ReproducesTheRecordedPredictions) {
  const nlohmann::json validation =
      nlohmann::json::parse(fixture("h200-sxm-g4-ar-validation.json"));
  const std::vector<RecordedPoint> points =
      parse_validation_csv(fixture("h200-sxm-g4-ar-validation.csv"), "fixture csv");
  ASSERT_EQ(points.size(), 890u);
  const ReplayResult r = replay_validation(validation, points, "fixture json");
  EXPECT_LT(r.max_change_us, 0.01) << "the tuner's predictions moved; if on purpose, say so";
  EXPECT_NEAR(r.mean_abs_error, validation.at("mean_abs_error_saved_profile").get<double>(), 1e-4);
  EXPECT_EQ(r.shapes.size(), 12u);
  for (const ReplayedShape& s : r.shapes) EXPECT_FALSE(s.fresh);
}

// A record with a shape's fresh GEMM profile predicts that shape from it.
TEST(ValidationReplay, UsesTheFreshGemmProfile) {
  nlohmann::json validation = nlohmann::json::parse(fixture("h200-sxm-g4-ar-validation.json"));
  const std::vector<RecordedPoint> points =
      parse_validation_csv(fixture("h200-sxm-g4-ar-validation.csv"), "fixture csv");
  const ReplayResult before = replay_validation(validation, points, "fixture json");
  const std::string shape = "4096x8192x8192";
  const std::string base = validation.at("shapes")[8].at("predictive_plan");
  ASSERT_EQ(validation.at("shapes")[8].at("shape"), shape);
  nlohmann::json fresh;
  for (const nlohmann::json& g : validation.at("profile").at("gemms")) {
    const std::string plan = g.at("base_plan");
    if (g.at("shape") == nlohmann::json::array({4096, 8192, 8192}) &&
        base.rfind(plan.substr(0, plan.find(" groups=")), 0) == 0)
      fresh = g;
  }
  ASSERT_FALSE(fresh.is_null()) << "no saved GEMM profile of " << base;
  // A GEMM 20% slower in this record's rounds (both with and without communication).
  fresh["gemm_with_comm_us"] = fresh.at("gemm_with_comm_us").get<double>() * 1.2;
  fresh["gemm_alone_us"] = fresh.at("gemm_alone_us").get<double>() * 1.2;
  validation["shapes"][8]["fresh_gemm"] = fresh;
  const ReplayResult after = replay_validation(validation, points, "fixture json");
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (overlap::shape_name(points[i].shape) == shape) {
      EXPECT_GT(after.predicted_us[i], before.predicted_us[i]) << points[i].plan;
    } else {
      EXPECT_DOUBLE_EQ(after.predicted_us[i], before.predicted_us[i]) << points[i].plan;
    }
  }
  for (const ReplayedShape& s : after.shapes)
    EXPECT_EQ(s.fresh, overlap::shape_name(s.shape) == shape);
}

TEST(ValidationReplay, RefusesARecordWithoutItsProfile) {
  const std::vector<RecordedPoint> points =
      parse_validation_csv(fixture("h200-sxm-g4-ar-validation.csv"), "fixture csv");
  EXPECT_THROW(replay_validation(nlohmann::json::object(), points, "empty"), UsageError);
}

}  // namespace
}  // namespace kiln::tune
