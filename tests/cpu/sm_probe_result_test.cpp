#include <gtest/gtest.h>

#include <vector>

#include "comm/sm_probe_result.hpp"
#include "core/error.hpp"

using kiln::comm::count_probe;
using kiln::comm::SmProbeSamples;

namespace {

constexpr unsigned long long kT0 = 1'700'000'000'000'000'000ull;  // a globaltimer-like epoch
constexpr unsigned long long kUs = 1000;

// `sms` blocks on SMs 0..sms-1; block i starts at kT0 + start_offsets[i] (0 when absent) and
// holds for `hold`.
SmProbeSamples make_samples(int sms, const std::vector<unsigned long long>& start_offsets,
                            unsigned long long hold) {
  SmProbeSamples s;
  for (int i = 0; i < sms; ++i) {
    const unsigned long long offset =
        i < static_cast<int>(start_offsets.size()) ? start_offsets[i] : 0;
    s.smid.push_back(i);
    s.start_ns.push_back(kT0 + offset);
    s.end_ns.push_back(kT0 + offset + hold);
  }
  return s;
}

}  // namespace

TEST(SmProbeResult, AllSmsFreeStartTogether) {
  // 132 blocks spread over 3 µs: one wave, nothing held elsewhere.
  std::vector<unsigned long long> offsets;
  for (int i = 0; i < 132; ++i) offsets.push_back((i % 4) * kUs);
  const auto r = count_probe(make_samples(132, offsets, 1000 * kUs), 132, 20 * kUs);
  EXPECT_EQ(r.sm_count, 132);
  EXPECT_EQ(r.started_at_once, 132);
  EXPECT_EQ(r.held_elsewhere, 0);
  EXPECT_DOUBLE_EQ(r.first_wave_spread_us, 3.0);
  EXPECT_FALSE(r.overlapped);
}

TEST(SmProbeResult, EightBlocksStartLateWhenTheOtherKernelLeaves) {
  // The other kernel held 8 SMs and left after 300 µs, within the 1 ms hold.
  std::vector<unsigned long long> offsets(132, 0);
  for (int i = 124; i < 132; ++i) offsets[i] = 300 * kUs;
  offsets[5] = 2 * kUs;
  const auto r = count_probe(make_samples(132, offsets, 1000 * kUs), 132, 20 * kUs);
  EXPECT_EQ(r.started_at_once, 124);
  EXPECT_EQ(r.held_elsewhere, 8);
  EXPECT_DOUBLE_EQ(r.first_wave_spread_us, 2.0);
  EXPECT_FALSE(r.overlapped);
}

TEST(SmProbeResult, LateBlocksThatWaitedForTheFirstWaveAreOverlapped) {
  // The other kernel held 16 SMs past the whole hold: the late blocks took the SMs the probe's
  // first wave gave back, at its end.
  std::vector<unsigned long long> offsets(132, 0);
  for (int i = 0; i < 16; ++i) offsets[i] = 1000 * kUs + 1 * kUs;
  const auto r = count_probe(make_samples(132, offsets, 1000 * kUs), 132, 20 * kUs);
  EXPECT_EQ(r.held_elsewhere, 16);
  EXPECT_TRUE(r.overlapped);
}

TEST(SmProbeResult, OverlappedStartsOneWindowBeforeTheFirstEnd) {
  // The first end is kT0 + 1000 µs; with a 20 µs window the edge is 980 µs, exclusive.
  auto at = [](unsigned long long late_offset) {
    std::vector<unsigned long long> offsets(8, 0);
    offsets[7] = late_offset;
    return count_probe(make_samples(8, offsets, 1000 * kUs), 8, 20 * kUs);
  };
  EXPECT_FALSE(at(980 * kUs).overlapped);
  EXPECT_TRUE(at(980 * kUs + 1).overlapped);
  EXPECT_EQ(at(980 * kUs).held_elsewhere, 1);
}

