// overlap::modeled_operand_bytes without a GPU: exact on a grid small enough to count by hand
// (with and without L2 reuse between waves), equal to A + B when one wave holds every tile, within
// 2% of the DRAM reads Nsight Compute measured on one H200 for four orders of two shapes
// (docs/results/2026-12-03e-kblock-trace/call2), and least_traffic_band_order is the least of the
// orders it searches; bad arguments throw.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "overlap/launch_geometry.hpp"
#include "overlap/operand_traffic.hpp"

namespace kiln::overlap {
namespace {

using enum KernelSchedule;

constexpr std::size_t kMiB = std::size_t{1} << 20;

TEST(OperandTraffic, CountsEachWavesPanelsByHand) {
  // 4 x 4 tiles of 128 x 128 on 4 CTAs, raster along M: wave w is tiles (0..3, w).
  const GemmConfig config{{128, 128}, {2, 1}, kPingpong};
  const GemmShape shape{512, 512, 1024};
  const ScheduleOptions along_m{0, false, 1};
  ASSERT_EQ(host_launch_geometry(shape, config, along_m, 4).grid_ctas, 4);
  for (int slot = 0; slot < 16; ++slot) {
    const TileCoord t = c_tile_at(shape, config, along_m, slot);
    ASSERT_EQ(t.m, slot % 4) << slot;
    ASSERT_EQ(t.n, slot / 4) << slot;
  }
  const double panel = 128.0 * 1024 * 2;
  // A wave's 5 panels (1.25 MiB) exceed half of a 1 MiB L2: every wave reads 4 A + 1 B panels.
  EXPECT_DOUBLE_EQ(modeled_operand_bytes(shape, config, along_m, 4, 2, kMiB), 20 * panel);
  // In a 64 MiB L2 the A panels stay: 4 A panels once, then one B panel per wave.
  EXPECT_DOUBLE_EQ(modeled_operand_bytes(shape, config, along_m, 4, 2, 64 * kMiB), 8 * panel);
}

TEST(OperandTraffic, OneWaveReadsEachOperandOnce) {
  const GemmConfig config{{128, 144}, {2, 1}, kPingpong};
  const GemmShape shape{1000, 1040, 4096};  // 8 x 8 tiles, partial ones at both edges
  const double a = 1000.0 * 4096 * 2, b = 1040.0 * 4096 * 2;
  for (const bool along_n : {true, false}) {
    EXPECT_DOUBLE_EQ(modeled_operand_bytes(shape, config, {0, along_n, 1}, 132, 2, std::size_t{1}),
                     a + b);
  }
}

TEST(OperandTraffic, MatchesTheDramReadsMeasuredOnAnH200) {
  struct Case {
    GemmShape shape;
    GemmConfig config;
    ScheduleOptions schedule;
    double measured_mb;
  };
  const Case cases[] = {
      {{4096, 8192, 8192}, {{128, 144}, {2, 1}, kPingpong}, {0, false, 1}, 1105},
      {{4096, 8192, 8192}, {{128, 144}, {2, 1}, kPingpong}, {0, false, 16, true, true}, 865},
      {{4096, 8192, 8192}, {{128, 256}, {2, 1}, kCooperative}, {0, true, 8}, 596},
      {{8192, 8192, 8192}, {{128, 192}, {2, 1}, kPingpong}, {0, false, 8, true, true}, 1436},
  };
  for (const Case& c : cases) {
    const double mb = modeled_operand_bytes(c.shape, c.config, c.schedule, 132, 2, 50 * kMiB) / 1e6;
    EXPECT_NEAR(mb, c.measured_mb, 0.02 * c.measured_mb) << shape_name(c.shape);
  }
}

TEST(OperandTraffic, LeastTrafficOrderIsTheLeastOfItsOrders) {
  const GemmConfig config{{128, 144}, {2, 1}, kPingpong};
  const GemmShape shape{4096, 8192, 8192};
  const ScheduleOptions own{0, false, 1};
  const LeastTrafficOrder least = least_traffic_band_order(shape, config, own, 132, 2, 50 * kMiB);
  EXPECT_TRUE(least.schedule.claimed_tiles);
  EXPECT_DOUBLE_EQ(least.bytes,
                   modeled_operand_bytes(shape, config, least.schedule, 132, 2, 50 * kMiB));
  for (const bool serpentine : {false, true})
    for (const bool along_n : {true, false})
      for (int band = 1; band <= kMaxSwizzle; band *= 2) {
        const ScheduleOptions s{0, along_n, band, true, serpentine};
        EXPECT_LE(least.bytes, modeled_operand_bytes(shape, config, s, 132, 2, 50 * kMiB));
      }
  // At this shape the static order reads at least a third more than the least one.
  EXPECT_GT(modeled_operand_bytes(shape, config, own, 132, 2, 50 * kMiB), 1.33 * least.bytes);
}

TEST(OperandTraffic, RejectsBadArguments) {
  const GemmConfig config{{128, 128}, {2, 1}, kPingpong};
  EXPECT_THROW(modeled_operand_bytes({512, 512, 64}, config, {}, 132, 0, kMiB), UsageError);
  EXPECT_THROW(modeled_operand_bytes({512, 512, 64}, config, {}, 132, 2, 0), UsageError);
  EXPECT_THROW(modeled_operand_bytes({0, 512, 64}, config, {}, 132, 2, kMiB), UsageError);
  EXPECT_THROW(modeled_operand_bytes({512, 512, 64}, config, {}, 0, 2, kMiB), UsageError);
}

}  // namespace
}  // namespace kiln::overlap
