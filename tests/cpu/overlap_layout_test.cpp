// The overlap runtime's mappings, checked exhaustively over many shapes: slot buffer offsets are a
// bijection, the scheduler model visits every tile once, and a simulated ReduceScatter/AllReduce
// followed by the restore mapping puts every element of every owned row back where it belongs.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "overlap/contiguous_scatter.hpp"
#include "overlap/plan.hpp"
#include "overlap/slot_layout.hpp"
#include "overlap/slot_store_map.hpp"
#include "overlap/tile_order.hpp"

namespace kiln::overlap {
namespace {

struct Case {
  int m, n, tile_m, tile_n, world, swizzle;
  bool along_n;
};

std::vector<Case> cases() {
  std::vector<Case> all;
  for (int m : {1, 7, 64, 200, 520})
    for (int n : {8, 56, 264})
      for (int tile_n : {32, 64})
        for (int world : {1, 2, 4, 8})
          for (int swizzle : {1, 2, 4})
            for (bool along_n : {true, false})
              all.push_back({m, n, 16, tile_n, world, swizzle, along_n});
  // Tile heights that are not powers of two (144/160/192-row tiles, scaled down): the slot
  // layout splits their rows by division (slot_layout.hpp: subtile_of_row).
  for (int m : {1, 200, 520})
    for (int tile_m : {48, 80})
      for (int world : {1, 2, 4})
        for (bool along_n : {true, false}) all.push_back({m, 264, tile_m, 32, world, 2, along_n});
  return all;
}

SlotGeometry geometry_for(const Case& c, int slots) {
  SlotGeometry g;
  g.m = c.m;
  g.n = c.n;
  g.tile_m = c.tile_m;
  g.tile_n = c.tile_n;
  g.tiles_m = (c.m + c.tile_m - 1) / c.tile_m;
  g.tiles_n = (c.n + c.tile_n - 1) / c.tile_n;
  g.slots = slots;
  g.subtiles = c.world;
  g.subtile_rows = c.tile_m / c.world;
  int log = 0;
  while ((1 << log) < g.subtile_rows) ++log;
  g.log2_rows_per_subtile = (1 << log) == g.subtile_rows ? log : -1;
  return g;
}

SchedulerModel model_for(const Case& c) {
  SchedulerModel model;
  model.tiles_m = (c.m + c.tile_m - 1) / c.tile_m;
  model.tiles_n = (c.n + c.tile_n - 1) / c.tile_n;
  model.swizzle = c.swizzle;
  model.raster_along_n = c.along_n;
  return model;
}

TEST(SchedulerModel, VisitsEveryPaddedTileOnce) {
  for (const Case& c : cases()) {
    const SchedulerModel model = model_for(c);
    const int slots = scheduler_slots(model);
    ASSERT_GE(slots, model.tiles_m * model.tiles_n);
    std::set<std::pair<int, int>> seen;
    int real = 0;
    for (int s = 0; s < slots; ++s) {
      const TileCoord t = scheduler_tile(model, s);
      ASSERT_TRUE(seen.insert({t.m, t.n}).second) << "slot " << s << " repeats a tile";
      if (t.m < model.tiles_m && t.n < model.tiles_n) ++real;
    }
    EXPECT_EQ(real, model.tiles_m * model.tiles_n);
  }
}

TEST(SchedulerModel, ClusterPairsShareAColumnAlongN) {
  // Raster along N with a 2x1 cluster: slots 2i and 2i+1 are the two M tiles of one cluster.
  SchedulerModel model{8, 6, 2, 1, 1, true};
  for (int s = 0; s < scheduler_slots(model); s += 2) {
    const TileCoord a = scheduler_tile(model, s), b = scheduler_tile(model, s + 1);
    EXPECT_EQ(a.n, b.n);
    EXPECT_EQ(a.m + 1, b.m);
  }
  EXPECT_EQ(scheduler_tile(model, 2).n, 1);  // the next cluster moves along N
}

TEST(SlotLayout, OffsetsAreABijectionForEveryPartition) {
  for (const Case& c : cases()) {
    const int slots = scheduler_slots(model_for(c));
    const SlotGeometry g = geometry_for(c, slots);
    for (int grid : {3, 5, slots}) {
      LaunchGeometry launch{grid, slots, g.tiles_m, g.tiles_n};
      const WaveGroups groups = make_wave_groups({}, launch);
      std::vector<char> hit(static_cast<std::size_t>(g.slot_buffer_elements()), 0);
      for (int s = 0; s < slots; ++s) {
        const int group = groups.wave_group[s / grid];
        for (int r = 0; r < g.tile_m; ++r)
          for (int col = 0; col < g.tile_n; ++col) {
            const auto off = slot_offset(g, s, groups.group_first_slot[group],
                                         groups.group_slot_count[group], r, col);
            ASSERT_GE(off, 0);
            ASSERT_LT(off, g.slot_buffer_elements());
            ASSERT_EQ(hit[off]++, 0) << "offset written twice";
          }
      }
    }
  }
}

// Tile heights that are not powers of two take slot_matrix_row's division form; for powers of
// two both forms agree. Every subtile is whole 16-row boxes (144 rows: one rank only).
TEST(SlotStoreMap, BoxRowsOfAnyTileHeightAreConsecutiveRowsOfTheSlotMatrix) {
  for (int tile_m : {128, 144, 160, 192, 256})
    for (int world : {1, 2, 4}) {
      if (tile_m % (world * kStoreBoxRows) != 0) continue;
      Case c{2 * tile_m + 40, 3 * 128 - 8, tile_m, 128, world, 1, true};
      const int slots = scheduler_slots(model_for(c));
      const SlotGeometry g = geometry_for(c, slots);
      const LaunchGeometry launch{3, slots, g.tiles_m, g.tiles_n};
      const WaveGroups groups = make_wave_groups({}, launch);
      for (int s = 0; s < slots; ++s) {
        const int group = groups.wave_group[s / 3];
        const int first = groups.group_first_slot[group];
        const int count = groups.group_slot_count[group];
        for (int band = 0; band < g.tile_m; band += kStoreBoxRows) {
          const int row0 = slot_matrix_row<false>(g, s, first, count, band);
          if ((tile_m & (tile_m - 1)) == 0)
            ASSERT_EQ(row0, slot_matrix_row<true>(g, s, first, count, band));
          for (int r = 0; r < kStoreBoxRows; ++r)
            for (int col = 0; col < g.tile_n; col += 13)
              ASSERT_EQ(slot_offset(g, s, first, count, band + r, col),
                        static_cast<std::int64_t>(row0 + r) * g.tile_n + col)
                  << "tile_m " << tile_m << " world " << world << " slot " << s;
        }
      }
    }
}

// The epilogue stores 16-row boxes through a 2-D view of the slot buffer (slot_store_map.hpp):
// every box must land exactly where slot_offset puts its elements.
TEST(SlotStoreMap, BoxRowsAreConsecutiveRowsOfTheSlotMatrix) {
  for (int tile_n : {64, 128, 160, 176, 256})
    for (int world : {1, 2, 4, 8}) {
      Case c{300, 3 * tile_n - 8, 128, tile_n, world, 1, true};
      const int slots = scheduler_slots(model_for(c));
      const SlotGeometry g = geometry_for(c, slots);
      for (int grid : {2, 3, slots}) {
        LaunchGeometry launch{grid, slots, g.tiles_m, g.tiles_n};
        const WaveGroups groups = make_wave_groups({}, launch);
        for (int s = 0; s < slots; ++s) {
          const int group = groups.wave_group[s / grid];
          const int first = groups.group_first_slot[group];
          const int count = groups.group_slot_count[group];
          for (int band = 0; band < g.tile_m; band += kStoreBoxRows) {
            const int row0 = slot_matrix_row<true>(g, s, first, count, band);
            ASSERT_LT(row0 + kStoreBoxRows - 1, g.slots * g.tile_m);
            for (int r = 0; r < kStoreBoxRows; ++r)
              for (int col = 0; col < g.tile_n; col += 7)
                ASSERT_EQ(slot_offset(g, s, first, count, band + r, col),
                          static_cast<std::int64_t>(row0 + r) * g.tile_n + col)
                    << "tile_n " << tile_n << " world " << world << " slot " << s;
          }
        }
      }
    }
}

// Every store box is swizzled by its piece: the widest of 64, 32, 16 columns that divides it. The
// descriptor and the epilogue's staging both take the swizzle from here.
TEST(SlotStoreMap, ABoxIsSwizzledByTheWidestSwizzledPieceThatDividesIt) {
  EXPECT_EQ(store_box_swizzle_bytes(64), 128);
  EXPECT_EQ(store_box_swizzle_bytes(32), 64);
  EXPECT_EQ(store_box_swizzle_bytes(16), 32);
  EXPECT_EQ(store_piece_cols(144), 16);
  EXPECT_EQ(store_piece_cols(160), 32);
  EXPECT_EQ(store_piece_cols(176), 16);
  EXPECT_EQ(store_piece_cols(192), 64);
  for (int cols = 8; cols <= 256; cols += 8) {
    const int piece = store_piece_cols(cols);
    if (cols % 16 != 0) {
      EXPECT_EQ(piece, 0) << cols;
      continue;
    }
    EXPECT_TRUE(piece == 16 || piece == 32 || piece == 64) << cols;
    EXPECT_EQ(cols % piece, 0) << cols;
    EXPECT_TRUE(piece == 64 || cols % (2 * piece) != 0) << cols << ": a wider piece divides it";
    EXPECT_EQ(store_box_swizzle_bytes(cols), 2 * piece) << cols;
  }
}

// The staging address of element (row, col) of a box is where TMA reads it: the box laid out as
// TMA lays out a (piece, pieces, 16 rows) box, innermost first, then TMA's swizzle of the address
// (16-byte chunk bits [4, 4 + b) XOR address bits [7, 7 + b), b = log2(swizzle / 16)). Every
// box's 16-byte rows of 8 columns land in distinct 16-byte chunks, and each stmatrix 8x8 matrix
// (8 consecutive rows of an 8-column group) covers all 32 banks once: no bank conflicts.
TEST(SlotStoreMap, StagingIsTmasSwizzledBoxLayoutAndFreeOfBankConflicts) {
  for (int group = 16; group <= 256; group += 16) {
    for (const bool swap : {false, true}) {
      const int box = epilogue_box_cols(group, swap);
      if (box == 0) continue;
      const int piece = store_piece_cols(box);
      const int swizzle = store_box_swizzle_bytes(box);
      int bits = 0;
      while ((16 << bits) < swizzle) ++bits;
      std::vector<int> chunk_owner(kStoreBoxRows * box / 8, -1);
      for (int row = 0; row < kStoreBoxRows; ++row) {
        for (int col = 0; col < box; col += 8) {
          const int p = col / piece;
          const std::uint32_t linear =
              static_cast<std::uint32_t>(((row * (box / piece) + p) * piece + col % piece) * 2);
          const std::uint32_t mask = (1u << bits) - 1;
          const std::uint32_t tma = linear ^ (((linear >> 7) & mask) << 4);
          const std::uint32_t byte = store_staging_byte(row, col, box);
          ASSERT_EQ(byte, tma) << "box " << box << " row " << row << " col " << col;
          ASSERT_EQ(byte % 16, 0u);
          ASSERT_LT(byte, static_cast<std::uint32_t>(kStoreBoxRows * box * 2));
          int& owner = chunk_owner[byte / 16];
          ASSERT_EQ(owner, -1) << "box " << box << ": two rows in one chunk";
          owner = row * box + col;
        }
      }
      for (int row0 = 0; row0 < kStoreBoxRows; row0 += 8) {
        for (int col = 0; col < box; col += 8) {
          std::vector<int> bank_uses(32, 0);
          for (int r = row0; r < row0 + 8; ++r) {
            const std::uint32_t byte = store_staging_byte(r, col, box);
            for (int word = 0; word < 4; ++word) ++bank_uses[(byte / 4 + word) % 32];
          }
          for (int bank = 0; bank < 32; ++bank) {
            EXPECT_EQ(bank_uses[bank], 1)
                << "box " << box << " rows " << row0 << "+8 col " << col << " bank " << bank;
          }
        }
      }
    }
  }
}

// The epilogue's box per warp-group width: 64 columns where they divide it, else the whole width
// (one TMA store per 16-row band, in swizzled pieces); swapped kernels 16x16.
TEST(SlotStoreMap, EpilogueStoresABandInOneBoxWhere64ColumnsDoNotDivideIt) {
  EXPECT_EQ(epilogue_box_cols(256, false), 64);
  EXPECT_EQ(epilogue_box_cols(192, false), 64);
  EXPECT_EQ(epilogue_box_cols(128, false), 64);
  EXPECT_EQ(epilogue_box_cols(144, false), 144);
  EXPECT_EQ(epilogue_box_cols(160, false), 160);  // coop-n 128x320's halves, ping-pong 128x160
  EXPECT_EQ(epilogue_box_cols(176, false), 176);
  EXPECT_EQ(epilogue_box_cols(168, false), 0);  // not whole 16-column blocks (stmatrix)
  EXPECT_EQ(epilogue_box_cols(128, true), 16);
  EXPECT_EQ(epilogue_box_cols(264, false), 0);  // wider than a TMA box
  EXPECT_EQ(epilogue_box_cols(148, false), 0);
  for (int cols = 8; cols <= 512; cols += 8) {
    const int box = epilogue_box_cols(cols, false);
    if (box == 0) {
      EXPECT_TRUE(cols > 256 || cols % 16 != 0) << cols;
      continue;
    }
    EXPECT_EQ(box % 16, 0) << cols;
    EXPECT_EQ(cols % box, 0) << cols;
    EXPECT_TRUE(box == 64 || box == cols) << cols;
  }
}

TEST(SlotStoreMap, AcceptsEachBoxWidthOnlyWhereItDividesTheTile) {
  Case wide{256, 520, 128, 176, 2, 1, true};
  const SlotGeometry g = geometry_for(wide, 8);
  for (int box : {16, 32, 64}) {
    if (176 % box == 0) continue;
    try {
      make_slot_store_map(nullptr, core::DType::kBf16, g, box);
      FAIL() << "a 176-column tile was accepted with " << box << "-column boxes";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("tile width 176"), std::string::npos) << e.what();
    }
  }
  for (int box : {12, 8, 24, 264, 0}) {  // not whole 16-column pieces, wider than a TMA box, none
    try {
      make_slot_store_map(nullptr, core::DType::kBf16, g, box);
      FAIL() << "a " << box << "-column box was accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("accepted 64, 32, 16"), std::string::npos) << e.what();
    }
  }
  try {  // 48 divides neither 176 nor is a swizzled width: refused for the tile width
    make_slot_store_map(nullptr, core::DType::kBf16, g, 48);
    FAIL() << "a 176-column tile was accepted with 48-column boxes";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("tile width 176"), std::string::npos) << e.what();
  }
}

