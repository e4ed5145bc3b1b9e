// Host-side launch geometry (see launch_geometry.hpp).
#include "overlap/launch_geometry.hpp"

#include <cutlass/gemm/kernel/tile_scheduler_params.h>
#include <fmt/format.h>

#include "core/error.hpp"
#include "overlap/wide_swizzle.hpp"

namespace kiln::overlap {

LaunchGeometry host_launch_geometry(const GemmShape& shape, const GemmConfig& config,
                                    const ScheduleOptions& schedule, int device_sms) {
  if (shape.m < 1 || shape.n < 1 || shape.k < 1) {
    throw UsageError(
        fmt::format("shape {}x{}x{}: every dimension must be >= 1", shape.m, shape.n, shape.k));
  }
  if (device_sms < 2) throw UsageError(fmt::format("SM count {}: must be >= 2", device_sms));
  using Params = cutlass::gemm::kernel::detail::PersistentTileSchedulerSm90Params;
  cutlass::KernelHardwareInfo hw;
  hw.sm_count =
      schedule.cta_cap > 0 && schedule.cta_cap < device_sms ? schedule.cta_cap : device_sms;
  const cutlass::gemm::BatchedGemmCoord problem(shape.m, shape.n, shape.k, 1);
  const TileShape tile = config.tile;
  const cutlass::gemm::GemmCoord cta(tile.m, tile.n, 1);
  const cutlass::gemm::GemmCoord cluster(config.cluster.m, config.cluster.n, 1);
  const auto raster = schedule.raster_along_n ? Params::RasterOrderOptions::AlongN
                                              : Params::RasterOrderOptions::AlongM;
  Params params;
  params.initialize(problem, cta, cluster, hw, schedule.swizzle, raster);
  widen_scheduler_swizzle(params, shape, tile, config.cluster, schedule, hw.sm_count);
  const dim3 grid = Params::get_grid_shape(problem, cta, cluster, hw, schedule.swizzle, raster);
  LaunchGeometry g;
  g.grid_ctas = static_cast<int>(grid.x * grid.y * grid.z);
  g.slots = static_cast<int>(params.blocks_per_problem_);
  g.tiles_m = (shape.m + tile.m - 1) / tile.m;
  g.tiles_n = (shape.n + tile.n - 1) / tile.n;
  return g;
}

int balanced_cta_cap(const GemmShape& shape, const GemmConfig& config,
                     const ScheduleOptions& schedule, int device_sms) {
  ScheduleOptions uncapped = schedule;
  uncapped.cta_cap = 0;
  const LaunchGeometry full = host_launch_geometry(shape, config, uncapped, device_sms);
  const int waves = full.waves();
  const int cluster = config.cluster.size();
  // ceil(slots / waves) CTAs would do in a plain grid; the cluster's rounding and the scheduler's
  // own arithmetic are checked by asking for the geometry of each cap tried.
  const int least = (full.slots + waves - 1) / waves;
  for (int cap = (least + cluster - 1) / cluster * cluster; cap < full.grid_ctas; cap += cluster) {
    ScheduleOptions capped = schedule;
    capped.cta_cap = cap;
    const LaunchGeometry g = host_launch_geometry(shape, config, capped, device_sms);
    if (g.grid_ctas == cap && g.waves() == waves && g.slots == full.slots) return cap;
  }
  return 0;
}

}  // namespace kiln::overlap
