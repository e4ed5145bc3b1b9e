// Contiguous row blocks for ReduceScatter (slot_layout.hpp, contiguous_rows): over many launches
// and groupings, every real tile gets its own slot, each group's range splits into world equal
// parts holding exactly the tiles of that part's rank, a simulated ReduceScatter puts each tile
// where contiguous_received_tile says, and the restore mapping then yields rank j the rows
// [j*q, (j+1)*q) of the product. Also the column groups made from wave partitions.
#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "overlap/plan.hpp"
#include "overlap/slot_layout.hpp"
#include "overlap/slot_store_map.hpp"

namespace kiln::overlap {
namespace {

// A launch of tiles_m x tiles_n real tiles, padded to `slots` by the scheduler, on `ctas` CTAs.
LaunchGeometry launch_of(int tiles_m, int tiles_n, int slots, int ctas) {
  LaunchGeometry launch;
  launch.tiles_m = tiles_m;
  launch.tiles_n = tiles_n;
  launch.slots = slots;
  launch.grid_ctas = ctas;
  return launch;
}

TEST(ContiguousRows, GroupsSplitIntoRankPartsAndReachTheirPlace) {
  const int tile_n = 8;
  // 48: a tile height that is not a power of two (the 144/160/192-row kernels, scaled down).
  for (int tile_m : {16, 48})
    for (int world : {1, 2, 3, 4, 8}) {
      for (int tpr : {1, 2, 5}) {
        for (int tiles_n : {1, 3, 7, 40}) {
          for (int ctas : {4, 7, 13, 132}) {
            const int tiles_m = world * tpr;
            const int slots = ((tiles_m * tiles_n + 1) / 2) * 2;  // a padded tile when odd
            const LaunchGeometry launch = launch_of(tiles_m, tiles_n, slots, ctas);
            const GemmShape shape{tiles_m * tile_m, tiles_n * tile_n - 2, 64};
            const SlotGeometry g = slot_geometry(shape, {tile_m, tile_n}, launch, world, true);
            ASSERT_EQ(g.slots, tiles_m * tiles_n);
            ASSERT_EQ(g.tiles_per_rank, tpr);
            for (const std::vector<int>& partition :
                 {std::vector<int>{}, std::vector<int>{launch.waves()}}) {
              const WaveGroups groups = make_column_groups(partition, launch);
              const ColumnGroups columns = column_groups_of(groups, launch);
              const std::string label = "tile_m " + std::to_string(tile_m) + " world " +
                                        std::to_string(world) + " tpr " + std::to_string(tpr) +
                                        " tiles_n " + std::to_string(tiles_n) + " ctas " +
                                        std::to_string(ctas);
              // Slot -> tile, and each slot once.
              std::vector<int> tile_of_slot(g.slots, -1);
              for (int tm = 0; tm < tiles_m; ++tm) {
                for (int tn = 0; tn < tiles_n; ++tn) {
                  const int group = columns.group_of(tn);
                  ASSERT_EQ(group, groups.wave_group[tn]) << label;
                  const int c0 = columns.first_column(group);
                  const int slot = contiguous_slot(g, tm, tn, c0, columns.end[group] - c0);
                  ASSERT_GE(slot, groups.group_first_slot[group]) << label;
                  ASSERT_LT(slot, groups.group_first_slot[group] + groups.group_slot_count[group]);
                  ASSERT_EQ(tile_of_slot[slot], -1) << label << ": slot " << slot << " twice";
                  tile_of_slot[slot] = tm * tiles_n + tn;
                }
              }
              // A ReduceScatter of each group: part j of the range goes to rank j, after what rank
              // j received of the groups before.
              for (int group = 0; group < groups.groups(); ++group) {
                const int first = groups.group_first_slot[group];
                const int count = groups.group_slot_count[group];
                ASSERT_EQ(count % world, 0) << label;
                const int part = count / world;
                for (int i = 0; i < count; ++i) {
                  const int tile = tile_of_slot[first + i];
                  const int tm = tile / tiles_n, tn = tile % tiles_n;
                  const int rank = i / part;
                  ASSERT_EQ(tm / tpr, rank) << label << ": a tile of rank " << tm / tpr
                                            << " in rank " << rank << "'s part";
                  const std::int64_t received =
                      g.recv_elements(first) + (i % part) * g.tile_elements();
                  ASSERT_EQ(received, contiguous_received_tile(g, tm, tn) * g.tile_elements())
                      << label;
                }
              }
              // Rank j's rows are the contiguous block.
              for (int rank = 0; rank < world; ++rank) {
                ASSERT_EQ(owned_rows(g, rank), tpr * tile_m);
                for (int lr = 0; lr < owned_rows(g, rank); lr += 7)
                  ASSERT_EQ(global_row(g, rank, lr), rank * tpr * tile_m + lr);
              }
              ASSERT_EQ(g.recv_buffer_elements(),
                        static_cast<std::int64_t>(tpr) * tiles_n * g.tile_elements());
            }
          }
        }
      }
    }
}

TEST(ContiguousRows, ColumnGroupsFollowTheWaveBoundaries) {
  // 8 x 40 tiles on 64 CTAs: 5 waves; the wave boundaries split the column-major sequence at
  // 64, 128, ... tiles, i.e. after 8, 16, 24, 32 columns.
  const LaunchGeometry launch = launch_of(8, 40, 320, 64);
  const WaveGroups each = make_column_groups({}, launch);
  ASSERT_EQ(each.groups(), 5);
  for (int g = 0; g < 5; ++g) {
    EXPECT_EQ(each.group_first_slot[g], g * 8 * 8);
    EXPECT_EQ(each.group_slot_count[g], 8 * 8);
  }
  const WaveGroups two = make_column_groups({2, 3}, launch);
  ASSERT_EQ(two.groups(), 2);
  EXPECT_EQ(two.group_slot_count[0], 16 * 8);
  EXPECT_EQ(two.group_slot_count[1], 24 * 8);
  // More waves than columns: boundaries that meet are merged, every column in one group.
  const LaunchGeometry narrow = launch_of(64, 2, 128, 8);  // 16 waves, 2 columns
  const WaveGroups merged = make_column_groups({}, narrow);
  EXPECT_EQ(merged.groups(), 2);
  EXPECT_EQ(std::accumulate(merged.group_slot_count.begin(), merged.group_slot_count.end(), 0),
            128);
  // More than kMaxColumnGroups groups are merged down to it.
  const LaunchGeometry wide = launch_of(1, 200, 200, 1);  // 200 waves
  const WaveGroups capped = make_column_groups({}, wide);
  EXPECT_EQ(capped.groups(), kMaxColumnGroups);
  EXPECT_EQ(std::accumulate(capped.group_slot_count.begin(), capped.group_slot_count.end(), 0),
            200);
  EXPECT_EQ(static_cast<int>(capped.wave_group.size()), 200);
  // The partition must still match the waves.
  EXPECT_THROW(make_column_groups({1, 1}, launch), UsageError);
}

TEST(ContiguousRows, RefusesRowsThatDoNotSplitIntoWholeTiles) {
  const LaunchGeometry launch = launch_of(3, 2, 6, 6);
  try {
    (void)slot_geometry({384, 256, 64}, {128, 128}, launch, 2, true);
    FAIL() << "384 rows over 2 ranks of 128-row tiles accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("M = 384"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW((void)slot_geometry({512, 256, 64}, {128, 128}, launch_of(4, 2, 8, 8), 2, true));
  // Tile heights that are not powers of two: whole tiles per rank or a refusal, as for any other.
  EXPECT_NO_THROW((void)slot_geometry({384, 256, 64}, {192, 128}, launch_of(2, 2, 4, 4), 2, true));
  EXPECT_NO_THROW((void)slot_geometry({576, 256, 64}, {144, 128}, launch_of(4, 2, 8, 8), 4, true));
  EXPECT_THROW((void)slot_geometry({576, 256, 64}, {192, 128}, launch_of(3, 2, 6, 6), 2, true),
               UsageError);
  EXPECT_THROW((void)slot_geometry({480, 256, 64}, {160, 128}, launch_of(3, 2, 6, 6), 2, true),
               UsageError);
}

TEST(ContiguousRows, EveryTileIsWholeRowsOfTheSlotMatrix) {
  // The epilogue stores tile rows at slot * BM + row of the slot matrix: slot_offset must agree.
  const LaunchGeometry launch = launch_of(4, 3, 12, 5);
  const SlotGeometry g = slot_geometry({512, 384, 64}, {128, 128}, launch, 2, true);
  for (int slot = 0; slot < g.slots; ++slot) {
    for (int row : {0, 17, 127}) {
      EXPECT_EQ(slot_offset(g, slot, 0, g.slots, row, 0), (std::int64_t(slot) * 128 + row) * 128);
      EXPECT_EQ(slot_matrix_row<true>(g, slot, 0, g.slots, row), slot * 128 + row);
    }
  }
  // A tile height that is not a power of two: the division forms the epilogue (slot_matrix_row)
  // and the reorder's own-tile read (row_in_subtile of a rank's local row) use.
  const SlotGeometry odd =
      slot_geometry({576, 384, 64}, {144, 128}, launch_of(4, 3, 12, 5), 2, true);
  ASSERT_EQ(odd.log2_rows_per_subtile, -1);
  ASSERT_EQ(odd.rows_per_subtile(), 144);
  for (int slot = 0; slot < odd.slots; ++slot) {
    for (int row : {0, 17, 143}) {
      EXPECT_EQ(slot_offset(odd, slot, 0, odd.slots, row, 0),
                (std::int64_t(slot) * 144 + row) * 128);
      EXPECT_EQ(slot_matrix_row<false>(odd, slot, 0, odd.slots, row), slot * 144 + row);
    }
  }
  for (int local_row : {0, 143, 144, 200, 287}) {
    EXPECT_EQ(subtile_of_row(odd, local_row), local_row / 144);
    EXPECT_EQ(row_in_subtile(odd, local_row), local_row % 144);
  }
}

TEST(ContiguousRows, PlansAreRasteredAlongM) {
  Plan along_n = parse_plan("tile=128x192 cluster=2x1 kernel=pingpong raster=n swizzle=1", "plan");
  const Plan from_n = contiguous_rows_plan(along_n);
  EXPECT_FALSE(from_n.schedule.raster_along_n);
  EXPECT_EQ(from_n.schedule.swizzle, 1);
  EXPECT_EQ(from_n.gemm, along_n.gemm);
  const Plan along_m = parse_plan("tile=128x128 raster=m swizzle=2 groups=1,2", "plan");
  EXPECT_EQ(to_string(contiguous_rows_plan(along_m)), to_string(along_m));
  // A swapped kernel's scheduler walks Cᵀ: C's M is its N.
  const Plan swapped = parse_plan("tile=160x128 cluster=1x2 kernel=pingpong-swap raster=m", "plan");
  EXPECT_TRUE(contiguous_rows_plan(swapped).schedule.raster_along_n);
  EXPECT_EQ(contiguous_rows_plan(swapped).gemm, swapped.gemm);
}

}  // namespace
}  // namespace kiln::overlap