TEST(SlotStoreMap, RejectsGeometriesItCannotStoreNamingWhy) {
  Case narrow{256, 256, 128, 32, 2, 1, true};
  const SlotGeometry narrow_geometry = geometry_for(narrow, 8);
  try {
    make_slot_store_map(nullptr, core::DType::kBf16, narrow_geometry);
    FAIL() << "a 32-column tile was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("tile width 32"), std::string::npos) << e.what();
  }
  Case thin{256, 256, 128, 256, 16, 1, true};  // 8-row subtiles
  try {
    make_slot_store_map(nullptr, core::DType::kBf16, geometry_for(thin, 8));
    FAIL() << "8-row subtiles were accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("subtiles of 8 rows"), std::string::npos) << e.what();
  }
  EXPECT_THROW(make_slot_store_map(nullptr, core::DType::kFp32, geometry_for(narrow, 8)),
               UsageError);
}

TEST(SlotLayout, OwnedRowsPartitionTheOutput) {
  for (const Case& c : cases()) {
    const SlotGeometry g = geometry_for(c, scheduler_slots(model_for(c)));
    std::vector<int> owner(c.m, -1);
    int total = 0;
    for (int rank = 0; rank < c.world; ++rank) {
      int previous = -1;
      for (int lr = 0; lr < owned_rows(g, rank); ++lr) {
        const int row = global_row(g, rank, lr);
        ASSERT_LT(row, c.m);
        ASSERT_GT(row, previous) << "local rows must keep the global order";
        previous = row;
        ASSERT_EQ(owner[row], -1);
        owner[row] = rank;
        EXPECT_EQ((row % c.tile_m) / (c.tile_m / c.world), rank);
      }
      total += owned_rows(g, rank);
    }
    EXPECT_EQ(total, c.m);
  }
}

