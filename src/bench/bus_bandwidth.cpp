#include "bench/bus_bandwidth.hpp"

#include "core/error.hpp"

namespace kiln::bench {

double bus_factor(comm::CollectiveOp op, int world_size) {
  if (world_size < 1) throw Error("bus_factor: world size must be at least 1");
  const double n = world_size;
  switch (op) {
    case comm::CollectiveOp::kAllReduce:
      return 2.0 * (n - 1.0) / n;
    case comm::CollectiveOp::kReduceScatter:
    case comm::CollectiveOp::kAllGather:
    case comm::CollectiveOp::kAllToAll:
      return (n - 1.0) / n;
    case comm::CollectiveOp::kBroadcast:
    case comm::CollectiveOp::kReduce:
    case comm::CollectiveOp::kSendRecv:
      return 1.0;
  }
  throw Error("bus_factor: unknown op");
}

double algorithm_bandwidth_gbps(std::uint64_t bytes, double seconds) {
  if (seconds <= 0.0) return 0.0;
  return static_cast<double>(bytes) / seconds / 1e9;
}

}  // namespace kiln::bench
