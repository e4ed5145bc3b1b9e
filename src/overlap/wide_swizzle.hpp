// Scheduler swizzles wider than CUTLASS's 8 (issue 17). CUTLASS's static persistent scheduler
// walks clusters along the raster's major mode in groups of 2^s along the minor one, and caps s
// at 3 when it derives its parameters (PersistentTileSchedulerSm90Params::get_log_swizzle_size).
// A wave of 132 CTAs then covers 8 tile rows (or columns) by ~16 and the operand panels of the
// other mode are read again for every band of 8: on 16384x16384x2048 that is B read 16 times,
// where a band of 16 or 32 reads it 8 or 4 times (Nsight Compute, run 7 of
// docs/results/2026-11-24-gemm-configs/: kiln's kernel read DRAM at 1.4-1.9x cuBLAS's rate on the
// same shapes, and under the board's power cap DRAM traffic costs clock).
//
// The device side needs nothing new: the scheduler reads log_swizzle_size_ as a plain shift
// (sm90_tile_scheduler.hpp, get_work_idx_m_and_n). So kiln lets CUTLASS derive the parameters
// with its own cap and then re-derives the members that depend on the swizzle, the way
// PersistentTileSchedulerSm90Params::initialize does, with kiln's wider rule
// (scheduler_log_swizzle in tile_order.hpp, which the host model of the tile order shares).
#pragma once

#include <cutlass/gemm/kernel/tile_scheduler_params.h>

#include <cstdint>

#include "core/error.hpp"
#include "overlap/gemm_shape.hpp"
#include "overlap/tile_order.hpp"

namespace kiln::overlap {

// Widens `params` (initialised by CUTLASS for the same problem, tile, cluster and raster option,
// with max_swizzle_size = schedule.swizzle) to the swizzle kiln's rule gives. No change when that
// rule gives at most 8 (CUTLASS's own then). `sm_count` is the SM count the grid was sized for.
inline void widen_scheduler_swizzle(
    cutlass::gemm::kernel::detail::PersistentTileSchedulerSm90Params& params,
    const GemmShape& shape, const TileShape& tile, const ClusterShape& cluster,
    const ScheduleOptions& schedule, int sm_count) {
  using Params = cutlass::gemm::kernel::detail::PersistentTileSchedulerSm90Params;
  const auto round_up = [](int value, int multiple) {
    return (value + multiple - 1) / multiple * multiple;
  };
  const int blocks_m = scheduler_blocks(shape.m, tile.m, cluster.m);
  const int blocks_n = scheduler_blocks(shape.n, tile.n, cluster.n);
  const int s = scheduler_log_swizzle(blocks_m, blocks_n, schedule.swizzle);
  if (s <= 3) return;
  if ((params.raster_order_ == Params::RasterOrder::AlongN) != schedule.raster_along_n) {
    throw Error("signaling GEMM: the scheduler's raster order is not the plan's");
  }
  // CUTLASS sizes the grid (Kernel::get_grid_shape) with its capped swizzle; the only thing that
  // depends on it there is the truncation to the padded tile count, which a swizzle of 16 (at
  // least 12 x 12 blocks) never reaches on an sm_90 part. Refuse rather than launch a grid that
  // disagrees with the parameters if that ever changes.
  if (static_cast<long long>(blocks_m) * blocks_n < sm_count) {
    throw Error("signaling GEMM: a swizzle wider than 8 on fewer tiles than SMs is not modelled");
  }
  // Only the minor mode (the one the swizzle groups of 2^s clusters tile) needs whole groups;
  // CUTLASS pads both, which with 16 or 32 would add up to 31 clusters of padding tiles along the
  // major mode, each computed in full (the kernel runs padding tiles' main loops on zeros).
  const bool along_n = schedule.raster_along_n;
  const int padded_m = along_n ? round_up(blocks_m, (1 << s) * cluster.m) : blocks_m;
  const int padded_n = along_n ? blocks_n : round_up(blocks_n, (1 << s) * cluster.n);
  params.problem_tiles_m_ = static_cast<std::uint32_t>(padded_m / cluster.m);
  params.problem_tiles_n_ = static_cast<std::uint32_t>(padded_n / cluster.n);
  params.blocks_per_problem_ = static_cast<std::uint64_t>(padded_m) * padded_n *
                               (params.problem_tiles_l_ > 0 ? params.problem_tiles_l_ : 1);
  params.log_swizzle_size_ = s;
  params.divmod_batch_ = cutlass::FastDivmodU64(static_cast<std::uint64_t>(padded_m) * padded_n);
  params.divmod_cluster_blk_major_ =
      cutlass::FastDivmodU64(along_n ? static_cast<std::uint64_t>(padded_n / cluster.n)
                                     : static_cast<std::uint64_t>(padded_m / cluster.m));
}

}  // namespace kiln::overlap
