// The signaling epilogue: a CUTLASS collective epilogue (the operator-style kind that CUTLASS's
// Sm90TmaWarpSpecializedAdapter plugs into its sm90 warp-specialized kernels) that stores each
// finished tile at its execution-order slot and then counts the tile on its wave group's counter.
// The GEMM main loop, the tile scheduler and the kernel are CUTLASS's own, untouched.
//
// Order of a tile's epilogue, by all consumer threads of the CTA:
//   1. slot = the scheduler's linear index of this tile (this CTA's first index plus
//      tiles-so-far x grid size, exactly as CUTLASS's static persistent scheduler advances);
//   2. every consumer warp owns 16 accumulator rows of the tile; it converts them to 16-bit,
//      64 columns at a time, into a 2 KiB staging buffer in shared memory (128-byte swizzle, so
//      the 4-byte writes hit 32 different banks), and one lane stores the 16x64 box with a TMA
//      store at its place in the slot buffer (slot_store_map.hpp). Two buffers per warp: the warp
//      fills one while the TMA engine reads the other, and the consumer warps go on to the next
//      tile's main loop while the last boxes drain. (The first version stored bf16 pairs from
//      registers straight to global memory: half-sector writes that the consumer warps waited
//      for, 4-20% slower than cuBLAS on 2xH200, docs/results/2026-11-23-overlap/.)
//   3. signal once the tile's stores are complete: each storing lane waits for its bulk groups
//      (cp.async.bulk.wait_group: the writes are performed) and orders them before generic-proxy
//      accesses (fence.proxy.async.global), a named barrier over the consumer threads, then one
//      thread's gpu-scope release fence and a relaxed add of 1 on the group's counter, as
//      CUTLASS's inter-CTA barrier does. The communication stream waits for counter >= epoch x
//      group tiles.
// Deferred signalling (plan field signal=deferred) moves step 3 of a tile to the start of the
// CTA's next epilogue (and the CTA's last tile to store_tail): by then the tile's TMA stores have
// drained during a whole main loop, so nobody waits for them. The price is that a group is
// announced one tile (one wave) later, except the last one.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <cutlass/arch/barrier.h>
#include <cutlass/cutlass.h>
#include <cutlass/gemm/kernel/tile_scheduler_params.h>
#include <cutlass/numeric_conversion.h>
#include <cutlass/numeric_types.h>
#include <cstdint>
#include <cute/arch/copy_sm90_tma.hpp>
#include <cute/tensor.hpp>
#include <cutlass/epilogue/collective/detail.hpp>
#include <type_traits>

#include "core/dtype.hpp"
#include "overlap/band_order.hpp"
#include "overlap/slot_layout.hpp"
#include "overlap/slot_store_map.hpp"
#ifdef KILN_MAINLOOP_TRACE
#include "overlap/sm90_mainloop_trace.cuh"
#endif

