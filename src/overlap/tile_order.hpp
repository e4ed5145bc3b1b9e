// The execution order of a persistent CUTLASS sm90 GEMM, modelled on the host: which output tile
// the static persistent scheduler hands out at each linear index (= kiln's slot). The signaling
// epilogue records the real slot of every tile on the device; this model predicts it (for tests
// that compare the two, and for tuning without a GPU). It follows the scheduler's documented
// behaviour: tiles padded to cluster x swizzle multiples, clusters walked along the raster's
// major mode, swizzle groups of 2^s clusters along the minor mode. Swizzles of 16 and 32 are
// kiln's own widening of that order (overlap/wide_swizzle.hpp). Claimed tiles follow the band
// order of band_order.hpp instead (no swizzle padding).
#pragma once

namespace kiln::overlap {

struct SchedulerModel {
  int tiles_m = 0, tiles_n = 0;  // real tiles
  int cluster_m = 2, cluster_n = 1;
  int swizzle = 1;  // requested max swizzle (1, 2, 4, 8, 16, 32)
  bool raster_along_n = true;
  // Claimed tiles: the band order of band_order.hpp (swizzle = band width, no swizzle padding).
  bool claimed = false;
  bool serpentine = false;
};

struct TileCoord {
  int m = 0, n = 0;  // tile indices; may lie in the padding (>= tiles_m or >= tiles_n)
};

// CTAs along one mode before any swizzle padding: ceil(extent / tile) rounded up to whole
// clusters (CUTLASS's get_tiled_cta_shape_mnl).
int scheduler_blocks(int extent, int tile, int cluster);

// log2 of the swizzle the scheduler applies to a grid of blocks_m x blocks_n CTAs (rounded to
// cluster multiples) when asked for at most `swizzle`: CUTLASS's rule up to 8 (a swizzle of 2^s
// needs about 3/4 of 2^s blocks along the smaller mode: 2, 3, 6), extended with the same ratio
// to 16 (12 blocks) and 32 (24 blocks).
int scheduler_log_swizzle(int blocks_m, int blocks_n, int swizzle);

// Tiles the scheduler hands out (padding included): CUTLASS's blocks_per_problem.
int scheduler_slots(const SchedulerModel& model);
// The tile at linear index `slot` (0 <= slot < scheduler_slots).
TileCoord scheduler_tile(const SchedulerModel& model, int slot);

}  // namespace kiln::overlap