// Simulates the whole path on the host: GEMM output tile values in slots, the collective on each
// group's contiguous range (ReduceScatter: rank j receives chunk j; AllReduce: everything), then
// the restore mapping. Every owned element must come back with its own (row, col) identity.
TEST(SlotLayout, CollectiveThenRestoreIsTheIdentity) {
  for (const Case& c : cases()) {
    const SchedulerModel model = model_for(c);
    const int slots = scheduler_slots(model);
    const SlotGeometry g = geometry_for(c, slots);
    std::vector<int> slot_of_tile(g.tiles_m * g.tiles_n, -1);
    for (int s = 0; s < slots; ++s) {
      const TileCoord t = scheduler_tile(model, s);
      if (t.m < g.tiles_m && t.n < g.tiles_n) slot_of_tile[t.m * g.tiles_n + t.n] = s;
    }
    const int grid = std::max(1, slots / 3 + 1);
    const LaunchGeometry launch{grid, slots, g.tiles_m, g.tiles_n};
    const int waves = launch.waves();
    std::vector<int> partition;  // uneven groups: 1, 2, rest
    for (int left = waves, size = 1; left > 0; left -= size, ++size)
      partition.push_back(std::min(size, left));
    const WaveGroups groups = make_wave_groups(partition, launch);

    // The epilogue: element value = global id, or -1 in padding.
    std::vector<long long> buffer(g.slot_buffer_elements(), -2);
    for (int s = 0; s < slots; ++s) {
      const TileCoord t = scheduler_tile(model, s);
      const int group = groups.wave_group[s / grid];
      for (int r = 0; r < g.tile_m; ++r)
        for (int col = 0; col < g.tile_n; ++col) {
          const long long row = static_cast<long long>(t.m) * g.tile_m + r;
          const long long column = static_cast<long long>(t.n) * g.tile_n + col;
          buffer[slot_offset(g, s, groups.group_first_slot[group], groups.group_slot_count[group],
                             r, col)] = (row < c.m && column < c.n) ? row * c.n + column : -1;
        }
    }
    for (int rank = 0; rank < c.world; ++rank) {
      // ReduceScatter of each group's range: chunk `rank` lands at the group's recv offset.
      std::vector<long long> received(g.recv_buffer_elements(), -3);
      for (int grp = 0; grp < groups.groups(); ++grp) {
        const long long chunk = groups.group_slot_count[grp] * g.subtile_elements();
        const long long send = groups.group_first_slot[grp] * g.tile_elements();
        const long long recv = groups.group_first_slot[grp] * g.subtile_elements();
        for (long long i = 0; i < chunk; ++i) received[recv + i] = buffer[send + rank * chunk + i];
      }
      for (int lr = 0; lr < owned_rows(g, rank); ++lr) {
        const int row = global_row(g, rank, lr);
        for (int col = 0; col < c.n; ++col) {
          const int tile_row = subtile_of_row(g, lr);
          const int slot = slot_of_tile[tile_row * g.tiles_n + col / g.tile_n];
          ASSERT_EQ(received[received_offset_of(g, slot, lr, col)],
                    static_cast<long long>(row) * c.n + col)
              << "m=" << c.m << " n=" << c.n << " world=" << c.world << " rank=" << rank;
        }
      }
    }
  }
}