TEST(SmProbeResult, WindowEdgeIsInclusive) {
  std::vector<unsigned long long> offsets(4, 0);
  offsets[3] = 10 * kUs;
  auto samples = make_samples(4, offsets, 1000 * kUs);
  const auto inside = count_probe(samples, 4, 10 * kUs);
  EXPECT_EQ(inside.started_at_once, 4);
  EXPECT_EQ(inside.held_elsewhere, 0);
  EXPECT_DOUBLE_EQ(inside.first_wave_spread_us, 10.0);
  const auto outside = count_probe(samples, 4, 10 * kUs - 1);
  EXPECT_EQ(outside.started_at_once, 3);
  EXPECT_EQ(outside.held_elsewhere, 1);
  EXPECT_DOUBLE_EQ(outside.first_wave_spread_us, 0.0);
}

TEST(SmProbeResult, ZeroWindowCountsOnlyTheEarliestStarts) {
  std::vector<unsigned long long> offsets = {0, 0, 1, 5};
  const auto r = count_probe(make_samples(4, offsets, 100 * kUs), 4, 0);
  EXPECT_EQ(r.started_at_once, 2);
  EXPECT_EQ(r.held_elsewhere, 2);
}

TEST(SmProbeResult, EarliestNeedNotBeTheFirstBlock) {
  // Block order is launch order, not start order: the earliest start may be anywhere.
  std::vector<unsigned long long> offsets = {50 * kUs, 50 * kUs, 0, 50 * kUs + 3 * kUs};
  const auto r = count_probe(make_samples(4, offsets, 1000 * kUs), 4, 5 * kUs);
  EXPECT_EQ(r.started_at_once, 1);
  EXPECT_EQ(r.held_elsewhere, 3);
  EXPECT_DOUBLE_EQ(r.first_wave_spread_us, 0.0);
  EXPECT_FALSE(r.overlapped);
}

TEST(SmProbeResult, FirstWaveBlocksNearAWideWindowAreNotOverlapped) {
  // A window above half the hold: a first-wave block lies past (first end - window) but did not
  // wait, so it must not count as overlapped.
  std::vector<unsigned long long> offsets = {0, 0, 0, 600 * kUs};
  const auto r = count_probe(make_samples(4, offsets, 1000 * kUs), 4, 600 * kUs);
  EXPECT_EQ(r.started_at_once, 4);
  EXPECT_FALSE(r.overlapped);
}

TEST(SmProbeResult, RejectsEmptyOrMismatchedSamples) {
  EXPECT_THROW(count_probe(SmProbeSamples{}, 0, kUs), kiln::UsageError);
  EXPECT_THROW(count_probe(SmProbeSamples{}, 132, kUs), kiln::UsageError);
  auto samples = make_samples(4, {}, 100 * kUs);
  auto short_smid = samples;
  short_smid.smid.pop_back();
  EXPECT_THROW(count_probe(short_smid, 4, kUs), kiln::UsageError);
  auto short_start = samples;
  short_start.start_ns.pop_back();
  EXPECT_THROW(count_probe(short_start, 4, kUs), kiln::UsageError);
  auto short_end = samples;
  short_end.end_ns.pop_back();
  EXPECT_THROW(count_probe(short_end, 4, kUs), kiln::UsageError);
  EXPECT_NO_THROW(count_probe(samples, 4, kUs));
}

TEST(SmProbeResult, RejectsASampleCountOtherThanTheSms) {
  const auto samples = make_samples(4, {}, 100 * kUs);
  EXPECT_THROW(count_probe(samples, 5, kUs), kiln::UsageError);
  EXPECT_THROW(count_probe(samples, 3, kUs), kiln::UsageError);
  EXPECT_THROW(count_probe(samples, 0, kUs), kiln::UsageError);
  EXPECT_THROW(count_probe(samples, -4, kUs), kiln::UsageError);
}

TEST(SmProbeResult, RejectsABlockThatEndsBeforeItStarts) {
  auto samples = make_samples(4, {}, 100 * kUs);
  samples.end_ns[2] = samples.start_ns[2] - 1;
  EXPECT_THROW(count_probe(samples, 4, kUs), kiln::UsageError);
}
