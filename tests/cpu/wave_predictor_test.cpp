// The wave-group predictor on synthetic curves: interpolation at and beyond the samples, the
// timeline of a partition by hand, candidate counts against enumeration and the closed form,
// pruning, and the dynamic programme against the exhaustive minimum.
#include "tune/wave_predictor.hpp"

#include <gtest/gtest.h>

#include <random>

#include "core/error.hpp"

namespace kiln::tune {
using namespace kiln::overlap;  // the runtime's values (shapes, plans, geometry)
namespace {

TEST(LatencyCurve, InterpolatesBetweenAndExtendsBeyondTheSamples) {
  // 10 us fixed up to 1 MiB, then 100 us at 9 MiB (8 MiB per 90 us).
  const LatencyCurve c({9.0 * (1 << 20), 1 << 20, 1 << 10}, {100e-6, 10e-6, 10e-6});
  EXPECT_DOUBLE_EQ(c.bytes().front(), 1 << 10);                // sorted
  EXPECT_DOUBLE_EQ(c.seconds_at(1), 10e-6);                    // below the smallest: its latency
  EXPECT_DOUBLE_EQ(c.seconds_at(1 << 10), 10e-6);              // at a sample
  EXPECT_NEAR(c.seconds_at(5.0 * (1 << 20)), 55e-6, 1e-12);    // halfway: halfway
  EXPECT_NEAR(c.seconds_at(17.0 * (1 << 20)), 190e-6, 1e-12);  // beyond: the last slope
}

TEST(LatencyCurve, OneSampleIsPureBandwidthAbove) {
  const LatencyCurve c({1000.0}, {2e-6});
  EXPECT_DOUBLE_EQ(c.seconds_at(500), 2e-6);
  EXPECT_DOUBLE_EQ(c.seconds_at(3000), 6e-6);
}

TEST(LatencyCurve, RejectsBadSamples) {
  EXPECT_THROW(LatencyCurve({}, {}), UsageError);
  EXPECT_THROW(LatencyCurve({1, 2}, {1e-6}), UsageError);
  EXPECT_THROW(LatencyCurve({0}, {1e-6}), UsageError);
  EXPECT_THROW(LatencyCurve({10}, {-1}), UsageError);
  EXPECT_THROW(LatencyCurve({10, 10}, {1e-6, 2e-6}), UsageError);
}

TEST(WavePredictor, TimelineOfAPartitionByHand) {
  // 4 waves of 100 us each, 1 MB per wave; communication 10 us + 1 MB per 50 us.
  WaveProfile profile{400e-6, {1e6, 1e6, 1e6, 1e6}};
  const LatencyCurve curve({1e6, 4e6}, {60e-6, 210e-6});
  const Prediction p = predict(profile, curve, {1, 2, 1});
  ASSERT_EQ(p.groups.size(), 3u);
  // Group 0: compute done 100, comm 100..160. Group 1: done 300, comm 300..410 (2 MB: 110).
  // Group 2: done 400, comm starts at max(400, 410) = 410, ends 470.
  EXPECT_NEAR(p.groups[0].comm_done, 160e-6, 1e-12);
  EXPECT_NEAR(p.groups[1].comm_start, 300e-6, 1e-12);
  EXPECT_NEAR(p.groups[1].comm_done, 410e-6, 1e-12);
  EXPECT_NEAR(p.groups[2].comm_start, 410e-6, 1e-12);
  EXPECT_NEAR(p.seconds, 470e-6, 1e-12);
  EXPECT_THROW(predict(profile, curve, {1, 2}), UsageError);
  EXPECT_THROW(predict(profile, curve, {0, 4}), UsageError);
}

TEST(WavePredictor, AFixedCostPerGroupDelaysEveryGroupAndFavoursFewer) {
  // The timeline above with 20 us more per group: group 0 100..180, group 1 300..430, group 2
  // max(400, 430)..510.
  WaveProfile profile{400e-6, {1e6, 1e6, 1e6, 1e6}};
  profile.group_seconds = 20e-6;
  const LatencyCurve curve({1e6, 4e6}, {60e-6, 210e-6});
  const Prediction p = predict(profile, curve, {1, 2, 1});
  EXPECT_NEAR(p.groups[0].comm_done, 180e-6, 1e-12);
  EXPECT_NEAR(p.groups[1].comm_done, 430e-6, 1e-12);
  EXPECT_NEAR(p.seconds, 510e-6, 1e-12);
  // Communication-bound: 8 waves of 10 us, 1 MB each at 60 us. Without a group cost one group per
  // wave is as good as any; with 100 us per group the best partition has fewer groups.
  WaveProfile bound{80e-6, std::vector<double>(8, 1e6)};
  const LatencyCurve linear({1e6, 8e6}, {60e-6, 480e-6});
  const PartitionLimits limits{8, 8};
  const std::size_t free_groups = best_partition(bound, linear, limits).groups.size();
  bound.group_seconds = 100e-6;
  const Prediction costly = best_partition(bound, linear, limits);
  EXPECT_LT(costly.groups.size(), free_groups);
  EXPECT_EQ(costly.partition, (std::vector<int>{8}));  // 10 us x 8 waves + 480 + 100
  EXPECT_NEAR(costly.seconds, 660e-6, 1e-12);
}

TEST(WavePredictor, CandidateCountsMatchEnumerationAndClosedForm) {
  for (int first = 1; first <= 4; ++first) {
    for (int last = 1; last <= 5; ++last) {
      for (int waves = 1; waves <= 14; ++waves) {
        const PartitionLimits limits{first, last};
        const auto all = candidate_partitions(waves, limits);
        EXPECT_EQ(all.size(), candidate_count(waves, limits))
            << waves << " waves, first " << first << ", last " << last;
        for (const auto& p : all) {
          EXPECT_LE(p.front(), first);
          EXPECT_LE(p.back(), last);
        }
      }
    }
  }
  // Without effective pruning every composition counts: 2^(T-1).
  EXPECT_EQ(candidate_count(10, {10, 10}), 512u);
  // Hand count, T = 4, first <= 2, last <= 4: compositions of 4 (8) minus those starting with 3
  // or 4 ({3,1}, {4}) = 6.
  EXPECT_EQ(candidate_count(4, {2, 4}), 6u);
}

TEST(WavePredictor, DynamicProgrammeFindsTheExhaustiveMinimum) {
  std::mt19937 random(7);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int trial = 0; trial < 200; ++trial) {
    const int waves = 1 + trial % 12;
    WaveProfile profile;
    profile.gemm_seconds = (50 + 2000 * unit(random)) * 1e-6;
    for (int w = 0; w < waves; ++w) profile.wave_bytes.push_back(1e5 + 4e6 * unit(random));
    // A latency floor and a bandwidth with a kink, as measured curves have.
    const double floor = (5 + 30 * unit(random)) * 1e-6;
    const LatencyCurve curve({1e4, 1e6, 1e8}, {floor, floor + 1e6 / (50e9 + 300e9 * unit(random)),
                                               floor + 1e8 / (200e9 + 200e9 * unit(random))});
    // Half the trials with a fixed cost per group (as 4-rank AllReduce groups pay).
    if (trial % 2 == 1) profile.group_seconds = 60e-6 * unit(random);
    const PartitionLimits limits{1 + trial % 3, 1 + trial % 5};
    const Prediction fast = best_partition(profile, curve, limits);
    const Prediction slow = best_partition_exhaustive(profile, curve, limits);
    EXPECT_NEAR(fast.seconds, slow.seconds, 1e-15) << "trial " << trial;
    EXPECT_LE(fast.partition.front(), limits.first);
    EXPECT_LE(fast.partition.back(), limits.last);
  }
}

TEST(WavePredictor, SmallGroupsFirstWhenCommunicationIsCheap) {
  // Communication much faster than a wave: one wave per group hides all but the last wave's.
  WaveProfile profile{800e-6, std::vector<double>(8, 1e6)};
  const LatencyCurve cheap({1e6, 8e6}, {5e-6, 40e-6});
  const Prediction p = best_partition(profile, cheap, {2, 1});
  EXPECT_EQ(p.partition.back(), 1);
  EXPECT_NEAR(p.seconds, 805e-6, 1e-12);
}

TEST(WavePredictor, WaveBytesFollowTheLaunch) {
  // 8192 x 8192 with 128 x 256 tiles: 64 x 32 = 2048 slots; 128 CTAs: 16 full waves of
  // 128 x 32768 bf16 elements = 8 MiB each. 132 CTAs: 15 full waves and 68 slots left.
  LaunchGeometry launch{128, 2048, 64, 32};
  const auto full = wave_bytes(launch, 128 * 256, 2);
  ASSERT_EQ(full.size(), 16u);
  EXPECT_DOUBLE_EQ(full.back(), 8.0 * (1 << 20));
  launch.grid_ctas = 132;
  const auto ragged = wave_bytes(launch, 128 * 256, 2);
  ASSERT_EQ(ragged.size(), 16u);
  EXPECT_DOUBLE_EQ(ragged[0], 132.0 * 65536);
  EXPECT_DOUBLE_EQ(ragged.back(), 68.0 * 65536);
  EXPECT_THROW(wave_bytes(LaunchGeometry{0, 10, 1, 10}, 1, 2), UsageError);
}

TEST(WavePredictor, LimitsThatAdmitNothingAreReported) {
  EXPECT_THROW(candidate_count(0, {2, 4}), UsageError);
  EXPECT_THROW(candidate_count(3, {0, 4}), UsageError);
  WaveProfile profile{1e-3, {1, 1, 1}};
  EXPECT_THROW(best_partition(profile, LatencyCurve({1}, {1e-6}), {2, 0}), UsageError);
}

}  // namespace
}  // namespace kiln::tune