TEST(WaveGroups, TablesFollowThePartition) {
  const LaunchGeometry launch{10, 45, 5, 9};  // 5 waves, the last one half full
  const WaveGroups groups = make_wave_groups({1, 2, 2}, launch);
  EXPECT_EQ(groups.wave_group, (std::vector<int>{0, 1, 1, 2, 2}));
  EXPECT_EQ(groups.group_first_slot, (std::vector<int>{0, 10, 30}));
  EXPECT_EQ(groups.group_slot_count, (std::vector<int>{10, 20, 15}));
  EXPECT_EQ(make_wave_groups({}, launch).groups(), 5);
  EXPECT_THROW(make_wave_groups({1, 2}, launch), UsageError);
  EXPECT_THROW(make_wave_groups({3, 3}, launch), UsageError);
}

TEST(Plan, SlotGeometryOfALaunch) {
  LaunchGeometry launch;
  launch.grid_ctas = 4;
  launch.slots = 8;
  launch.tiles_m = 3;
  launch.tiles_n = 2;
  const SlotGeometry rs = slot_geometry({300, 264, 136}, {128, 256}, launch, 4);
  EXPECT_EQ(rs.rows_per_subtile(), 32);
  EXPECT_EQ(rs.subtiles, 4);
  EXPECT_EQ(rs.slots, 8);
  EXPECT_EQ(rs.tiles_m, 3);
  EXPECT_EQ(rs.m, 300);
  EXPECT_EQ(rs.log2_rows_per_subtile, 5);
  EXPECT_EQ(slot_geometry({300, 264, 136}, {128, 128}, launch, 1).rows_per_subtile(), 128);
  // Heights that are not a power of two are split by division (log2 -1), not by a shift that
  // would store them to the wrong rows (192-row tiles were, on an H100, before either existed).
  const SlotGeometry tall = slot_geometry({300, 264, 136}, {192, 192}, launch, 1);
  EXPECT_EQ(tall.rows_per_subtile(), 192);
  EXPECT_EQ(tall.log2_rows_per_subtile, -1);
  EXPECT_EQ(subtile_of_row(tall, 191), 0);
  EXPECT_EQ(subtile_of_row(tall, 192), 1);
  EXPECT_EQ(row_in_subtile(tall, 200), 8);
  const SlotGeometry halves = slot_geometry({300, 264, 136}, {160, 128}, launch, 2);
  EXPECT_EQ(halves.rows_per_subtile(), 80);
  EXPECT_EQ(subtile_of_row(halves, 159), 1);
  EXPECT_EQ(row_in_subtile(halves, 159), 79);
  EXPECT_THROW(slot_geometry({300, 264, 136}, {128, 256}, launch, 3), UsageError);  // 42.67 rows
  const WaveGroups groups = make_wave_groups({1, 1}, launch);
  EXPECT_EQ(groups.concatenated(), (std::vector<int>{0, 1, 0, 4, 4, 4}));
}

