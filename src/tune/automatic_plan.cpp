// The plan an overlap call runs when it is given none (see automatic_plan.hpp).
#include "tune/automatic_plan.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>
#include <nccl.h>

#include <cstring>
#include <vector>

#include "comm/broadcast_text.hpp"
#include "core/cuda_check.hpp"
#include "core/device_buffer.hpp"
#include "core/error.hpp"
#include "core/hardware_profile.hpp"
#include "core/stream.hpp"
#include "overlap/launch_geometry.hpp"

namespace kiln::tune {
namespace {

// This rank's own lookup, with groups that do not fit this device's waves replaced.
PlanLookup lookup_for_this_device(overlap::OverlapOp op, const overlap::GemmShape& shape,
                                  core::DType dtype, int world, const PlanLookupOptions& options) {
  const PlanKey key = current_plan_key(op, shape, dtype, world);
  PlanLookupOptions o = options;
  const int sms = overlap::current_device_sms();
  if (o.device_sms <= 0) o.device_sms = sms;
  PlanLookup found = lookup_plan(key, o);
  if (!found.plan.partition.empty()) {
    const overlap::Plan& p = found.plan;
    const int waves = overlap::host_launch_geometry(shape, p.gemm, p.schedule, sms).waves();
    int total = 0;
    for (int g : p.partition) total += g;
    if (total != waves) {
      found.source += fmt::format(
          "; its groups cover {} waves but this GPU ({} SMs) launches {}: one group per wave",
          total, sms, waves);
      found.plan.partition.clear();
      found.predicted_us = -1.0;
    }
  }
  return found;
}

}  // namespace

PlanKey current_plan_key(overlap::OverlapOp op, const overlap::GemmShape& shape, core::DType dtype,
                         int world) {
  int device = 0;
  KILN_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  KILN_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  const auto hw = core::profile_for_device_name(prop.name);
  return {hw ? hw->key : std::string(prop.name), world, overlap::overlap_op_name(op),
          core::dtype_name(dtype), shape};
}

PlanLookup automatic_plan(comm::Communicator& comm, overlap::OverlapOp op,
                          const overlap::GemmShape& shape, core::DType dtype,
                          const PlanLookupOptions& options) {
  // Checked first so that a bad shape is named as such, not as a lookup failure.
  if (shape.m <= 0 || shape.n <= 0 || shape.k <= 0) {
    throw UsageError(
        fmt::format("shape {}x{}x{}: M, N and K must be positive", shape.m, shape.n, shape.k));
  }
  if (comm.size() == 1) return lookup_for_this_device(op, shape, dtype, 1, options);
  // Rank 0 looks up; the others take its answer, as lines: predicted us, plan, source.
  std::string wire;
  if (comm.rank() == 0) {
    const PlanLookup found = lookup_for_this_device(op, shape, dtype, comm.size(), options);
    wire = fmt::format("{:.17g}\n{}\n{}", found.predicted_us, overlap::to_string(found.plan),
                       found.source.substr(0, 2048));
  }
  wire = comm::broadcast_text(comm, wire, "automatic plan");
  const std::size_t first = wire.find('\n'), second = wire.find('\n', first + 1);
  if (first == std::string::npos || second == std::string::npos) {
    throw Error("automatic plan: rank 0's answer is malformed: " + wire);
  }
  PlanLookup found;
  found.predicted_us = std::stod(wire.substr(0, first));
  found.plan =
      overlap::parse_plan(wire.substr(first + 1, second - first - 1), "rank 0's automatic plan");
  found.source = wire.substr(second + 1) + (comm.rank() == 0 ? "" : " (rank 0's lookup)");
  return found;
}

}  // namespace kiln::tune