namespace kiln::overlap::device {

// Named barrier id for the signal (CUTLASS adds its reserved count to user ids).
inline constexpr std::uint32_t kSignalBarrier = 0;

// Per-run arguments of the epilogue (device pointers owned by the overlap runtime).
template <class ElementD>
struct SignalingEpilogueArguments {
  ElementD* slots = nullptr;                   // slot buffer, geometry.slot_buffer_elements()
  int* slot_of_tile = nullptr;                 // [tiles_m * tiles_n], written every run
  unsigned* group_counters = nullptr;          // [groups]; nullptr: store only, no signal
  const int* wave_group = nullptr;             // [waves] group of each wave
  const int* group_first_slot = nullptr;       // [groups]
  const int* group_slot_count = nullptr;       // [groups]
  unsigned long long* slot_done_ns = nullptr;  // optional [slots]: %globaltimer when signalled
  SlotGeometry geometry{};
  ColumnGroups column_groups{};  // geometry.contiguous_rows: the groups (tile-column ranges)
  int grid_ctas = 0;             // CTAs the persistent kernel launches (slots per wave)
  int raster_along_n = 1;        // the scheduler's raster order (its first linear index)
  int deferred_signal = 0;       // 1: signal each tile at the CTA's next epilogue / store_tail
  // Claimed tiles (sm90_claimed_tile_scheduler.cuh): the scheduler's band order, from which the
  // epilogue recovers a tile's slot from the tile's coordinates (band_order.hpp).
  BandOrder claimed_order{};
  // Tests only (issue 18's stress test): about one tile in four waits this long between its
  // completed stores and its signal, so that groups complete late and out of order. 0 in use.
  unsigned debug_signal_delay_ns = 0;
};

// What the kernel receives: the arguments and the TMA store descriptor. The kernel parameter is a
// __grid_constant__, so the epilogue keeps a pointer to the descriptor, never a copy (TMA reads
// descriptors from parameter, constant or global memory only).
template <class ElementD>
struct SignalingEpilogueParams {
  SignalingEpilogueArguments<ElementD> args;
  CUtensorMap store_map;
};

// kPingpong: the epilogue of CUTLASS's ping-pong kernel, where each consumer warp group (4 warps)
// stores whole tiles of its own, the two groups taking alternate tiles of the scheduler's sequence
// and running their epilogues one after the other (the kernel orders them and calls store_tail
// after every tile). Otherwise the cooperative kernel's: 8 consumer warps share every tile, their
// two warp groups stacked along M (kGroupsN = 1) or side by side along N (kGroupsN = 2, each
// holding half the tile's columns). A warp group's columns that are not a multiple of 64 are
// stored in 32-column boxes with a 64-byte swizzle, or 16-column ones with a 32-byte swizzle.
// kSwapAB: the ping-pong kernel run on Cᵀ (kernel=pingpong-swap). TileShapeMNK is still C's tile;
// the accumulators hold its transpose, which store_transposed writes back as rows of C.
// kClaimedTiles: the kernel's tiles are claimed at run time (ClaimedTileScheduler), so a tile's
// slot is not this CTA's next static index: it is recovered from the tile's coordinates.
template <class ElementD_, class TileShapeMNK, bool kPingpong = false, int kGroupsN = 1,
          bool kSwapAB = false, bool kClaimedTiles = false>
class SignalingEpilogue {
 public:
  using ElementD = ElementD_;
  using ElementC = ElementD_;  // no source operand; the kernel still names the type
  using StrideC = cute::Stride<int64_t, cute::Int<1>, int64_t>;
  using StrideD = StrideC;
  using ElementAccumulator = float;
  // GemmUniversalAdapter names the thread-level op of an epilogue; this one applies none.
  struct ThreadEpilogueOp {
    using ElementOutput = ElementD_;
    using ElementAccumulator = float;
    using ElementCompute = float;
  };
  using GmemTiledCopyC = void;
  using GmemTiledCopyD = void;
  using Arguments = SignalingEpilogueArguments<ElementD>;
  using Params = SignalingEpilogueParams<ElementD>;

  static constexpr int kTileM = cute::size<0>(TileShapeMNK{});
  static constexpr int kTileN = cute::size<1>(TileShapeMNK{});
  static_assert(sizeof(ElementD) == 2, "the store box holds a 16-bit type");
  // Consumer warps storing one tile; each owns 16 rows of every 64-row GMMA atom its warp group
  // computes, across the warp group's columns.
  static constexpr int kWarps = kPingpong ? 4 : 8;
  static constexpr int kGroupsM = kWarps / 4 / kGroupsN;  // warp groups stacked along M
  static_assert(kSwapAB || (kGroupsM >= 1 && kTileM % (kGroupsM * 64) == 0),
                "whole 64-row GMMA atoms");
  // Swapped: the GMMA atoms run along C's columns (whole 64-column atoms), the instruction's
  // width along C's rows (16-row bands: one stmatrix box per band and warp).
  static_assert(!kSwapAB || (kPingpong && kGroupsN == 1 && kTileN % 64 == 0 && kTileM % 16 == 0),
                "ping-pong-swap: C's columns in whole 64-column atoms, its rows in 16-row bands");
  static constexpr int kGroupCols = kTileN / kGroupsN;  // columns one warp group holds
  // Swapped: 16x16 boxes, a warp's 16 columns of an atom by a 16-row band. A warp group width
  // that 64 does not divide (144, 160, 176) is stored as one box of the whole width per 16-row
  // band: one wait, fence and TMA store per band where 32- and 16-column boxes took 5-11
  // (1.7-2.2% faster on ping-pong 128x144 at K = 1024 and 128x160 at 16384²x2048, one H200;
  // docs/results/2026-12-02b-epilogue/), a 3-D box of swizzled 32- or 16-column pieces
  // (store_piece_cols), so that staging it is free of bank conflicts.
  static constexpr int kBoxCols = epilogue_box_cols(kGroupCols, kSwapAB);
  // The staging layout follows the descriptor's swizzle (store_staging_byte).
  static constexpr int kSwizzleBytes = store_box_swizzle_bytes(kBoxCols);
  static constexpr int kPieceCols = store_piece_cols(kBoxCols);
  static constexpr int kPieces = kBoxCols / kPieceCols;  // > 1: a 3-D TMA store
  static_assert(kBoxCols > 0 && kBoxCols % 16 == 0 && kGroupCols % kBoxCols == 0,
                "whole 16-column store boxes");
  static constexpr int kChunks = kGroupCols / kBoxCols;  // boxes per warp and 16-row band
  static constexpr int kBoxBytes = kStoreBoxRows * kBoxCols * 2;
  static constexpr int kRowBytes = kBoxCols * 2;  // one staged row: 128, 64, 32 or the band's
  static_assert(kSwizzleBytes == 2 * kPieceCols && kPieceCols > 0, "a swizzled piece per box");
  // Every buffer starts on a whole swizzle pattern (8 rows of a piece), as TMA's swizzle needs.
  static_assert(kBoxBytes % (8 * kSwizzleBytes) == 0, "buffers aligned to the swizzle's repeat");
  // Staging buffers per warp, each a box in flight: four of the quarter-size 32-byte-row boxes
  // (2 KiB, half what two full boxes hold), so that the warp waits for the TMA engine less often;
  // one whole-band box (4.5-5.5 KiB), since a second would cost the main loop a stage.
  static constexpr int kBuffersPerWarp = kPieces > 1 ? 1 : kRowBytes == 32 ? 4 : 2;

