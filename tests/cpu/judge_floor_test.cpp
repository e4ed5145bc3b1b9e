// The judge's time floor and PyTorch baseline file (issue 19), on the host.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "bench/judge_guards.hpp"
#include "bench/torch_baseline.hpp"
#include "core/error.hpp"
#include "core/hardware_profile.hpp"

namespace kiln {
namespace {

roofline::CostModel bytes_only(double bytes) {
  return {{{"map", {{"map", 1.0, roofline::Precision::kFp32, bytes, 0}}}}};
}

TEST(JudgeFloor, HbmRateAboveL2AndFourTimesItWithin) {
  const roofline::Ceilings h100 = roofline::ceilings_from_profile(core::find_profile("h100-sxm"));
  const double l2 = 50e6;
  // 1 GB: 50 MB of it at 4x 3.35 TB/s, the rest at 3.35 TB/s.
  EXPECT_NEAR(bench::floor_seconds(bytes_only(1e9), h100, l2) * 1e6,
              (50e6 / (4 * 3350e9) + 950e6 / 3350e9) * 1e6, 1e-3);
  // Smooth across the L2 size: just above it is barely slower than just below.
  const double below = bench::floor_seconds(bytes_only(49e6), h100, l2);
  const double above = bench::floor_seconds(bytes_only(51e6), h100, l2);
  EXPECT_GT(above, below);
  EXPECT_LT(above / below, 1.2);
  // 40 MB fits in L2: the floor allows 4x the HBM rate.
  EXPECT_NEAR(bench::floor_seconds(bytes_only(40e6), h100, l2) * 1e6, 40e6 / (4 * 3350e9) * 1e6,
              1e-6);
}

TEST(JudgeFloor, ComputeBoundFloorUsesThePeak) {
  const roofline::Ceilings h100 = roofline::ceilings_from_profile(core::find_profile("h100-sxm"));
  const roofline::CostModel m{{{"mm", {{"mm", 1e12, roofline::Precision::kTf32Tensor, 1e6, 0}}}}};
  EXPECT_NEAR(bench::floor_seconds(m, h100, 50e6), 1e12 / (494.7e12), 1e-6);
}

TEST(TorchBaseline, ReadsMediansAndSkipsFailedRows) {
  const std::string path = ::testing::TempDir() + "kiln_torch_baseline.json";
  std::ofstream(path) << R"({"rows": [
      {"problem": "kb1-19-relu", "size": "small", "torch_us": {"median": 12.5}},
      {"problem": "kb1-97-sdpa", "size": "kb", "error": "out of memory"}]})";
  const auto times = bench::load_torch_baseline(path);
  ASSERT_EQ(times.size(), 1u);
  EXPECT_DOUBLE_EQ(times.at(bench::torch_baseline_key("kb1-19-relu", "small")), 12.5);
  std::ofstream(path) << R"({"rows": [{"problem": "kb1-19-relu", "size": "small"}]})";
  EXPECT_THROW(bench::load_torch_baseline(path), UsageError);
  std::ofstream(path) << "not json";
  EXPECT_THROW(bench::load_torch_baseline(path), UsageError);
  EXPECT_THROW(bench::load_torch_baseline(path + ".missing"), UsageError);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace kiln
