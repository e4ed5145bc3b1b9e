// Bus volume of the collectives (see bus_volume.hpp).
#include "roofline/bus_volume.hpp"

#include "core/error.hpp"

namespace kiln::roofline {

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

double bus_bytes(comm::CollectiveOp op, double bytes, int world_size) {
  return bus_factor(op, world_size) * bytes;
}

}  // namespace kiln::roofline
