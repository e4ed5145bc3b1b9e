#include "comm/collective.hpp"

#include <fmt/format.h>
#include <nccl.h>

#include "comm/communicator.hpp"
#include "core/error.hpp"

namespace kiln::comm {

ncclDataType_t nccl_type(core::DType dtype) {
  switch (dtype) {
    case core::DType::kBf16:
      return ncclBfloat16;
    case core::DType::kFp16:
      return ncclFloat16;
    case core::DType::kFp32:
      return ncclFloat32;
    case core::DType::kInt32:
      return ncclInt32;
  }
  throw Error("nccl_type: unknown dtype");
}

std::string op_name(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kAllReduce:
      return "allreduce";
    case CollectiveOp::kReduceScatter:
      return "reducescatter";
    case CollectiveOp::kAllGather:
      return "allgather";
    case CollectiveOp::kAllToAll:
      return "alltoall";
    case CollectiveOp::kBroadcast:
      return "broadcast";
    case CollectiveOp::kReduce:
      return "reduce";
    case CollectiveOp::kSendRecv:
      return "sendrecv";
  }
  throw Error("op_name: unknown op");
}

bool splits_into_blocks(CollectiveOp op) {
  return op == CollectiveOp::kReduceScatter || op == CollectiveOp::kAllGather ||
         op == CollectiveOp::kAllToAll;
}

const std::vector<CollectiveOp>& all_ops() {
  static const std::vector<CollectiveOp> kAll = {
      CollectiveOp::kAllReduce, CollectiveOp::kReduceScatter, CollectiveOp::kAllGather,
      CollectiveOp::kAllToAll,  CollectiveOp::kBroadcast,     CollectiveOp::kReduce,
      CollectiveOp::kSendRecv};
  return kAll;
}

CollectiveOp parse_op(const std::string& text, const std::string& argument) {
  for (CollectiveOp op : all_ops()) {
    if (text == op_name(op)) return op;
  }
  throw UsageError(fmt::format(
      "{}: unknown collective '{}'; accepted: allreduce, reducescatter, allgather, alltoall, "
      "broadcast, reduce, sendrecv",
      argument, text));
}

CollectiveCounts counts_for(CollectiveOp op, std::uint64_t bytes, std::size_t element_size,
                            int world_size) {
  if (element_size == 0 || world_size < 1)
    throw Error("counts_for: bad element size or world size");
  const std::uint64_t world = static_cast<std::uint64_t>(world_size);
  CollectiveCounts counts;
  std::uint64_t total = bytes / element_size;
  if (splits_into_blocks(op)) {
    counts.block_count = total / world;
    total = counts.block_count * world;
  } else {
    counts.block_count = total;
  }
  counts.total_count = total;
  counts.bytes = total * element_size;
  switch (op) {
    case CollectiveOp::kReduceScatter:
      counts.send_count = total;
      counts.recv_count = counts.block_count;
      break;
    case CollectiveOp::kAllGather:
      counts.send_count = counts.block_count;
      counts.recv_count = total;
      break;
    default:
      counts.send_count = total;
      counts.recv_count = total;
      break;
  }
  return counts;
}

void enqueue_collective(Communicator& comm, CollectiveOp op, const void* send, void* recv,
                        const CollectiveCounts& counts, core::DType dtype, cudaStream_t stream) {
  const ncclDataType_t type = nccl_type(dtype);
  const std::size_t element = core::dtype_size(dtype);
  ncclComm_t handle = comm.get();
  const std::string what = op_name(op);
  switch (op) {
    case CollectiveOp::kAllReduce:
      comm.call(what, [&] {
        return ncclAllReduce(send, recv, counts.total_count, type, ncclSum, handle, stream);
      });
      return;
    case CollectiveOp::kReduceScatter:
      comm.call(what, [&] {
        return ncclReduceScatter(send, recv, counts.recv_count, type, ncclSum, handle, stream);
      });
      return;
    case CollectiveOp::kAllGather:
      comm.call(what,
                [&] { return ncclAllGather(send, recv, counts.send_count, type, handle, stream); });
      return;
    case CollectiveOp::kBroadcast:
      comm.call(what, [&] {
        return ncclBroadcast(send, recv, counts.total_count, type, kRootRank, handle, stream);
      });
      return;
    case CollectiveOp::kReduce:
      comm.call(what, [&] {
        return ncclReduce(send, recv, counts.total_count, type, ncclSum, kRootRank, handle, stream);
      });
      return;
    case CollectiveOp::kAllToAll: {
      // Grouped point-to-point, the form every NCCL version supports (and what PyTorch issues).
      const auto* send_bytes = static_cast<const char*>(send);
      auto* recv_bytes = static_cast<char*>(recv);
      const std::size_t block_bytes = counts.block_count * element;
      comm.call(what, [&] { return ncclGroupStart(); });
      for (int peer = 0; peer < comm.size(); ++peer) {
        comm.call(what, [&] {
          return ncclSend(send_bytes + peer * block_bytes, counts.block_count, type, peer, handle,
                          stream);
        });
        comm.call(what, [&] {
          return ncclRecv(recv_bytes + peer * block_bytes, counts.block_count, type, peer, handle,
                          stream);
        });
      }
      comm.call(what, [&] { return ncclGroupEnd(); });
      return;
    }
    case CollectiveOp::kSendRecv: {
      // Ring shift as nccl-tests: send to the next rank, receive from the previous one.
      const int next = (comm.rank() + 1) % comm.size();
      const int previous = (comm.rank() - 1 + comm.size()) % comm.size();
      comm.call(what, [&] { return ncclGroupStart(); });
      comm.call(what,
                [&] { return ncclSend(send, counts.total_count, type, next, handle, stream); });
      comm.call(what,
                [&] { return ncclRecv(recv, counts.total_count, type, previous, handle, stream); });
      comm.call(what, [&] { return ncclGroupEnd(); });
      return;
    }
  }
}

}  // namespace kiln::comm
