// Bytes a collective moves over each GPU's links, as nccl-tests' bus bandwidth counts them
// (doc/PERFORMANCE.md in NVIDIA/nccl-tests) and ParallelKernelBench's roofline charges them:
// bus bytes = factor x the collective's size, with the ring factors below.
#pragma once

#include <cstdint>

#include "comm/collective.hpp"

namespace kiln::roofline {

// allreduce 2(n-1)/n; reducescatter, allgather, alltoall (n-1)/n; broadcast, reduce, sendrecv 1.
double bus_factor(comm::CollectiveOp op, int world_size);

// Bytes over one GPU's links for a collective of `bytes` (the full vector, as nccl-tests sizes).
double bus_bytes(comm::CollectiveOp op, double bytes, int world_size);

}  // namespace kiln::roofline
