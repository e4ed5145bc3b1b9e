// The execution order of a persistent CUTLASS sm90 GEMM, modelled on the host: which output tile
// the static persistent scheduler hands out at each linear index (= kiln's slot). The signaling
// epilogue records the real slot of every tile on the device; this model predicts it (for tests
// that compare the two, and for tuning without a GPU). It follows the scheduler's documented
// behaviour: tiles padded to cluster x swizzle multiples, clusters walked along the raster's
// major mode, swizzle groups of 2^s clusters along the minor mode.
#pragma once

namespace kiln::overlap {

struct SchedulerModel {
  int tiles_m = 0, tiles_n = 0;  // real tiles
  int cluster_m = 2, cluster_n = 1;
  int swizzle = 1;  // requested max swizzle (1, 2, 4, 8)
  bool raster_along_n = true;
};

struct TileCoord {
  int m = 0, n = 0;  // tile indices; may lie in the padding (>= tiles_m or >= tiles_n)
};

// Tiles the scheduler hands out (padding included): CUTLASS's blocks_per_problem.
int scheduler_slots(const SchedulerModel& model);
// The tile at linear index `slot` (0 <= slot < scheduler_slots).
TileCoord scheduler_tile(const SchedulerModel& model, int slot);

}  // namespace kiln::overlap
