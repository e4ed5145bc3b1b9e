// The persistent GEMM's launch geometry (CTAs, slots, waves) computed on the host without a GPU,
// with CUTLASS's own scheduler arithmetic (PersistentTileSchedulerSm90Params, header-only), so that
// the tuner can plan for a shape on a machine with no GPU. The GPU test
// LaunchGeometryGpu.HostFormulaMatchesTheKernel checks it against SignalingGemm::geometry().
#pragma once

#include "overlap/gemm_shape.hpp"
#include "overlap/tile_order.hpp"

namespace kiln::overlap {

// As SignalingGemm::geometry() for the kernel of `config`: the cap (0: every SM) becomes CUTLASS's
// SM count, the swizzle and the cluster pad the tile grid, and the grid is truncated to the tiles.
// (Both schedules use the same persistent scheduler; ping-pong's two warp groups take alternate
// tiles of the same sequence, so the geometry does not depend on the schedule.)
// Throws kiln::UsageError for a non-positive shape or SM count.
LaunchGeometry host_launch_geometry(const GemmShape& shape, const GemmConfig& config,
                                    const ScheduleOptions& schedule, int device_sms);

// The fewest CTAs (a multiple of the cluster size) with which the kernel of `config` still runs
// `shape` in as many waves as on every SM (`schedule`'s raster and swizzle, its cap ignored);
// 0 when that is every CTA the uncapped launch has. The SMs left idle then were idle in the last
// wave anyway, and under the power cap their share of the power raises the clock of the others
// (DeepGEMM's sm90 heuristics choose fewer SMs than the chip has for that reason).
int balanced_cta_cap(const GemmShape& shape, const GemmConfig& config,
                     const ScheduleOptions& schedule, int device_sms);

// The host model of the kernel's tile order (tile_order.hpp) for `config` on `shape`: the model of
// the scheduler's own problem (scheduler_frame), whose tiles are Cᵀ's for a swapped kernel.
SchedulerModel scheduler_model(const GemmShape& shape, const GemmConfig& config,
                               const ScheduleOptions& schedule);
// The tile of C (row and column tile indices) that the kernel of `config` computes at linear
// index `slot`: scheduler_tile of that model, transposed back for a swapped kernel. It may lie in
// the padding (indices past C's tile counts).
TileCoord c_tile_at(const GemmShape& shape, const GemmConfig& config,
                    const ScheduleOptions& schedule, int slot);

}  // namespace kiln::overlap