  // The staging buffers; 1024-byte alignment makes the TMA's 128-byte swizzle a function of the
  // row within the box (checked on the device).
  struct SharedStorage {
    alignas(1024) std::uint8_t staging[kWarps * kBuffersPerWarp * kBoxBytes];
  };
  using TensorStorage = SharedStorage;

  template <class ProblemShape>
  static Params to_underlying_arguments(ProblemShape const&, Arguments const& args, void*) {
    Params params{};
    params.args = args;
    // geometry() asks for the launch shape without a buffer: no descriptor then.
    if (args.slots != nullptr) {
      params.store_map = make_slot_store_map(
          args.slots,
          std::is_same_v<ElementD, cutlass::half_t> ? core::DType::kFp16 : core::DType::kBf16,
          args.geometry, kBoxCols);
    }
    return params;
  }
  template <class ProblemShape>
  static size_t get_workspace_size(ProblemShape const&, Arguments const&) {
    return 0;
  }
  template <class ProblemShape>
  static cutlass::Status initialize_workspace(ProblemShape const&, Arguments const&, void*,
                                              cudaStream_t, cutlass::CudaHostAdapter* = nullptr) {
    return cutlass::Status::kSuccess;
  }
  template <class ProblemShape>
  static bool can_implement(ProblemShape const&, Arguments const& args) {
    return args.slots != nullptr && args.slot_of_tile != nullptr && args.wave_group != nullptr &&
           args.geometry.tile_m == kTileM && args.geometry.tile_n == kTileN && args.grid_ctas > 0;
  }

  // `params` is the kernel's __grid_constant__ parameter (the adapter passes it through).
  CUTLASS_HOST_DEVICE
  explicit SignalingEpilogue(Params const& params)
      : args_(params.args), store_map_(&params.store_map) {}

  CUTLASS_DEVICE bool is_source_needed() { return false; }

