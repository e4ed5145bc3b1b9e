// The claimed scheduler's band order (overlap/band_order.hpp) without a GPU: every tile of the
// grid has exactly one slot and band_slot inverts band_tile; band 1 is the static order and a band
// that divides the minor mode is CUTLASS's swizzle; a band that does not divide it ends in a
// narrower band instead of padding; serpentine bands start where the previous one ended; and the
// host model and launch geometry of a claimed plan follow it. (That the kernel runs this order is
// SignalingGemmGpu.EveryConfigurationMatchesCublas's tile-table check.)
#include <gtest/gtest.h>

#include <vector>

#include "overlap/band_order.hpp"
#include "overlap/launch_geometry.hpp"
#include "overlap/tile_order.hpp"

namespace kiln::overlap {
namespace {

BandOrder order(int tiles_m, int tiles_n, int cm, int cn, bool along_n, int band, bool serp) {
  BandOrder o;
  o.tiles_m = tiles_m;
  o.tiles_n = tiles_n;
  o.cluster_m = cm;
  o.cluster_n = cn;
  o.raster_along_n = along_n ? 1 : 0;
  o.band = band;
  o.serpentine = serp ? 1 : 0;
  return o;
}

TEST(BandOrder, EveryTileHasOneSlotAndTheSlotInvertsTheTile) {
  int checked = 0;
  for (const auto& [cm, cn] : {std::pair{1, 1}, {2, 1}, {1, 2}}) {
    for (const int clusters_m : {1, 3, 16, 29}) {
      for (const int clusters_n : {1, 5, 28, 57}) {
        for (const bool along_n : {false, true}) {
          for (const int band : {1, 2, 3, 4, 8, 16, 32, 64}) {
            for (const bool serp : {false, true}) {
              const BandOrder o =
                  order(clusters_m * cm, clusters_n * cn, cm, cn, along_n, band, serp);
              ASSERT_EQ(o.slots(), o.tiles_m * o.tiles_n);
              std::vector<int> seen(o.slots(), 0);
              for (int slot = 0; slot < o.slots(); ++slot) {
                const BandTile t = band_tile(o, slot);
                ASSERT_TRUE(t.m >= 0 && t.m < o.tiles_m && t.n >= 0 && t.n < o.tiles_n)
                    << "slot " << slot << " -> (" << t.m << ", " << t.n << ")";
                ASSERT_EQ(seen[t.m * o.tiles_n + t.n]++, 0) << "tile visited twice";
                ASSERT_EQ(band_slot(o, t.m, t.n), slot);
                // The CTAs of one work item form one cluster.
                const BandTile first = band_tile(o, slot / o.cluster_size() * o.cluster_size());
                ASSERT_EQ(t.m / cm, first.m / cm);
                ASSERT_EQ(t.n / cn, first.n / cn);
              }
              ++checked;
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(checked, 3 * 4 * 4 * 2 * 8 * 2);
}

TEST(BandOrder, BandOneIsTheStaticOrderAndADividingBandIsCutlassSwizzle) {
  for (const auto& [cm, cn] : {std::pair{1, 1}, {2, 1}, {1, 2}}) {
    for (const bool along_n : {false, true}) {
      for (const int swizzle : {1, 2, 4, 8}) {
        // 32 x 64 cluster tiles: every swizzle up to 8 applies and divides both modes.
        SchedulerModel stat;
        stat.tiles_m = 32 * cm;
        stat.tiles_n = 64 * cn;
        stat.cluster_m = cm;
        stat.cluster_n = cn;
        stat.swizzle = swizzle;
        stat.raster_along_n = along_n;
        SchedulerModel claimed = stat;
        claimed.claimed = true;
        ASSERT_EQ(scheduler_slots(stat), scheduler_slots(claimed));
        for (int s = 0; s < scheduler_slots(stat); ++s) {
          const TileCoord a = scheduler_tile(stat, s), b = scheduler_tile(claimed, s);
          ASSERT_TRUE(a.m == b.m && a.n == b.n)
              << "swizzle " << swizzle << " slot " << s << ": static (" << a.m << ", " << a.n
              << "), band (" << b.m << ", " << b.n << ")";
        }
      }
    }
  }
}

TEST(BandOrder, ALastBandIsNarrowerInsteadOfPadded) {
  // 4096x8192 in 128x144 tiles, 2x1 clusters, raster m, swizzle 8: 16 x 57 cluster tiles.
  SchedulerModel model;
  model.tiles_m = 32;
  model.tiles_n = 57;
  model.cluster_m = 2;
  model.cluster_n = 1;
  model.swizzle = 8;
  model.raster_along_n = false;
  EXPECT_EQ(scheduler_slots(model), 32 * 64);  // CUTLASS's swizzle pads to 64 columns
  model.claimed = true;
  EXPECT_EQ(scheduler_slots(model), 32 * 57);  // the band order: none
  // Items 0..7 walk the first band's 8 columns on the first cluster row; the last band (column
  // 56) is walked down the rows one item at a time.
  for (int item = 0; item < 8; ++item) {
    const TileCoord t = scheduler_tile(model, item * 2);
    EXPECT_EQ(t.m, 0);
    EXPECT_EQ(t.n, item);
  }
  const int last_band = 7 * 8 * 16;  // 7 full bands of 8 columns x 16 cluster rows
  for (int item = last_band; item < last_band + 16; ++item) {
    const TileCoord t = scheduler_tile(model, item * 2 + 1);
    EXPECT_EQ(t.n, 56);
    EXPECT_EQ(t.m, (item - last_band) * 2 + 1);
  }
  const LaunchGeometry g =
      host_launch_geometry({4096, 8192, 2048}, {{128, 144}, {2, 1}, KernelSchedule::kPingpong},
                           {0, false, 8, true}, 132);
  EXPECT_EQ(g.slots, 32 * 57);
  EXPECT_EQ(g.grid_ctas, 132);
}

TEST(BandOrder, SerpentineBandsStartWhereThePreviousOneEnded) {
  const BandOrder o = order(32, 57, 2, 1, false, 4, true);
  const int per_band = 4 * 16;  // 4 columns x 16 cluster rows
  for (int band = 0; band + 1 < 15; ++band) {
    const BandTile last = band_tile(o, ((band + 1) * per_band - 1) * 2);
    const BandTile next = band_tile(o, (band + 1) * per_band * 2);
    EXPECT_EQ(last.m, next.m) << "band " << band;  // the same cluster row: A's panel is warm
    EXPECT_EQ(next.n, last.n + 1);
  }
  // Without serpentine every band starts on the first cluster row.
  const BandOrder plain = order(32, 57, 2, 1, false, 4, false);
  EXPECT_EQ(band_tile(plain, per_band * 2).m, 0);
  EXPECT_EQ(band_tile(o, per_band * 2).m, 30);
}

}  // namespace
}  // namespace kiln::overlap
