// The collectives kiln benchmarks and checks, their element counts for a message size, and one
// call that enqueues any of them on a communicator.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype.hpp"

namespace kiln::comm {

class Communicator;

// NCCL's name for a kiln element type.
ncclDataType_t nccl_type(core::DType dtype);

enum class CollectiveOp {
  kAllReduce,
  kReduceScatter,
  kAllGather,
  kAllToAll,
  kBroadcast,
  kReduce,
  kSendRecv
};

std::string op_name(CollectiveOp op);
// reducescatter, allgather, alltoall: the vector is split into one block per rank.
bool splits_into_blocks(CollectiveOp op);  // "allreduce", ...
// Throws kiln::UsageError naming `argument` and the accepted names.
CollectiveOp parse_op(const std::string& text, const std::string& argument);
const std::vector<CollectiveOp>& all_ops();

// Sizes follow nccl-tests: `bytes` is the larger of the two buffers (the full vector), rounded
// down so that the per-rank blocks of reducescatter/allgather/alltoall are whole.
struct CollectiveCounts {
  std::uint64_t total_count = 0;  // elements in the full vector ("count" column)
  std::uint64_t send_count = 0;   // elements each rank sends from
  std::uint64_t recv_count = 0;   // elements each rank receives into
  std::uint64_t block_count = 0;  // per-peer block (rs/ag/a2a), else total_count
  std::uint64_t bytes = 0;        // total_count * element size ("size" column)
};
CollectiveCounts counts_for(CollectiveOp op, std::uint64_t bytes, std::size_t element_size,
                            int world_size);

inline constexpr int kRootRank = 0;  // broadcast and reduce root

// Enqueues one `op` (sum for reductions; root kRootRank) on `stream`. Never blocks on the GPU.
void enqueue_collective(Communicator& comm, CollectiveOp op, const void* send, void* recv,
                        const CollectiveCounts& counts, core::DType dtype, cudaStream_t stream);

}  // namespace kiln::comm
