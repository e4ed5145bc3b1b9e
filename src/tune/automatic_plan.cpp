// The plan an overlap call runs when it is given none (see automatic_plan.hpp).
#include "tune/automatic_plan.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>
#include <nccl.h>

#include <cstring>
#include <vector>

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
  // Wire format: predicted_us (double), then the plan and the source, each NUL-terminated.
  constexpr std::size_t kBytes = 4096;
  std::vector<char> wire(kBytes, '\0');
  if (comm.rank() == 0) {
    const PlanLookup found = lookup_for_this_device(op, shape, dtype, comm.size(), options);
    const std::string plan = overlap::to_string(found.plan);
    const std::string source = found.source.substr(0, kBytes / 2);
    if (sizeof(double) + plan.size() + 1 + source.size() + 1 > kBytes) {
      throw Error(fmt::format(
          "automatic plan for {}x{}x{}: plan text of {} bytes is too long to share with the other "
          "ranks",
          shape.m, shape.n, shape.k, plan.size()));
    }
    std::memcpy(wire.data(), &found.predicted_us, sizeof(double));
    std::memcpy(wire.data() + sizeof(double), plan.c_str(), plan.size() + 1);
    std::memcpy(wire.data() + sizeof(double) + plan.size() + 1, source.c_str(), source.size() + 1);
  }
  core::Stream stream;
  core::DeviceBuffer buffer(kBytes);
  KILN_CUDA_CHECK(
      cudaMemcpyAsync(buffer.data(), wire.data(), kBytes, cudaMemcpyHostToDevice, stream.get()));
  comm.call("automatic plan broadcast", [&] {
    return ncclBroadcast(buffer.data(), buffer.data(), kBytes, ncclChar, 0, comm.get(),
                         stream.get());
  });
  comm.wait(stream.get(), "automatic plan broadcast");
  KILN_CUDA_CHECK(cudaMemcpy(wire.data(), buffer.data(), kBytes, cudaMemcpyDeviceToHost));
  PlanLookup found;
  std::memcpy(&found.predicted_us, wire.data(), sizeof(double));
  const std::string plan(wire.data() + sizeof(double));
  found.plan = overlap::parse_plan(plan, "rank 0's automatic plan");
  found.source = std::string(wire.data() + sizeof(double) + plan.size() + 1) +
                 (comm.rank() == 0 ? "" : " (rank 0's lookup)");
  return found;
}

}  // namespace kiln::tune