TEST(Plan, PrintsAndParsesTheSameFormat) {
  const Plan plan = parse_plan(
      "tile=128x128 cap=120 raster=m swizzle=4 signal=deferred comm=ce groups=1,2,2,3", "--plan");
  EXPECT_EQ(plan.gemm.tile, (TileShape{128, 128}));
  EXPECT_EQ(plan.schedule.cta_cap, 120);
  EXPECT_FALSE(plan.schedule.raster_along_n);
  EXPECT_EQ(plan.schedule.swizzle, 4);
  EXPECT_TRUE(plan.deferred_signal);
  EXPECT_EQ(plan.partition, (std::vector<int>{1, 2, 2, 3}));
  EXPECT_EQ(to_string(plan),
            "tile=128x128 cap=120 raster=m swizzle=4 signal=deferred comm=ce groups=1,2,2,3");
  EXPECT_TRUE(plan.copy_engine);
  EXPECT_FALSE(parse_plan("comm=nccl", "--plan").copy_engine);
  EXPECT_EQ(to_string(parse_plan(to_string(Plan{}), "--plan")), to_string(Plan{}));
  EXPECT_TRUE(parse_plan("groups=each", "--plan").partition.empty());
}

TEST(Plan, ClaimedTilesAreAPingPongSchedulerOption) {
  const std::string text =
      "tile=128x144 cluster=2x1 kernel=pingpong cap=0 raster=m swizzle=1 scheduler=claimed "
      "signal=eager comm=nccl groups=each";
  const Plan plan = parse_plan(text, "--plan");
  EXPECT_TRUE(plan.schedule.claimed_tiles);
  EXPECT_EQ(to_string(plan), text);
  EXPECT_FALSE(parse_plan("scheduler=static", "--plan").schedule.claimed_tiles);
  EXPECT_FALSE(Plan{}.schedule.claimed_tiles);
  EXPECT_EQ(to_string(Plan{}).find("scheduler"), std::string::npos);  // the default is not named
  EXPECT_FALSE(plan.schedule.serpentine);
  EXPECT_TRUE(
      parse_plan("tile=144x128 cluster=1x2 kernel=pingpong-swap scheduler=claimed", "--plan")
          .schedule.claimed_tiles);
  // scheduler=serpentine: claimed tiles whose odd bands walk backwards (band_order.hpp).
  const Plan serpentine =
      parse_plan("tile=128x144 cluster=2x1 kernel=pingpong scheduler=serpentine", "--plan");
  EXPECT_TRUE(serpentine.schedule.claimed_tiles);
  EXPECT_TRUE(serpentine.schedule.serpentine);
  EXPECT_EQ(parse_plan(to_string(serpentine), "--plan").schedule.serpentine, true);
  EXPECT_NE(to_string(serpentine).find("scheduler=serpentine"), std::string::npos);
  try {
    parse_plan("tile=128x256 scheduler=claimed", "--plan");  // cooperative: not built
    ADD_FAILURE() << "a cooperative plan with claimed tiles was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("kernel=coop"), std::string::npos) << e.what();
  }
  try {
    parse_plan("tile=128x144 cluster=2x1 kernel=pingpong scheduler=dynamic", "--plan");
    ADD_FAILURE() << "scheduler=dynamic was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("static, claimed, serpentine"), std::string::npos)
        << e.what();
  }
}

