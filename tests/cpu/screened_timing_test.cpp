// Screened timing's call counts (bench/screened_timing.hpp), without a GPU: a fast kernel gets
// every call asked for, a slow one fewer, never more than asked and at least 3 timed.
#include "bench/screened_timing.hpp"

#include <gtest/gtest.h>

namespace kiln::bench {
namespace {

TEST(ScreenedTiming, SlowKernelsGetFewerCallsNeverMoreThanAsked) {
  // 4 ms a call: 3 + 10 calls fit in 0.3 s.
  ScreenedCounts c = screened_counts(3, 10, 0.004);
  EXPECT_EQ(c.warmup, 3);
  EXPECT_EQ(c.iterations, 10);
  // 48 ms: 6 calls fit; all 6 timed, no warm-up left.
  c = screened_counts(3, 10, 0.048);
  EXPECT_EQ(c.iterations, 6);
  EXPECT_EQ(c.warmup, 0);
  // 24 ms: 12 fit: 10 timed, 2 warm-up.
  c = screened_counts(3, 10, 0.024);
  EXPECT_EQ(c.iterations, 10);
  EXPECT_EQ(c.warmup, 2);
  // 0.5 s: the fewest, 3 timed.
  c = screened_counts(3, 10, 0.5);
  EXPECT_EQ(c.iterations, 3);
  EXPECT_EQ(c.warmup, 0);
  // One timed call asked for: never more, however slow.
  c = screened_counts(0, 1, 0.5);
  EXPECT_EQ(c.iterations, 1);
  EXPECT_EQ(c.warmup, 0);
  c = screened_counts(5, 2, 0.9);
  EXPECT_EQ(c.iterations, 2);
  EXPECT_EQ(c.warmup, 0);
  // A second or more (one block over a 2G-element tensor): no call after the first, which is
  // the only sample.
  for (const double seconds : {1.0, 2.0}) {
    c = screened_counts(3, 10, seconds);
    EXPECT_EQ(c.iterations, 0);
    EXPECT_EQ(c.warmup, 0);
  }
  // A zero-length first call (a do-nothing kernel) is not a division by zero.
  c = screened_counts(3, 10, 0.0);
  EXPECT_EQ(c.iterations, 10);
  EXPECT_EQ(c.warmup, 3);
}

TEST(ScreenedTiming, CandidatesOffThePaceGetTheFewestCalls) {
  // The fastest so far: 4 ms a call. A first call of 5.5 ms is within 1.5 x 4 + 1 = 7 ms.
  ScreenedCounts c = screened_counts(3, 10, 0.0055, 0.004);
  EXPECT_EQ(c.warmup, 3);
  EXPECT_EQ(c.iterations, 10);
  // 7.5 ms is off the pace: 3 timed, no warm-up.
  c = screened_counts(3, 10, 0.0075, 0.004);
  EXPECT_EQ(c.warmup, 0);
  EXPECT_EQ(c.iterations, 3);
  // Never more than asked.
  c = screened_counts(3, 2, 0.0075, 0.004);
  EXPECT_EQ(c.iterations, 2);
  // A fast kernel's first call carries a new library's one-time costs: 20 us against a 10 us
  // pace is within the millisecond's room.
  c = screened_counts(3, 10, 20e-6, 10e-6);
  EXPECT_EQ(c.iterations, 10);
  // Far off the pace (over 10 x 4 + 1 = 41 ms): the first call is the only sample.
  c = screened_counts(3, 10, 0.045, 0.004);
  EXPECT_EQ(c.warmup, 0);
  EXPECT_EQ(c.iterations, 0);
  c = screened_counts(3, 10, 0.040, 0.004);  // within: 3 timed
  EXPECT_EQ(c.iterations, 3);
  // No pace yet (the first candidate): as before.
  c = screened_counts(3, 10, 0.0075, 0.0);
  EXPECT_EQ(c.iterations, 10);
  EXPECT_EQ(c.warmup, 3);
}

}  // namespace
}  // namespace kiln::bench

namespace kiln::bench {
namespace {

TEST(ScreenedTiming, FiveCallsWithinTwoPercentSettleTheMedian) {
  // 1.0% spread around 1000 us: settled.
  EXPECT_TRUE(settled({1000, 1004, 998, 1008, 1002}));
  // One call 3% slower: not settled (the remaining calls are taken).
  EXPECT_FALSE(settled({1000, 1004, 998, 1030, 1002}));
  // Fewer than kSettledCalls never settle, however close.
  EXPECT_FALSE(settled({1000, 1000, 1000, 1000}));
  EXPECT_FALSE(settled({}));
  // More than five: the spread of all of them.
  EXPECT_TRUE(settled({500, 501, 502, 500, 499, 503}));
  EXPECT_FALSE(settled({500, 501, 502, 500, 499, 520}));
  // Zero-length calls (a do-nothing kernel) do not divide by zero and are not "settled".
  EXPECT_FALSE(settled({0, 0, 0, 0, 0}));
}

}  // namespace
}  // namespace kiln::bench
