// Swizzles of 16 and 32 (overlap/wide_swizzle.hpp) without a GPU: plans accept them and refuse
// other widths by name, the rule falls back to CUTLASS's where a shape has too few tiles, the host
// model visits every real tile once with padding only along the swizzled mode, and the launch
// geometry read off the widened CUTLASS parameters agrees with that model. (That the kernel
// really runs this order is SignalingGemmGpu.EveryConfigurationMatchesCublas's tile-table check.)
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "overlap/launch_geometry.hpp"
#include "overlap/plan.hpp"
#include "overlap/signaling_gemm.hpp"
#include "overlap/tile_order.hpp"

namespace kiln::overlap {
namespace {

TEST(WideSwizzle, PlansAcceptPowersOfTwoUpTo32) {
  for (const int swizzle : {1, 2, 4, 8, 16, 32}) {
    const Plan plan = parse_plan("tile=128x256 swizzle=" + std::to_string(swizzle), "--plan");
    EXPECT_EQ(plan.schedule.swizzle, swizzle);
    EXPECT_EQ(parse_plan(to_string(plan), "--plan").schedule.swizzle, swizzle);
  }
  for (const std::string bad : {"0", "3", "12", "64", "-8"}) {
    try {
      (void)parse_plan("tile=128x256 swizzle=" + bad, "--plan");
      ADD_FAILURE() << "swizzle=" << bad << " was accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("accepted 1, 2, 4, 8, 16, 32"), std::string::npos)
          << e.what();
    }
  }
}

TEST(WideSwizzle, RuleExtendsCutlassAndFallsBackOnSmallGrids) {
  // CUTLASS's own thresholds, unchanged.
  EXPECT_EQ(scheduler_log_swizzle(6, 6, 8), 3);
  EXPECT_EQ(scheduler_log_swizzle(5, 40, 8), 2);
  EXPECT_EQ(scheduler_log_swizzle(2, 40, 8), 1);
  EXPECT_EQ(scheduler_log_swizzle(1, 40, 8), 0);
  // The widening: 12 blocks for 16, 24 for 32, along the smaller mode.
  EXPECT_EQ(scheduler_log_swizzle(12, 12, 16), 4);
  EXPECT_EQ(scheduler_log_swizzle(11, 99, 16), 3);
  EXPECT_EQ(scheduler_log_swizzle(24, 30, 32), 5);
  EXPECT_EQ(scheduler_log_swizzle(23, 30, 32), 4);
  EXPECT_EQ(scheduler_log_swizzle(128, 86, 16), 4);
  EXPECT_EQ(scheduler_log_swizzle(128, 86, 8), 3);  // asked for 8, gets 8
}

TEST(WideSwizzle, ModelVisitsEveryTileOncePaddingOnlyTheSwizzledMode) {
  for (const int tiles_m : {12, 37, 128}) {
    for (const int tiles_n : {13, 64, 86}) {
      for (const auto& [cm, cn] : {std::pair{1, 1}, {2, 1}, {1, 2}}) {
        for (const int swizzle : {16, 32}) {
          for (const bool along_n : {true, false}) {
            const SchedulerModel model{tiles_m, tiles_n, cm, cn, swizzle, along_n};
            const int bm = (tiles_m + cm - 1) / cm * cm, bn = (tiles_n + cn - 1) / cn * cn;
            const int s = scheduler_log_swizzle(bm, bn, swizzle);
            const int slots = scheduler_slots(model);
            if (s > 3) {
              // Only the minor mode (M when rastering along N) is padded to whole groups.
              const int group = (1 << s) * (along_n ? cm : cn);
              const int minor = along_n ? bm : bn, major = along_n ? bn : bm;
              EXPECT_EQ(slots, (minor + group - 1) / group * group * major)
                  << tiles_m << "x" << tiles_n << " swizzle " << swizzle;
            }
            std::set<std::pair<int, int>> seen;
            int real = 0;
            for (int slot = 0; slot < slots; ++slot) {
              const TileCoord t = scheduler_tile(model, slot);
              ASSERT_TRUE(seen.insert({t.m, t.n}).second) << "slot " << slot << " repeats";
              ASSERT_GE(t.m, 0);
              ASSERT_GE(t.n, 0);
              if (t.m < tiles_m && t.n < tiles_n) ++real;
            }
            EXPECT_EQ(real, tiles_m * tiles_n) << tiles_m << "x" << tiles_n;
          }
        }
      }
    }
  }
}

TEST(WideSwizzle, HostGeometryAgreesWithTheModel) {
  for (const GemmConfig& config : built_gemm_configs()) {
    for (const GemmShape shape : {GemmShape{16384, 16384, 2048},
                                  {8192, 8192, 8192},
                                  {5000, 8192, 8192},
                                  {4096, 8192, 2048},
                                  {1000, 8192, 8192}}) {
      for (const int swizzle : {8, 16, 32}) {
        for (const bool along_n : {true, false}) {
          for (const int cap : {0, 120}) {
            const ScheduleOptions schedule{cap, along_n, swizzle};
            const LaunchGeometry g = host_launch_geometry(shape, config, schedule, 132);
            const SchedulerModel model = scheduler_model(shape, config, schedule);
            EXPECT_EQ(g.slots, scheduler_slots(model))
                << gemm_config_name(config) << " " << shape_name(shape) << " swizzle " << swizzle
                << (along_n ? " raster n" : " raster m");
            EXPECT_LE(g.grid_ctas, cap == 0 ? 132 : cap) << gemm_config_name(config);
          }
        }
      }
    }
  }
  // 16384x16384 in 128x192 tiles along N: M's 128 tiles are whole groups of 16 clusters of 2,
  // N's 86 are not padded (CUTLASS's own rule would pad them to 96 under a swizzle of 16).
  const GemmConfig pingpong{{128, 192}, {2, 1}, KernelSchedule::kPingpong};
  EXPECT_EQ(host_launch_geometry({16384, 16384, 2048}, pingpong, {0, true, 16}, 132).slots,
            128 * 86);
}

}  // namespace
}  // namespace kiln::overlap