TEST(Plan, RejectsBadFieldsNamingThem) {
  const auto message = [](const std::string& text) {
    try {
      parse_plan(text, "--plan");
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("tile=64x64").find("128x256"), std::string::npos);
  EXPECT_NE(message("cap=-1").find("cap=-1"), std::string::npos);
  EXPECT_NE(message("cap=7").find("multiple of 2"), std::string::npos);
  EXPECT_NE(message("signal=late").find("eager, deferred"), std::string::npos);
  EXPECT_NE(message("comm=mpi").find("nccl, ce"), std::string::npos);
  EXPECT_NE(message("swizzle=3").find("swizzle=3"), std::string::npos);
  EXPECT_NE(message("groups=1,0,2").find(">= 1"), std::string::npos);
  EXPECT_NE(message("groups=1,x").find("not an integer"), std::string::npos);
  EXPECT_NE(message("raster=z").find("accepted n, m"), std::string::npos);
  EXPECT_NE(message("speed=fast").find("unknown key"), std::string::npos);
  EXPECT_NE(message("cap").find("key=value"), std::string::npos);
}

}  // namespace
}  // namespace kiln::overlap

namespace kiln::overlap {
namespace {

// The reordering before the GEMM composes with the block-cyclic layout into PyTorch's contiguous
// row blocks: rank j's local row i holds A row j*q + i, for every local row below q, and every A
// row is used exactly once.
TEST(ContiguousScatter, ReorderedRowsLandInContiguousBlocks) {
  for (const int world : {1, 2, 4, 8}) {
    for (const int tile_m : {128, 256}) {
      for (const int m : {world, 8 * world, 1000 * world, 5000, 8192}) {
        if (m % world != 0) continue;
        const ContiguousScatterRows c = contiguous_scatter_rows(m, world, tile_m);
        EXPECT_EQ(c.padded_m % tile_m, 0);
        EXPECT_GE(c.padded_m, m);
        SlotGeometry g;
        g.m = c.padded_m;
        g.tile_m = tile_m;
        g.tiles_m = c.padded_m / tile_m;
        g.subtiles = world;
        g.subtile_rows = tile_m / world;
        g.log2_rows_per_subtile = 0;
        while ((1 << g.log2_rows_per_subtile) < tile_m / world) ++g.log2_rows_per_subtile;
        std::vector<int> used(m, 0);
        for (int j = 0; j < world; ++j) {
          EXPECT_GE(owned_rows(g, j), c.rows_per_rank);
          for (int i = 0; i < c.rows_per_rank; ++i) {
            const int source = c.source_row(global_row(g, j, i));
            ASSERT_EQ(source, j * c.rows_per_rank + i) << "world " << world << " m " << m;
            ++used[source];
          }
        }
        for (int r = 0; r < m; ++r) EXPECT_EQ(used[r], 1);
        int padding = 0;
        for (int r = 0; r < c.padded_m; ++r) padding += c.source_row(r) < 0;
        EXPECT_EQ(padding, c.padded_m - m);
      }
    }
  }
}

TEST(ContiguousScatter, RefusesRowsOrTilesThatDoNotSplitEvenly) {
  EXPECT_THROW(contiguous_scatter_rows(1001, 2, 128), UsageError);
  EXPECT_THROW(contiguous_scatter_rows(0, 2, 128), UsageError);
  EXPECT_THROW(contiguous_scatter_rows(1024, 3, 128), UsageError);
  EXPECT_THROW(contiguous_scatter_rows(1024, 0, 128), UsageError);
}

}  // namespace
}  // namespace kiln::overlap
