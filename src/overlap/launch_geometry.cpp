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
  // The scheduler's own problem (Cᵀ for a swapped kernel); the tile counts stay C's.
  const SchedulerFrame frame = scheduler_frame(shape, config);
  const cutlass::gemm::BatchedGemmCoord problem(frame.problem.m, frame.problem.n, shape.k, 1);
  const cutlass::gemm::GemmCoord cta(frame.tile.m, frame.tile.n, 1);
  const cutlass::gemm::GemmCoord cluster(frame.cluster.m, frame.cluster.n, 1);
  const auto raster = schedule.raster_along_n ? Params::RasterOrderOptions::AlongN
                                              : Params::RasterOrderOptions::AlongM;
  // Claimed tiles: CUTLASS's parameters without swizzle (the band order pads nothing).
  const int swizzle = schedule.claimed_tiles ? 1 : schedule.swizzle;
  Params params;
  params.initialize(problem, cta, cluster, hw, swizzle, raster);
  if (!schedule.claimed_tiles) {
    widen_scheduler_swizzle(params, frame.problem, frame.tile, frame.cluster, schedule,
                            hw.sm_count);
  }
  const dim3 grid = Params::get_grid_shape(problem, cta, cluster, hw, swizzle, raster);
  LaunchGeometry g;
  g.grid_ctas = static_cast<int>(grid.x * grid.y * grid.z);
  g.slots = static_cast<int>(params.blocks_per_problem_);
  g.tiles_m = (shape.m + config.tile.m - 1) / config.tile.m;
  g.tiles_n = (shape.n + config.tile.n - 1) / config.tile.n;
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

SchedulerModel scheduler_model(const GemmShape& shape, const GemmConfig& config,
                               const ScheduleOptions& schedule) {
  const SchedulerFrame frame = scheduler_frame(shape, config);
  SchedulerModel model;
  model.tiles_m = (frame.problem.m + frame.tile.m - 1) / frame.tile.m;
  model.tiles_n = (frame.problem.n + frame.tile.n - 1) / frame.tile.n;
  model.cluster_m = frame.cluster.m;
  model.cluster_n = frame.cluster.n;
  model.swizzle = schedule.swizzle;
  model.raster_along_n = schedule.raster_along_n;
  model.claimed = schedule.claimed_tiles;
  model.serpentine = schedule.serpentine;
  return model;
}

TileCoord c_tile_at(const GemmShape& shape, const GemmConfig& config,
                    const ScheduleOptions& schedule, int slot) {
  const TileCoord t = scheduler_tile(scheduler_model(shape, config, schedule), slot);
  return scheduler_frame(shape, config).swapped ? TileCoord{t.n, t.m} : t;
}

}  // namespace kiln::overlap
