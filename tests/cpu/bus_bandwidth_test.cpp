#include <gtest/gtest.h>

#include "benchmarks/collective/bus_bandwidth.hpp"

using kiln::benchmarks::algorithm_bandwidth_gbps;
using kiln::benchmarks::bus_factor;
using kiln::comm::CollectiveOp;

// nccl-tests doc/PERFORMANCE.md factors.
TEST(BusBandwidth, FactorsMatchNcclTests) {
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveOp::kAllReduce, 4), 1.5);
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveOp::kAllReduce, 2), 1.0);
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveOp::kAllReduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveOp::kAllReduce, 1), 0.0);
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveOp::kReduceScatter, 4), 0.75);
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveOp::kAllGather, 8), 0.875);
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveOp::kAllToAll, 2), 0.5);
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveOp::kBroadcast, 4), 1.0);
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveOp::kReduce, 4), 1.0);
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveOp::kSendRecv, 4), 1.0);
}

TEST(BusBandwidth, AlgorithmBandwidthIsBytesOverTime) {
  // 1 GiB in 4 ms = 268.4 GB/s.
  EXPECT_NEAR(algorithm_bandwidth_gbps(1ull << 30, 4e-3), 268.435456, 1e-6);
  EXPECT_DOUBLE_EQ(algorithm_bandwidth_gbps(100, 0.0), 0.0);
}

TEST(BusBandwidth, RejectsEmptyWorld) {
  EXPECT_ANY_THROW(bus_factor(CollectiveOp::kAllReduce, 0));
}
