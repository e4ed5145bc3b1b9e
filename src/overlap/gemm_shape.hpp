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

// A CTA tile (rows x columns of C one CTA computes at a time).
struct TileShape {
  int m = 128, n = 256;
  bool operator==(const TileShape&) const = default;
};
std::string tile_name(TileShape tile);  // "128x256"

// Thread-block cluster: CTAs that share their A (cluster.n > 1) or B (cluster.m > 1) tiles by
// TMA multicast.
struct ClusterShape {
  int m = 2, n = 1;
  bool operator==(const ClusterShape&) const = default;
  int size() const { return m * n; }
};

// CUTLASS's sm90 warp-specialized persistent schedules. Cooperative: both consumer warp groups
// work on one tile, split along M, and run its epilogue together. Cooperative split along N: the
// same kernel with the warp groups side by side along N (a CTA tile wider than one GMMA
// instruction, e.g. 128x320 as two 128x160 halves, or 192x192 as two 192x96: the tiles cuBLAS runs
// on H100 for several of kiln's shapes, which CUTLASS's collective builder does not offer).
// Ping-pong: each consumer warp group owns a whole tile and the two alternate, so one group's
// epilogue hides behind the other's main loop (CUTLASS's
// sm90_gemm_tma_warpspecialized_pingpong.hpp).
// Ping-pong with A and B swapped: the kernel computes Cᵀ = B·Aᵀ, so that kiln's tile height is
// the GMMA instruction's width (any multiple of 8 up to 256, e.g. 144 or 160 rows, where a
// 64-row GMMA atom allows only multiples of 64) and its tile width is a whole number of 64-row
// atoms; the epilogue stores the transposed fragments back as rows of C (stmatrix .trans). Its
// tile and cluster are given in C's terms like every other schedule's
// (docs/research/gemm-tile-heights-for-the-last-wave.md).
enum class KernelSchedule { kCooperative, kCooperativeSplitN, kPingpong, kPingpongSwapAB };
// Ping-pong, on C or on Cᵀ: the schedules built with claimed tiles too (ScheduleOptions).
constexpr bool is_pingpong(KernelSchedule k) {
  return k == KernelSchedule::kPingpong || k == KernelSchedule::kPingpongSwapAB;
}
// "coop", "coop-n", "pingpong", "pingpong-swap"
std::string kernel_schedule_name(KernelSchedule schedule);
// Parses those names; throws kiln::UsageError naming `argument` and the accepted ones.
KernelSchedule parse_kernel_schedule(const std::string& text, const std::string& argument);

// One compiled signaling GEMM: what a plan picks per shape (the `gemm` of an overlap::Plan).
struct GemmConfig {
  TileShape tile{128, 256};
  ClusterShape cluster{2, 1};
  KernelSchedule kernel = KernelSchedule::kCooperative;
  bool operator==(const GemmConfig&) const = default;
};
// "tile=128x256 cluster=2x1 kernel=coop": the same key=value words a plan uses.
std::string gemm_config_name(const GemmConfig& config);

// The problem as CUTLASS's kernel and its tile scheduler see it: C's own for every schedule
// except ping-pong-swap, whose kernel computes Cᵀ (M and N exchanged, in the shape, the tile
// and the cluster). The scheduler's tile grid, its swizzle, its raster order (raster=n walks
// this problem's N, which for a swapped kernel is C's M) and its slot order are this problem's.
struct SchedulerFrame {
  GemmShape problem;
  TileShape tile;
  ClusterShape cluster;
  bool swapped = false;  // problem.m is C's N
};
SchedulerFrame scheduler_frame(const GemmShape& shape, const GemmConfig& config);
// The configurations kiln compiles, for every dtype and weight layout; the first is the default.
// Chosen after CUTLASS's profiler space for sm90 16-bit GEMMs: cooperative 128x256 / 256x128 /
// 128x128 tiles and ping-pong 128x128 / 64x256 tiles (a ping-pong warp group holds a whole tile's
// accumulators, so 128x256 does not fit its registers), with 1x1, 2x1 and 1x2 clusters; and the
// 128x320 tile split along N that cuBLAS runs for several of kiln's shapes.
const std::vector<GemmConfig>& built_gemm_configs();
// Built configurations not yet checked against cuBLAS on a GPU (SignalingGemmGpu.
// EveryConfigurationMatchesCublas with KILN_TEST_GEMM_CONFIG): a plan may name them, the GEMM
// search leaves them out unless asked (search option unchecked=1). Empty once each has passed.
bool awaits_gpu_check(const GemmConfig& config);
// Throws kiln::UsageError naming `argument` and the built list unless `config` is built.
void check_gemm_config_built(const GemmConfig& config, const std::string& argument);

// Scheduler knobs that change the tile order (and with it L2 reuse), not the result.
struct ScheduleOptions {
  int cta_cap = 0;  // 0: every SM
  bool raster_along_n = true;
  int swizzle = 1;  // 1, 2, 4, 8 (CUTLASS's), 16 or 32 (overlap/wide_swizzle.hpp)
  // Ping-pong kernels only: after its first tile a cluster claims the next one from a global
  // counter instead of taking CUTLASS's static next (sm90_claimed_tile_scheduler.cuh), in the band
  // order of band_order.hpp: the swizzle is the band width, the last band narrower instead of
  // padded. Plan word scheduler=claimed (default static).
  bool claimed_tiles = false;
  // Claimed tiles only: odd bands walk the raster's major mode backwards (scheduler=serpentine).
  bool serpentine = false;
};

// The widest swizzle a plan may ask for.
inline constexpr int kMaxSwizzle = 32;

// What the persistent kernel will do for a shape under a CTA cap, read off CUTLASS's own scheduler.
struct LaunchGeometry {
  int grid_ctas = 0;  // CTAs launched = slots per wave
  int slots = 0;      // tiles the scheduler hands out, padding included
  int tiles_m = 0, tiles_n = 0;
  int waves() const { return (slots + grid_ctas - 1) / grid_ctas; }
};

}  // namespace kiln::overlap
