// The values that describe a GEMM to the overlap runtime and everything above it (shapes, tiles,
// weight layout, scheduler knobs, launch geometry) and their text forms. No kernel interface here:
// a file that only speaks of shapes and plans includes this, not signaling_gemm.hpp.
#pragma once

#include <string>
#include <vector>

namespace kiln::overlap {

// How the weight matrix B is stored. A is always row-major M×K (activations).
enum class WeightLayout {
  kNK,  // B stored N×K row-major: C = A·Bᵀ (nn.Linear's weight)
  kKN,  // B stored K×N row-major: C = A·B
};
std::string weight_layout_name(WeightLayout layout);  // "nk", "kn"
WeightLayout parse_weight_layout(const std::string& text, const std::string& argument);

// The collective that follows the GEMM.
enum class OverlapOp { kReduceScatter, kAllReduce };
std::string overlap_op_name(OverlapOp op);  // "rs", "ar"
OverlapOp parse_overlap_op(const std::string& text, const std::string& argument);

// A GEMM per GPU: C (M×N) = A (M×K) · op(B).
struct GemmShape {
  int m = 0, n = 0, k = 0;
};

// "4096x8192x8192".
std::string shape_name(const GemmShape& shape);
// Parses "MxNxK"; throws kiln::UsageError naming `argument` unless M, N, K are positive and N and
// K multiples of 8 (16-byte rows for TMA and the vectorised reorder).
GemmShape parse_shape(const std::string& text, const std::string& argument);
// The per-GPU shapes kiln's overlap figures are measured on (the issue shape set): what
// `kiln overlap bench` and `kiln tune profile` run when given no --shape.
std::vector<GemmShape> default_overlap_shapes();

// The CTA tiles kiln builds (each a CUTLASS cooperative kernel with a 2x1 cluster).
struct TileShape {
  int m = 128, n = 256;
  bool operator==(const TileShape&) const = default;
};
std::string tile_name(TileShape tile);  // "128x256"

// Scheduler knobs that change the tile order (and with it L2 reuse), not the result.
struct ScheduleOptions {
  int cta_cap = 0;  // 0: every SM
  bool raster_along_n = true;
  int swizzle = 1;  // 1, 2, 4 or 8
};

// What the persistent kernel will do for a shape under a CTA cap, read off CUTLASS's own scheduler.
struct LaunchGeometry {
  int grid_ctas = 0;  // CTAs launched = slots per wave
  int slots = 0;      // tiles the scheduler hands out, padding included
  int tiles_m = 0, tiles_n = 0;
  int waves() const { return (slots + grid_ctas - 1) / grid_ctas; }
};

}  // namespace kiln::overlap
