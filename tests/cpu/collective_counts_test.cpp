#include <gtest/gtest.h>

#include "benchmarks/collective/collective_bench.hpp"
#include "comm/collective.hpp"
#include "core/error.hpp"

using kiln::comm::CollectiveOp;
using kiln::comm::counts_for;

TEST(CollectiveCounts, AllReduceUsesTheWholeVector) {
  const auto c = counts_for(CollectiveOp::kAllReduce, 1 << 20, 2, 4);
  EXPECT_EQ(c.total_count, 524288u);
  EXPECT_EQ(c.send_count, 524288u);
  EXPECT_EQ(c.recv_count, 524288u);
  EXPECT_EQ(c.bytes, 1u << 20);
}

TEST(CollectiveCounts, BlockOpsRoundDownToWholeBlocks) {
  // 1000 bytes of fp32 = 250 elements; over 3 ranks 83 per block, 249 in all.
  const auto rs = counts_for(CollectiveOp::kReduceScatter, 1000, 4, 3);
  EXPECT_EQ(rs.block_count, 83u);
  EXPECT_EQ(rs.total_count, 249u);
  EXPECT_EQ(rs.send_count, 249u);
  EXPECT_EQ(rs.recv_count, 83u);
  EXPECT_EQ(rs.bytes, 996u);
  const auto ag = counts_for(CollectiveOp::kAllGather, 1000, 4, 3);
  EXPECT_EQ(ag.send_count, 83u);
  EXPECT_EQ(ag.recv_count, 249u);
  const auto a2a = counts_for(CollectiveOp::kAllToAll, 1000, 4, 3);
  EXPECT_EQ(a2a.send_count, 249u);
  EXPECT_EQ(a2a.recv_count, 249u);
  EXPECT_EQ(a2a.block_count, 83u);
}

TEST(CollectiveCounts, TooSmallForOneElementPerRank) {
  const auto c = counts_for(CollectiveOp::kAllGather, 6, 2, 4);
  EXPECT_EQ(c.block_count, 0u);
  EXPECT_EQ(c.bytes, 0u);
}

TEST(MessageSizes, GeometricAndInclusive) {
  using kiln::benchmarks::message_sizes;
  EXPECT_EQ(message_sizes(1 << 20, 1 << 30, 4),
            (std::vector<std::uint64_t>{1 << 20, 1 << 22, 1 << 24, 1 << 26, 1 << 28, 1 << 30}));
  EXPECT_EQ(message_sizes(100, 100, 2), (std::vector<std::uint64_t>{100}));
  EXPECT_EQ(message_sizes(3, 20, 2), (std::vector<std::uint64_t>{3, 6, 12}));
  EXPECT_TRUE(message_sizes(0, 10, 2).empty());
  // No overflow near the top of the range.
  EXPECT_EQ(message_sizes(1ull << 62, ~0ull, 4).size(), 1u);
}

TEST(CollectiveOps, NamesRoundTripAndUnknownIsUsageError) {
  for (CollectiveOp op : kiln::comm::all_ops()) {
    EXPECT_EQ(kiln::comm::parse_op(kiln::comm::op_name(op), "-o"), op);
  }
  EXPECT_THROW(kiln::comm::parse_op("gather", "-o"), kiln::UsageError);
}