  template <class ProblemShapeMNKL, class BlockShapeMNK, class BlockCoordMNKL, class FrgEngine,
            class FrgLayout, class TiledMma, class ResidueMNK>
  CUTLASS_DEVICE void operator()(ProblemShapeMNKL, BlockShapeMNK blk_shape_mnk,
                                 BlockCoordMNKL blk_coord_mnkl,
                                 cute::Tensor<FrgEngine, FrgLayout> const& accumulators,
                                 TiledMma tiled_mma, ResidueMNK, int thread_idx, char* smem) {
    using namespace cute;
    // The kernel's tile: Cᵀ's for a swapped kernel.
    static_assert(size<0>(BlockShapeMNK{}) == (kSwapAB ? kTileN : kTileM) &&
                  size<1>(BlockShapeMNK{}) == (kSwapAB ? kTileM : kTileN));
    static_assert(decltype(size(tiled_mma))::value == kWarps * 32,
                  "the consumer warps that store a tile (8 cooperative, 4 ping-pong)");
    // The fragment: per 64xN GMMA atom (MMA_M of them along the tile's rows), values (2 columns,
    // 2 row halves, N/8 column groups), i.e. linear index 4*column_group + 2*row_half +
    // column_pair; the atom spans the warp group's columns (MMA_N = 1).
    // (Swapped: the same with C's columns as the atoms' rows and C's rows as their columns.)
    constexpr int kAtomsM = decltype(size<1>(accumulators))::value;
    static_assert(kAtomsM * kGroupsM * 64 == (kSwapAB ? kTileN : kTileM) &&
                  decltype(size<2>(accumulators))::value == 1 &&
                  decltype(size<0>(accumulators))::value == (kSwapAB ? kTileM : kGroupCols) / 2);
    trace_mark(tiles_done_, 8);
    const SlotGeometry& geo = args_.geometry;
    thread_idx_ = thread_idx;
    consumer_threads_ = static_cast<int>(size(tiled_mma));
    const int lane = thread_idx % 32;
    const int warp = thread_idx / 32;
    const std::uint32_t staging =
        cute::cast_smem_ptr_to_uint(smem) + warp * kBuffersPerWarp * kBoxBytes;
    // The staging buffers' alignment is checked once, in SignalingAdapter's constructor: a trap
    // inside the tile loop made ptxas spill a 256x192 tile's accumulators, and in ping-pong
    // kernels (whose store_tail runs every tile) it moved the k-loop's GMMA descriptors out of
    // uniform registers (see finish_stores).
    if (tiles_done_ == 0 && thread_idx == 0) cute::prefetch_tma_descriptor(store_map_);

    // Deferred signalling: the previous tile's stores were issued before this tile's main loop.
    if (args_.deferred_signal) signal_pending();

    const int tile_m_index = static_cast<int>(get < kSwapAB ? 1 : 0 > (blk_coord_mnkl));
    const int tile_n_index = static_cast<int>(get < kSwapAB ? 0 : 1 > (blk_coord_mnkl));
    if (geo.contiguous_rows) {
      ++tiles_done_;
      store_contiguous(accumulators, tiled_mma, blk_shape_mnk, tile_m_index, tile_n_index,
                       thread_idx, staging, lane);
      return;
    }

    // 1. The slot: CUTLASS's StaticPersistentTileScheduler starts this CTA at this linear index
    // and advances it by the grid size after every tile. Ping-pong: the second consumer warp group
    // (warp group 2) starts one step later and each group advances two steps per tile.
    // Claimed tiles: the band order's slot, inverted from the tile's coordinates.
    int slot;
    int stride = 0;
    if constexpr (kClaimedTiles) {
      slot = band_slot(args_.claimed_order, static_cast<int>(get<0>(blk_coord_mnkl)),
                       static_cast<int>(get<1>(blk_coord_mnkl)));
      // The next tile is not known yet: the group is loaded now (its latency is the price).
      prefetch_group(slot);
    } else {
      const int first_index = args_.raster_along_n
                                  ? static_cast<int>(blockIdx.x + blockIdx.y * gridDim.x)
                                  : static_cast<int>(blockIdx.x * gridDim.y + blockIdx.y);
      stride = kPingpong ? 2 * args_.grid_ctas : args_.grid_ctas;
      slot = first_index + (kPingpong ? warp_group() * args_.grid_ctas : 0) + tiles_done_ * stride;
      // The slot's wave group and its slot range: loaded here for the CTA's first tile, otherwise
      // by the previous epilogue (prefetch_group), so that their two dependent global loads
      // complete during this tile's main loop instead of delaying its stores (~1 us of 18 per
      // 128x256 tile at K = 2048).
      if (tiles_done_ == 0) prefetch_group(slot);
    }
    ++tiles_done_;
    const int group = next_group_;
    const int group_first = next_group_first_;
    const int group_slots = next_group_slots_;

    // 2. Stage and store, 16 rows x 64 columns per box, a band of 16 rows per GMMA atom.
    if (!trace_skips_stores()) {
      store_tile(accumulators, tiled_mma, blk_shape_mnk, thread_idx, staging, lane,
                 [&](int band_row) {
                   return slot_matrix_row<(kTileM & (kTileM - 1)) == 0>(geo, slot, group_first,
                                                                        group_slots, band_row);
                 });
    }
    trace_mark(tiles_done_ - 1, 9);

    // The reorder after communication reads where each real tile went (padding tiles that the
    // scheduler rounds up to cluster/swizzle multiples have no place in the result).
    if (thread_idx == 0 && tile_m_index < geo.tiles_m && tile_n_index < geo.tiles_n) {
      args_.slot_of_tile[tile_m_index * geo.tiles_n + tile_n_index] = slot;
    }

    // The next tile's group, read while its main loop runs.
    if constexpr (!kClaimedTiles) prefetch_group(slot + stride);

    // 3. Signal.
    if (args_.group_counters == nullptr) {
      trace_mark(tiles_done_ - 1, 10);
      return;
    }
    pending_group_ = group;
    pending_slot_ = slot;
    if (!args_.deferred_signal) signal_pending();
    trace_mark(tiles_done_ - 1, 10);
  }

