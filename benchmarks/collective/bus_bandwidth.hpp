// Algorithm and bus bandwidth as nccl-tests defines them (doc/PERFORMANCE.md in NVIDIA/nccl-tests):
// algbw = bytes / time; busbw = algbw * factor, where the factor makes busbw comparable with the
// hardware's link bandwidth whatever the world size.
#pragma once

#include <cstdint>

#include "comm/collective.hpp"
#include "roofline/bus_volume.hpp"

namespace kiln::benchmarks {

// allreduce 2(n-1)/n; reducescatter, allgather, alltoall (n-1)/n; broadcast, reduce, sendrecv 1
// (one definition, shared with the roofline's communication volumes).
using roofline::bus_factor;

// GB/s (1e9 bytes per second) for `bytes` moved in `seconds`.
double algorithm_bandwidth_gbps(std::uint64_t bytes, double seconds);

}  // namespace kiln::benchmarks
