// An independent host simulation of each collective over explicit per-rank arrays: the reference
// that the CPU tests hold expected_value to and that the GPU tests hold NCCL's output to.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "comm/collective.hpp"
#include "core/test_values.hpp"

namespace kiln::testing {

// Per-rank input vectors as the benchmark fills them: input[r][i] = test_value(seed, r, i).
inline std::vector<std::vector<int>> host_inputs(std::uint64_t seed, int world,
                                                 std::uint64_t send_count) {
  std::vector<std::vector<int>> inputs(world, std::vector<int>(send_count));
  for (int r = 0; r < world; ++r) {
    for (std::uint64_t i = 0; i < send_count; ++i) inputs[r][i] = core::test_value(seed, r, i);
  }
  return inputs;
}

// What rank `rank` must hold after `op`; nullopt where the output is unspecified (reduce off-root).
inline std::optional<std::vector<int>> host_collective(comm::CollectiveOp op,
                                                       const std::vector<std::vector<int>>& in,
                                                       const comm::CollectiveCounts& c, int rank) {
  using comm::CollectiveOp;
  const int world = static_cast<int>(in.size());
  std::vector<int> out(c.recv_count, 0);
  const std::uint64_t block = c.block_count;
  switch (op) {
    case CollectiveOp::kAllReduce:
      for (const auto& source : in)
        for (std::uint64_t i = 0; i < c.recv_count; ++i) out[i] += source[i];
      return out;
    case CollectiveOp::kReduce:
      if (rank != comm::kRootRank) return std::nullopt;
      for (const auto& source : in)
        for (std::uint64_t i = 0; i < c.recv_count; ++i) out[i] += source[i];
      return out;
    case CollectiveOp::kReduceScatter:
      for (const auto& source : in) {
        for (std::uint64_t i = 0; i < block; ++i) out[i] += source[rank * block + i];
      }
      return out;
    case CollectiveOp::kAllGather:
      for (int j = 0; j < world; ++j) {
        for (std::uint64_t i = 0; i < block; ++i) out[j * block + i] = in[j][i];
      }
      return out;
    case CollectiveOp::kAllToAll:
      for (int j = 0; j < world; ++j) {
        for (std::uint64_t i = 0; i < block; ++i) out[j * block + i] = in[j][rank * block + i];
      }
      return out;
    case CollectiveOp::kBroadcast:
      out = in[comm::kRootRank];
      return out;
    case CollectiveOp::kSendRecv:
      out = in[(rank - 1 + world) % world];
      return out;
  }
  return std::nullopt;
}

}  // namespace kiln::testing