  // Contiguous row blocks (slot_layout.hpp): the tile's slot and group follow from its coordinates
  // and the column groups in the parameters; padding tiles are neither stored nor counted (each
  // group's count is its real tiles). The host fills slot_of_tile once (it never changes).
  template <class Accumulators, class TiledMma, class BlockShapeMNK>
  CUTLASS_DEVICE void store_contiguous(Accumulators const& accumulators, TiledMma tiled_mma,
                                       BlockShapeMNK blk_shape_mnk, int tm, int tn, int thread_idx,
                                       std::uint32_t staging, int lane) {
    using namespace cute;
    const SlotGeometry& geo = args_.geometry;
    if (tm >= geo.tiles_m || tn >= geo.tiles_n) return;
    const ColumnGroups& columns = args_.column_groups;
    const int group = columns.group_of(tn);
    const int c0 = columns.first_column(group);
    const int cols = columns.end[group] - c0;
    const int slot = contiguous_slot(geo, tm, tn, c0, cols);
    // A whole tile per slot: its rows are consecutive rows of the slot-buffer matrix.
    store_tile(accumulators, tiled_mma, blk_shape_mnk, thread_idx, staging, lane,
               [&](int band_row) { return slot * kTileM + band_row; });
    if (args_.group_counters == nullptr) return;
    pending_group_ = group;
    pending_slot_ = slot;
    if (!args_.deferred_signal) signal_pending();
  }

  // Called on the consumer threads after the CTA's last tile (SignalingAdapter::store_tail; the
  // ping-pong kernel calls it after every tile): counts a deferred tile, and keeps the warps until
  // the TMA engine has read their staging buffers (which ping-pong's other warp group reuses).
  //
  // Written as two ifs, with no trap: the ping-pong kernel runs this inside its tile loop, and an
  // if/else around the signal's named barrier (or a trap here) made ptxas build the k-loop's GMMA
  // descriptors in vector registers and move each with R2UR before every wgmma (132 R2UR against
  // 67; CUTLASS's own epilogue on the same main loop has 20). The wait after a signal is a no-op:
  // signal_pending has waited for every bulk group already.
  // (scripts/probe_gemm_registers.sh counts the R2UR moves next to each HGMMA.)
  CUTLASS_DEVICE void finish_stores() {
    if (pending_group_ >= 0) signal_pending();
    if (thread_idx_ % 32 == 0) cute::tma_store_wait<0>();
  }

 private:
  // Loads the wave group of `slot` and the group's slot range (nothing past the last slot).
  CUTLASS_DEVICE void prefetch_group(int slot) {
    if (slot >= args_.geometry.slots) return;
    next_group_ = args_.wave_group[slot / args_.grid_ctas];
    next_group_first_ = args_.group_first_slot[next_group_];
    next_group_slots_ = args_.group_slot_count[next_group_];
  }

  // The diagnostic build's clock marks (sm90_mainloop_trace.cuh); nothing in the default build.
  CUTLASS_DEVICE static void trace_mark([[maybe_unused]] int tile, [[maybe_unused]] int field) {
#ifdef KILN_MAINLOOP_TRACE
    trace_epilogue_mark(tile, field);
#endif
  }

  CUTLASS_DEVICE static bool trace_skips_stores() {
#ifdef KILN_MAINLOOP_TRACE
    return trace_probe_skips_stores();
#else
    return false;
#endif
  }

