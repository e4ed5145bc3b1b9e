// overlap::balanced_cta_cap without a GPU: the cap keeps the waves of the uncapped launch, is the
// fewest CTAs that does (a cluster fewer takes one more wave), is a multiple of the cluster size,
// and is 0 where it would save nothing (one wave truncated to the tiles, or waves already full).
#include <gtest/gtest.h>

#include "overlap/launch_geometry.hpp"

namespace kiln::overlap {
namespace {

using enum KernelSchedule;

TEST(BalancedCtaCap, KeepsTheWavesOnTheFewestClusters) {
  const GemmConfig configs[] = {{{128, 192}, {2, 1}, kPingpong},
                                {{128, 144}, {1, 2}, kPingpong},
                                {{256, 128}, {1, 1}, kCooperative},
                                {{128, 320}, {2, 1}, kCooperativeSplitN}};
  const GemmShape shapes[] = {{4096, 8192, 8192}, {16384, 4096, 3584}, {5000, 8192, 8192},
                              {1000, 8192, 8192}, {8192, 8192, 7168},  {2048, 2048, 512},
                              {300, 520, 64}};
  int capped = 0;
  for (const GemmConfig& config : configs)
    for (const GemmShape& shape : shapes)
      for (const bool along_n : {true, false})
        for (const int swizzle : {1, 8}) {
          const ScheduleOptions schedule{0, along_n, swizzle};
          const LaunchGeometry full = host_launch_geometry(shape, config, schedule, 132);
          const int cap = balanced_cta_cap(shape, config, schedule, 132);
          SCOPED_TRACE(testing::Message() << shape_name(shape) << " " << gemm_config_name(config)
                                          << " swizzle " << swizzle << " cap " << cap);
          if (cap == 0) continue;
          ++capped;
          EXPECT_LT(cap, full.grid_ctas);
          EXPECT_EQ(cap % config.cluster.size(), 0);
          ScheduleOptions with_cap = schedule;
          with_cap.cta_cap = cap;
          const LaunchGeometry g = host_launch_geometry(shape, config, with_cap, 132);
          EXPECT_EQ(g.grid_ctas, cap);
          EXPECT_EQ(g.waves(), full.waves());
          EXPECT_EQ(g.slots, full.slots);
          with_cap.cta_cap = cap - config.cluster.size();
          EXPECT_GT(host_launch_geometry(shape, config, with_cap, 132).waves(), full.waves())
              << "a cluster fewer keeps the waves too";
        }
  EXPECT_GT(capped, 20);
  // 4096x8192 in 128x192 tiles: 32 x 43 = 1376 tiles, 11 waves on 132 SMs, 126 CTAs suffice.
  EXPECT_EQ(balanced_cta_cap({4096, 8192, 8192}, configs[0], {0, true, 1}, 132), 126);
  // One wave of 96 tiles: the grid is already the tiles.
  EXPECT_EQ(balanced_cta_cap({1024, 1536, 512}, {{128, 128}, {2, 1}, kPingpong}, {0, true, 1}, 132),
            0);
  // 264 tiles of 128x128 fill two waves of 132 exactly.
  EXPECT_EQ(
      balanced_cta_cap({1408, 3072, 512}, {{128, 128}, {1, 1}, kCooperative}, {0, true, 1}, 132),
      0);
}

}  // namespace
}  // namespace kiln::overlap
