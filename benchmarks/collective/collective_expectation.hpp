// What each element of a collective's output must be when every rank's input is
// core::test_value(seed, rank, i). Host and device share this, so the benchmark's check kernel and
// the CPU tests agree on one definition; the GPU tests compare against an independent host
// simulation (tests/gpu/host_collectives.hpp).
#pragma once

#include <cstdint>

#include "comm/collective.hpp"
#include "core/test_values.hpp"

namespace kiln::benchmarks {

struct CollectiveExpectation {
  comm::CollectiveOp op;
  int world_size;
  int rank;
  std::uint64_t seed;
  std::uint64_t block_count;  // per-peer block for reducescatter/allgather/alltoall
};

// Expected integer value of recv[index] on `e.rank`. For reduce, meaningful on the root only.
KILN_HOST_DEVICE inline int expected_value(const CollectiveExpectation& e, std::uint64_t index) {
  using comm::CollectiveOp;
  switch (e.op) {
    case CollectiveOp::kAllReduce:
    case CollectiveOp::kReduce: {
      int sum = 0;
      for (int r = 0; r < e.world_size; ++r) sum += core::test_value(e.seed, r, index);
      return sum;
    }
    case CollectiveOp::kReduceScatter: {
      int sum = 0;
      const std::uint64_t source = static_cast<std::uint64_t>(e.rank) * e.block_count + index;
      for (int r = 0; r < e.world_size; ++r) sum += core::test_value(e.seed, r, source);
      return sum;
    }
    case CollectiveOp::kAllGather:
      return core::test_value(e.seed, static_cast<int>(index / e.block_count),
                              index % e.block_count);
    case CollectiveOp::kAllToAll:
      return core::test_value(
          e.seed, static_cast<int>(index / e.block_count),
          static_cast<std::uint64_t>(e.rank) * e.block_count + index % e.block_count);
    case CollectiveOp::kBroadcast:
      return core::test_value(e.seed, comm::kRootRank, index);
    case CollectiveOp::kSendRecv:
      return core::test_value(e.seed, (e.rank - 1 + e.world_size) % e.world_size, index);
  }
  return 0x7FFFFFFF;
}

}  // namespace kiln::benchmarks
