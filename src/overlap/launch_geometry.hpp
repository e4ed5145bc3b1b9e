// The persistent GEMM's launch geometry (CTAs, slots, waves) computed on the host without a GPU,
// with CUTLASS's own scheduler arithmetic (PersistentTileSchedulerSm90Params, header-only), so that
// the tuner can plan for a shape on a machine with no GPU. The GPU test
// LaunchGeometryGpu.HostFormulaMatchesTheKernel checks it against SignalingGemm::geometry().
#pragma once

#include "overlap/gemm_shape.hpp"

namespace kiln::overlap {

// As SignalingGemm::geometry() for the kernel of `config`: the cap (0: every SM) becomes CUTLASS's
// SM count, the swizzle and the cluster pad the tile grid, and the grid is truncated to the tiles.
// (Both schedules use the same persistent scheduler; ping-pong's two warp groups take alternate
// tiles of the same sequence, so the geometry does not depend on the schedule.)
// Throws kiln::UsageError for a non-positive shape or SM count.
LaunchGeometry host_launch_geometry(const GemmShape& shape, const GemmConfig& config,
                                    const ScheduleOptions& schedule, int device_sms);

}  // namespace kiln::overlap