  // Ping-pong: which consumer warp group runs this epilogue (0 or 1; warp group 0 is the producer).
  // Broadcast from lane 0, as CUTLASS's canonical_warp_group_idx does, so that ptxas knows the
  // value is warp-uniform (computed from threadIdx.x alone, it kept the GMMA descriptors out of
  // uniform registers together with finish_stores' old form).
  CUTLASS_DEVICE static int warp_group() {
    return __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x) / 128, 0) - 1;
  }

  // One warp's 16-row band of GMMA atom `atom` (its warp group's columns from `band_col`):
  // converted to 16-bit, staged and stored by TMA, kBoxCols columns per box, at `matrix_row` of
  // the slot-buffer matrix.
  template <class Accumulators, class Convert>
  CUTLASS_DEVICE void store_band(Accumulators const& accumulators, int atom, int band_col,
                                 int matrix_row, std::uint32_t staging, int lane,
                                 Convert& convert) {
    using namespace cute;
    // The values are the same on every lane of the warp, but ptxas cannot tell (they come from
    // the thread index): broadcast from lane 0 so that the TMA store takes them from uniform
    // registers, instead of a loop that ptxas wraps around every store, one trip per distinct value
    // (44 such loops in a 128x176 ping-pong tile's epilogue; probe_gemm_registers.sh).
    band_col = __shfl_sync(0xffffffffu, band_col, 0);
    matrix_row = __shfl_sync(0xffffffffu, matrix_row, 0);
    staging = __shfl_sync(0xffffffffu, staging, 0);
    CUTLASS_PRAGMA_UNROLL
    for (int chunk = 0; chunk < kChunks; ++chunk) {
      const std::uint32_t buffer = staging + buffer_index_ * kBoxBytes;
      buffer_index_ = buffer_index_ + 1 == kBuffersPerWarp ? 0 : buffer_index_ + 1;
      // The box stored from this buffer kBuffersPerWarp boxes ago must have been read.
      if (lane == 0) cute::tma_store_wait<kBuffersPerWarp - 1>();
      __syncwarp();
      // One stmatrix.x4 per 16x16 block of the box: its four 8x8 matrices are (row half h,
      // column group g) for j = 2 g + h, and each lane's register j is exactly the GMMA
      // accumulator pair it holds there (row lane / 4 + 8 h, columns 2 (lane % 4) + 8 g), so no
      // shuffles; lane l gives the address of row l % 8 of matrix l / 8. (A quarter of the shared
      // stores of one st.shared.b32 per pair; the same speed on one H200, 2026-12-02b, and fewer
      // instructions.) EveryConfigurationMatchesCublas checks the layout on every configuration.
      CUTLASS_PRAGMA_UNROLL
      for (int group16 = 0; group16 < kBoxCols / 16; ++group16) {
        std::uint32_t fragment[4];
        CUTLASS_PRAGMA_UNROLL
        for (int j = 0; j < 4; ++j) {
          const int i = 4 * (chunk * (kBoxCols / 8) + 2 * group16 + j / 2) + 2 * (j % 2);
          cutlass::Array<float, 2> pair;
          pair[0] = accumulators(i, atom, 0);
          pair[1] = accumulators(i + 1, atom, 0);
          const cutlass::Array<ElementD, 2> out = convert(pair);
          fragment[j] = reinterpret_cast<const std::uint32_t&>(out);
        }
        const int row = lane % 8 + 8 * ((lane / 8) % 2);  // 0..15
        const int col = 16 * group16 + 8 * (lane / 16);   // the 8-column row's first column
        const std::uint32_t byte = store_staging_byte(row, col, kBoxCols);
        asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};"
                     :
                     : "r"(buffer + byte), "r"(fragment[0]), "r"(fragment[1]), "r"(fragment[2]),
                       "r"(fragment[3])
                     : "memory");
      }
      cute::tma_store_fence();  // the generic-proxy writes, before the TMA engine reads them
      __syncwarp();
      if (lane == 0) {
        if constexpr (kPieces > 1) {
          // The 3-D view (piece column, piece, row): the band's first piece.
          asm volatile(
              "cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];"
              :
              : "l"(store_map_), "r"(buffer), "r"(0),
                "r"((band_col + chunk * kBoxCols) / kPieceCols), "r"(matrix_row)
              : "memory");
        } else {
          asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];"
                       :
                       : "l"(store_map_), "r"(buffer), "r"(band_col + chunk * kBoxCols),
                         "r"(matrix_row)
                       : "memory");
        }
        cute::tma_store_arrive();
      }
    }
  }

  // Stages and stores the tile, each 16-row band of it at row_of(band's first row) of the
  // slot-buffer matrix: by store_band, 16 rows x kBoxCols columns per box and a band per GMMA atom
  // and warp, or for a swapped kernel by store_transposed.
  template <class Accumulators, class TiledMma, class BlockShapeMNK, class RowOf>
  CUTLASS_DEVICE void store_tile(Accumulators const& accumulators, TiledMma tiled_mma,
                                 BlockShapeMNK blk_shape_mnk, int thread_idx, std::uint32_t staging,
                                 int lane, RowOf const& row_of) {
    using namespace cute;
    if constexpr (kSwapAB) {
      store_transposed(accumulators, row_of, staging, lane, thread_idx / 32);
    } else {
      constexpr int kAtomsM = decltype(size<1>(accumulators))::value;
      auto thr_mma = tiled_mma.get_thread_slice(thread_idx);
      Tensor coords = thr_mma.partition_C(make_identity_tensor(take<0, 2>(blk_shape_mnk)));
      cutlass::NumericArrayConverter<ElementD, float, 2> convert;
      CUTLASS_PRAGMA_UNROLL
      for (int atom = 0; atom < kAtomsM; ++atom) {
        const int band_row = get<0>(coords(0, atom, 0)) & ~(kStoreBoxRows - 1);
        const int band_col = get<1>(coords(0, atom, 0)) / kGroupCols * kGroupCols;
        store_band(accumulators, atom, band_col, row_of(band_row), staging, lane, convert);
      }
    }
  }

  // Ping-pong-swap: the accumulators are Cᵀ's. GMMA atom `atom` holds C's columns
  // [64 atom, 64 atom + 64); in it warp w (of the warp group) holds columns [16w, 16w + 16) over
  // all kTileM rows of C, each thread value (4 g + 2 h + p) at C's row 8g + 2 (lane % 4) + p and
  // column 16w + lane / 4 + 8h. A 16-row band of C (g = 2 band, 2 band + 1) by the warp's 16
  // columns is four 8x8 fragments whose transposes are the box's quarters: one
  // stmatrix.m8n8.x4.trans writes the whole 16x16 box (32-byte rows, 32-byte swizzle), and one
  // TMA store sends it to `row_of(16 band)` of the slot-buffer matrix, as store_band does.
  template <class Accumulators, class RowOf>
  CUTLASS_DEVICE void store_transposed(Accumulators const& accumulators, RowOf const& row_of,
                                       std::uint32_t staging, int lane, int warp) {
    static_assert(kBoxCols == 16 && kRowBytes == 32);
    cutlass::NumericArrayConverter<ElementD, float, 2> convert;
    // This lane's row address: fragment j = lane / 8 is the box's rows 8 (j / 2) .. + 7 and
    // columns 8 (j % 2) .. + 7; the lane gives its row lane % 8 (32-byte swizzle).
    const int box_row = 8 * (lane / 16) + lane % 8;
    const std::uint32_t lane_byte = store_staging_byte(box_row, 8 * ((lane / 8) % 2), kBoxCols);
    // Warp-uniform values broadcast from lane 0 (see store_band).
    staging = __shfl_sync(0xffffffffu, staging, 0);
    const int warp_col = __shfl_sync(0xffffffffu, (warp % 4) * 16, 0);
    CUTLASS_PRAGMA_UNROLL
    for (int atom = 0; atom < kTileN / 64; ++atom) {
      CUTLASS_PRAGMA_UNROLL
      for (int band = 0; band < kTileM / 16; ++band) {
        const int matrix_row = __shfl_sync(0xffffffffu, row_of(16 * band), 0);
        const std::uint32_t buffer = staging + buffer_index_ * kBoxBytes;
        buffer_index_ = buffer_index_ + 1 == kBuffersPerWarp ? 0 : buffer_index_ + 1;
        // The box stored from this buffer kBuffersPerWarp boxes ago must have been read.
        if (lane == 0) cute::tma_store_wait<kBuffersPerWarp - 1>();
        __syncwarp();
        std::uint32_t fragment[4];
        CUTLASS_PRAGMA_UNROLL
        for (int j = 0; j < 4; ++j) {
          const int i = 4 * (2 * band + j / 2) + 2 * (j % 2);
          cutlass::Array<float, 2> pair;
          pair[0] = accumulators(i, atom, 0);
          pair[1] = accumulators(i + 1, atom, 0);
          const cutlass::Array<ElementD, 2> out = convert(pair);
          fragment[j] = reinterpret_cast<const std::uint32_t&>(out);
        }
        asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};"
                     :
                     : "r"(buffer + lane_byte), "r"(fragment[0]), "r"(fragment[1]),
                       "r"(fragment[2]), "r"(fragment[3])
                     : "memory");
        cute::tma_store_fence();  // the generic-proxy writes, before the TMA engine reads them
        __syncwarp();
        if (lane == 0) {
          asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];"
                       :
                       : "l"(store_map_), "r"(buffer), "r"(64 * atom + warp_col), "r"(matrix_row)
                       : "memory");
          cute::tma_store_arrive();
        }
      }
    }
  }

  // Counts the pending tile once every warp's stores of it are complete.
  CUTLASS_DEVICE void signal_pending() {
    if (pending_group_ < 0) return;
    if (thread_idx_ % 32 == 0) {
      asm volatile("cp.async.bulk.wait_group 0;\n\tfence.proxy.async.global;" ::: "memory");
    }
    // Tests only: every consumer thread waits (a branch on one thread made ptxas spill a
    // 256x192 tile's registers; the warp group waits for its slowest thread anyway).
    if (args_.debug_signal_delay_ns != 0) delay_signal(pending_slot_);
    // Ping-pong: each warp group has its own barrier (the kernel orders their epilogues, but two
    // ids keep that ordering out of this barrier's correctness).
    cutlass::arch::NamedBarrier::arrive_and_wait(
        consumer_threads_,
        kSignalBarrier + (kPingpong ? static_cast<std::uint32_t>(warp_group()) : 0));
    if (thread_idx_ == 0) signal(pending_group_, pending_slot_);
    pending_group_ = -1;
  }

  CUTLASS_DEVICE void signal(int group, int slot) const {
    asm volatile("fence.acq_rel.gpu;\n\tred.relaxed.gpu.global.add.u32 [%0], 1;"
                 :
                 : "l"(args_.group_counters + group)
                 : "memory");
    if (args_.slot_done_ns != nullptr) {
      unsigned long long now;
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
      args_.slot_done_ns[slot] = now;
    }
  }

  // The tests' injected delay: tiles picked by a multiplicative hash of the slot (so the late
  // tiles differ between groups and waves), timed on %globaltimer.
  CUTLASS_DEVICE void delay_signal(int slot) const {
    if ((static_cast<unsigned>(slot) * 2654435761u) >> 30 != 0) return;
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
      __nanosleep(1000);
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < args_.debug_signal_delay_ns);
  }

  // The kernel's parameters, read where they are (param space) instead of copied into registers
  // that live across the main loop.
  Arguments const& args_;
  const CUtensorMap* store_map_;
  int tiles_done_ = 0;
  int buffer_index_ = 0;  // the staging buffer the warp fills next
  int thread_idx_ = 0;
  int consumer_threads_ = 0;
  // The wave group of the CTA's next tile and its slot range (prefetch_group).
  int next_group_ = 0;
  int next_group_first_ = 0;
  int next_group_slots_ = 0;
  // The tile stored last and not yet counted (-1: none).
  int pending_group_ = -1;
  int pending_slot_ = 0;
};

