// The device check's definition (expected_value) must agree with an independent simulation of each
// collective over explicit per-rank arrays, for every op, several world sizes and awkward sizes.
#include <gtest/gtest.h>

#include <set>

#include "../common/host_collectives.hpp"
#include "benchmarks/collective/collective_expectation.hpp"

using kiln::comm::CollectiveOp;

TEST(TestValues, SmallNonZeroAndSeedDependent) {
  std::set<int> seen;
  int differs = 0;
  for (std::uint64_t i = 0; i < 10000; ++i) {
    const int v = kiln::core::test_value(42, 1, i);
    EXPECT_NE(v, 0);
    EXPECT_GE(v, -4);
    EXPECT_LE(v, 4);
    seen.insert(v);
    differs += v != kiln::core::test_value(43, 1, i);
    differs += v != kiln::core::test_value(42, 2, i);
  }
  EXPECT_EQ(seen.size(), 8u);  // every value appears
  EXPECT_GT(differs, 15000);   // another seed or rank gives other inputs
}

TEST(CollectiveExpectation, MatchesHostSimulation) {
  for (int world : {1, 2, 3, 4, 8}) {
    for (std::uint64_t bytes : {4ull, 36ull, 1000ull, 4100ull}) {
      for (CollectiveOp op : kiln::comm::all_ops()) {
        const auto counts = kiln::comm::counts_for(op, bytes, 4, world);
        if (counts.block_count == 0) continue;
        const std::uint64_t seed = 1234 + bytes;
        const auto inputs = kiln::testing::host_inputs(seed, world, counts.send_count);
        for (int rank = 0; rank < world; ++rank) {
          const auto reference = kiln::testing::host_collective(op, inputs, counts, rank);
          if (!reference) continue;
          ASSERT_EQ(reference->size(), counts.recv_count);
          const kiln::benchmarks::CollectiveExpectation e{op, world, rank, seed, counts.block_count};
          for (std::uint64_t i = 0; i < counts.recv_count; ++i) {
            ASSERT_EQ(kiln::benchmarks::expected_value(e, i), (*reference)[i])
                << kiln::comm::op_name(op) << " world " << world << " rank " << rank << " index "
                << i;
          }
        }
      }
    }
  }
}
