// The persistent GEMM's launch geometry (CTAs, slots, waves) computed on the host without a GPU,
// with CUTLASS's own scheduler arithmetic (PersistentTileSchedulerSm90Params, header-only), so that
// the tuner can plan for a shape on a machine with no GPU. The GPU test
// LaunchGeometryGpu.HostFormulaMatchesTheKernel checks it against SignalingGemm::geometry().
#pragma once

#include "overlap/gemm_shape.hpp"

namespace kiln::overlap {

// As SignalingGemm::geometry() for kiln's 2x1-cluster kernels: the cap (0: every SM) becomes
// CUTLASS's SM count, the swizzle pads the tile grid, and the grid is truncated to the tiles.
// Throws kiln::UsageError for a non-positive shape or SM count.
LaunchGeometry host_launch_geometry(const GemmShape& shape, TileShape tile,
                                    const ScheduleOptions& schedule, int device_sms);

}  // namespace kiln::overlap
