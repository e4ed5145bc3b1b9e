// The plan an overlap call runs when it is given none (see automatic_plan.hpp).
#include "overlap/automatic_plan.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include "core/cuda_check.hpp"
#include "core/hardware_profile.hpp"
#include "overlap/launch_geometry.hpp"

namespace kiln::overlap {

PlanKey current_plan_key(OverlapOp op, const GemmShape& shape, core::DType dtype, int world) {
  int device = 0;
  KILN_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  KILN_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  const auto hw = core::profile_for_device_name(prop.name);
  return {hw ? hw->key : std::string(prop.name), world, overlap_op_name(op),
          core::dtype_name(dtype), shape};
}

PlanLookup automatic_plan(OverlapOp op, const GemmShape& shape, core::DType dtype, int world,
                          const PlanLookupOptions& options) {
  const PlanKey key = current_plan_key(op, shape, dtype, world);
  PlanLookupOptions o = options;
  const int sms = current_device_sms();
  if (o.device_sms <= 0) o.device_sms = sms;
  PlanLookup found = lookup_plan(key, o);
  if (!found.plan.partition.empty()) {
    const Plan& p = found.plan;
    const int waves =
        host_launch_geometry(shape, p.tile, {p.cta_cap, p.raster_along_n, p.swizzle}, sms).waves();
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

}  // namespace kiln::overlap
