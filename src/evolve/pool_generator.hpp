// Strategy-to-kernel translation for the pooling family (issue 20): the kb1 pooling problems
// (kb1-41..46: max and average pooling in 1, 2 and 3 dimensions, PyTorch's nn.MaxPool*d /
// nn.AvgPool*d with their KernelBench kernel, stride, padding and dilation; ceil_mode False,
// count_include_pad True). Each thread computes a run of consecutive outputs along the innermost
// axis. The strategies choose the run (scalar-loads: `unroll` outputs; vector16-loads: `unroll`
// float4s of outputs, stored 16 bytes at a time where aligned) and the work mapping (a one-shot
// grid: element-per-thread; a grid sized to the SMs that walks the outputs: grid-stride, or
// persistent-grid; shared-tile: a block stages its input band in shared memory and pools it in
// two separable passes, pool_tile_generator.cpp; or, for stride-1 windows, register-sweep: a thread
// walks down a strip of output rows keeping row-pooled inputs in registers,
// pool_sweep_generator.cpp; or warp-row-separable: a warp pools a row segment's outer taps column
// by column from coalesced loads, then along the row from shared memory, any window,
// pool_warp_row_generator.cpp; or, for 3-D windows, sliding-planes: a block walks the input depths
// of a tile once, pooling each over height and width in shared memory and adding it to the output
// depths that take it, pool_planes_generator.cpp); the knobs fill in the numbers. cp.async and TMA
// have no generator here: such genomes are reported as failures without compiling anything.
#pragma once

#include <optional>
#include <string>

#include "evolve/genome.hpp"

namespace kiln::evolve {

// A kb1 pooling problem's window (the same on every spatial axis).
struct PoolWindow {
  bool max = true;  // max, else average
  int dims = 1;     // spatial dimensions
  int kernel = 1, stride = 1, padding = 0, dilation = 1;
};
// The window of a kb1 pooling problem; none for other problems.
std::optional<PoolWindow> pool_window_of(const std::string& problem);

// Source text both pooling candidates share, for the kKernel/kStride/kPadding/kDilation constants
// defined before it: `Axis`, `divisor` (PyTorch's count_include_pad divisor) and `out_of` (the
// output length); and the entry point's opening (the ABI version, the argument checks, the dims
// read into batch, channels, depth, height and width).
std::string pool_axis_source();
std::string pool_entry_opening();
// The includes and the window's constants (kMax, kDims, kKernel, kStride, kPadding, kDilation)
// every pooling candidate opens with, and its output stores (store_out, store_out4): evict-first
// where `stream_stores` (cache-streaming).
std::string pool_window_constants(const PoolWindow& window, bool stream_stores);

// shared-tile's block (pool_tile_generator.cpp): `threads` threads compute `rows` output rows
// (1 for a 1-D window) of `width` = threads x outputs consecutive outputs, from an input band of
// `rows_in` rows of `span` columns staged in shared memory (`shared_bytes` with the row-pooled
// copy). Always one that fits: rows, then outputs, then threads shrink to kMaxTileBytes.
struct PoolTile {
  int threads, outputs, rows, width, span, rows_in, shared_bytes;
};
inline constexpr long long kMaxTileBytes = 160 * 1024;
PoolTile pool_tile_of(const Genome& genome, const PoolWindow& window);

// The shared-tile candidate (1-D and 2-D windows; throws kiln::UsageError for 3-D ones).
std::string generate_pool_tile_candidate(const Genome& genome, const std::string& problem,
                                         const PoolWindow& window);

// The register-sweep candidate (pool_sweep_generator.cpp): a thread computes `outputs` consecutive
// outputs of one plane's row and walks down a strip of `rows` output rows (1-D: one row), each
// input row read once into registers, pooled along it and kept in a ring of the window's height.
// Stride-1 1-D and 2-D windows only; throws kiln::UsageError for others.
std::string generate_pool_sweep_candidate(const Genome& genome, const std::string& problem,
                                          const PoolWindow& window);

// warp-row-separable's configuration (pool_warp_row_generator.cpp): `warps` a block, each computing
// 32 x `lane_outputs` outputs of a row from an input span of `span` columns, `columns` a lane, in
// `shared_bytes` of static shared memory. The knobs shrink (outputs a lane, then warps) until the
// slices fit kMaxWarpRowBytes and a lane pools at most kMaxWarpRowColumns columns, where they can:
// a stride of ~66 or more leaves a lane more columns (registers spill), and one of ~400 or more
// a warp's slice above kMaxWarpRowBytes, which generate_pool_warp_row_candidate refuses.
struct PoolWarpRow {
  int warps, lane_outputs, span, columns, shared_bytes;
};
inline constexpr int kMaxWarpRowBytes = 48 * 1024;
inline constexpr int kMaxWarpRowColumns = 64;
PoolWarpRow pool_warp_row_of(const Genome& genome, const PoolWindow& window);

// The warp-row-separable candidate: any window (1-3 dimensions, any stride, padding, dilation).
std::string generate_pool_warp_row_candidate(const Genome& genome, const std::string& problem,
                                             const PoolWindow& window);

// sliding-planes' configuration (pool_planes_generator.cpp): `threads` a block as `rows` tile rows,
// each thread computing `outputs` outputs of its row (threads / rows apart), so a tile of rows x
// `cols` outputs of (height, width), for `planes` output depths; an input depth's tile is
// `rows_in` x `cols_in` (`shared_bytes` for two such tiles), copied `loads` elements a thread. The
// knobs shrink (outputs a thread, then rows) until a thread loads at most kMaxPlanesLoads and the
// tile fits kMaxPlanesBytes.
struct PoolPlanes {
  int threads, rows, outputs, cols, planes, rows_in, cols_in, shared_bytes, loads;
};
inline constexpr int kMaxPlanesLoads = 32;
inline constexpr int kMaxPlanesBytes = 48 * 1024;
PoolPlanes pool_planes_of(const Genome& genome, const PoolWindow& window);

// The sliding-planes candidate: 3-D windows (any stride, padding, dilation); throws
// kiln::UsageError for others.
std::string generate_pool_planes_candidate(const Genome& genome, const std::string& problem,
                                           const PoolWindow& window);

// The strategies this generator implements; for `problem`, the search's allowed set (no
// shared-tile for a 3-D window; register-sweep only for a stride-1 window of 1 or 2 dimensions;
// sliding-planes only for a 3-D one).
const StrategySet& pool_generated_strategies();
const StrategySet& pool_generated_strategies(const std::string& problem);

// The candidate source for `problem` (a pooling problem) built from `genome` (a valid pooling
// genome of the allowed set). Throws kiln::UsageError when either is not.
std::string generate_pool_candidate(const Genome& genome, const std::string& problem);

}  // namespace kiln::evolve