// CUTLASS's operator-epilogue adapter, plus a store_tail that counts the CTA's last tile when
// signalling is deferred and waits for the last TMA stores (the adapter's own does nothing). The
// kernel calls store_tail on the consumer threads after their last tile, only if they stored one.
template <class Epilogue>
class SignalingAdapter
    : public cutlass::epilogue::collective::detail::Sm90TmaWarpSpecializedAdapter<Epilogue> {
  using Base = cutlass::epilogue::collective::detail::Sm90TmaWarpSpecializedAdapter<Epilogue>;

 public:
  // The TMA's 128-byte swizzle needs 1024-byte aligned staging (a misaligned buffer would store
  // scrambled tiles): fail the kernel rather than leave them. Checked here, once, outside the
  // tile loop (see SignalingEpilogue::finish_stores for why not per tile).
  CUTLASS_DEVICE SignalingAdapter(typename Epilogue::Params const& params,
                                  typename Base::TensorStorage& shared_tensors)
      : Base(params, shared_tensors) {
    if ((cute::cast_smem_ptr_to_uint(&shared_tensors) & 1023u) != 0) __trap();
  }

  template <class... Pipelines>
  CUTLASS_DEVICE auto store_tail(Pipelines... pipelines) {
    Epilogue::finish_stores();
    return Base::store_tail(pipelines...);
  }
};

}  // namespace kiln::overlap::device
