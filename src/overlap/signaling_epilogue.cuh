// The signaling epilogue: a CUTLASS collective epilogue (the operator-style kind that CUTLASS's
// Sm90TmaWarpSpecializedAdapter plugs into its sm90 warp-specialized kernels) that stores each
// finished tile at its execution-order slot and then counts the tile on its wave group's counter.
// The GEMM main loop, the tile scheduler and the kernel are CUTLASS's own, untouched.
//
// Order of a tile's epilogue, by all consumer threads of the CTA:
//   1. slot = the scheduler's linear index of this tile (this CTA's first index plus
//      tiles-so-far x grid size, exactly as CUTLASS's static persistent scheduler advances);
//   2. convert the fp32 accumulators and store them, two adjacent columns per 32-bit store, at
//      slot_offset() (src/overlap/slot_layout.hpp);
//   3. a named barrier over the consumer threads, then one thread's gpu-scope release fence and
//      a relaxed add of 1 on the group's counter. The communication stream waits for counter >=
//      epoch x group tiles.
// Deferred signalling (plan field signal=deferred) moves step 3 of a tile to the start of the
// CTA's next epilogue (and the CTA's last tile to store_tail): by then the tile's stores have
// drained during a whole main loop, so the fence does not stall the consumer warpgroups on them.
// The price is that a group is announced one tile (one wave) later, except the last one.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cute/tensor.hpp>
#include <cutlass/arch/barrier.h>
#include <cutlass/cutlass.h>
#include <cutlass/epilogue/collective/detail.hpp>
#include <cutlass/numeric_conversion.h>
#include <cutlass/numeric_types.h>

#include "overlap/slot_layout.hpp"

namespace kiln::overlap::device {

// Named barrier id for the signal (CUTLASS adds its reserved count to user ids).
inline constexpr std::uint32_t kSignalBarrier = 0;

// Per-run arguments of the epilogue (device pointers owned by the overlap runtime).
template <class ElementD>
struct SignalingEpilogueArguments {
  ElementD* slots = nullptr;             // slot buffer, geometry.slot_buffer_elements()
  int* slot_of_tile = nullptr;           // [tiles_m * tiles_n], written every run
  unsigned* group_counters = nullptr;    // [groups]; nullptr: store only, no signal
  const int* wave_group = nullptr;       // [waves] group of each wave
  const int* group_first_slot = nullptr; // [groups]
  const int* group_slot_count = nullptr; // [groups]
  unsigned long long* slot_done_ns = nullptr;  // optional [slots]: %globaltimer when signalled
  SlotGeometry geometry{};
  int grid_ctas = 0;            // CTAs the persistent kernel launches (slots per wave)
  int raster_along_n = 1;       // the scheduler's raster order (its first linear index)
  int deferred_signal = 0;      // 1: signal each tile at the CTA's next epilogue / store_tail
};

template <class ElementD_, class TileShapeMNK>
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
  using Params = Arguments;
  struct SharedStorage {};
  using TensorStorage = SharedStorage;

  static constexpr int kTileM = cute::size<0>(TileShapeMNK{});
  static constexpr int kTileN = cute::size<1>(TileShapeMNK{});

  template <class ProblemShape>
  static constexpr Params to_underlying_arguments(ProblemShape const&, Arguments const& args,
                                                  void*) {
    return args;
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

  CUTLASS_HOST_DEVICE
  SignalingEpilogue(Params const& params, SharedStorage const& = SharedStorage())
      : params_(params) {}

  CUTLASS_DEVICE bool is_source_needed() { return false; }

  template <class ProblemShapeMNKL, class BlockShapeMNK, class BlockCoordMNKL, class FrgEngine,
            class FrgLayout, class TiledMma, class ResidueMNK>
  CUTLASS_DEVICE void operator()(ProblemShapeMNKL, BlockShapeMNK blk_shape_mnk,
                                 BlockCoordMNKL blk_coord_mnkl,
                                 cute::Tensor<FrgEngine, FrgLayout> const& accumulators,
                                 TiledMma tiled_mma, ResidueMNK, int thread_idx, char*) {
    using namespace cute;
    static_assert(size<0>(BlockShapeMNK{}) == kTileM && size<1>(BlockShapeMNK{}) == kTileN);
    const SlotGeometry& geo = params_.geometry;

    // 1. The slot: CUTLASS's StaticPersistentTileScheduler starts this CTA at this linear index
    // and advances it by the grid size after every tile.
    const int first_index = params_.raster_along_n
                                ? static_cast<int>(blockIdx.x + blockIdx.y * gridDim.x)
                                : static_cast<int>(blockIdx.x * gridDim.y + blockIdx.y);
    const int slot = first_index + tiles_done_ * params_.grid_ctas;
    ++tiles_done_;
    const int group = params_.wave_group[slot / params_.grid_ctas];
    const int group_first = params_.group_first_slot[group];
    const int group_slots = params_.group_slot_count[group];

    // 2. Store: the accumulator fragment of a GMMA holds pairs of adjacent columns.
    auto thr_mma = tiled_mma.get_thread_slice(thread_idx);
    Tensor coords = thr_mma.partition_C(make_identity_tensor(take<0, 2>(blk_shape_mnk)));
    static_assert(decltype(size(coords))::value == decltype(size(accumulators))::value);
    static_assert(decltype(size(accumulators))::value % 2 == 0);
    cutlass::NumericArrayConverter<ElementD, float, 2> convert;
    CUTLASS_PRAGMA_UNROLL
    for (int i = 0; i < size(accumulators); i += 2) {
      const int row = get<0>(coords(i));
      const int col = get<1>(coords(i));
      cutlass::Array<float, 2> pair;
      pair[0] = accumulators(i);
      pair[1] = accumulators(i + 1);
      const cutlass::Array<ElementD, 2> out = convert(pair);
      ElementD* address =
          params_.slots + slot_offset(geo, slot, group_first, group_slots, row, col);
      *reinterpret_cast<cutlass::Array<ElementD, 2>*>(address) = out;
    }

    // The reorder after communication reads where each real tile went (padding tiles that the
    // scheduler rounds up to cluster/swizzle multiples have no place in the result).
    const int tile_m_index = static_cast<int>(get<0>(blk_coord_mnkl));
    const int tile_n_index = static_cast<int>(get<1>(blk_coord_mnkl));
    if (thread_idx == 0 && tile_m_index < geo.tiles_m && tile_n_index < geo.tiles_n) {
      params_.slot_of_tile[tile_m_index * geo.tiles_n + tile_n_index] = slot;
    }

    // 3. Signal once every consumer thread's stores are visible device-wide: a barrier over the
    // consumer threads, then one thread's gpu-scope release fence (cumulative over what the
    // barrier ordered before it) and a relaxed add, as CUTLASS's own inter-CTA barrier does. A
    // fence in every thread (the first version) stalled all consumer warps on their stores and
    // cost 5-12% of the GEMM on 2xH200 (docs/results/2026-11-23-overlap/).
    if (params_.group_counters == nullptr) return;
    if (params_.deferred_signal) {
      // The previous tile's stores were issued before this tile's whole main loop.
      signal_pending(thread_idx, static_cast<int>(size(tiled_mma)));
      pending_group_ = group;
      pending_slot_ = slot;
      signal_thread_ = thread_idx;
      consumer_threads_ = static_cast<int>(size(tiled_mma));
      return;
    }
    cutlass::arch::NamedBarrier::arrive_and_wait(size(tiled_mma), kSignalBarrier);
    if (thread_idx == 0) signal(group, slot);
  }

  // Called by the kernel after the CTA's last tile (through SignalingAdapter::store_tail).
  CUTLASS_DEVICE void signal_last_tile() { signal_pending(signal_thread_, consumer_threads_); }

 private:
  CUTLASS_DEVICE void signal_pending(int thread_idx, int consumer_threads) {
    if (pending_group_ < 0) return;
    cutlass::arch::NamedBarrier::arrive_and_wait(consumer_threads, kSignalBarrier);
    if (thread_idx == 0) signal(pending_group_, pending_slot_);
    pending_group_ = -1;
  }

  CUTLASS_DEVICE void signal(int group, int slot) const {
    asm volatile("fence.acq_rel.gpu;\n\tred.relaxed.gpu.global.add.u32 [%0], 1;"
                 :
                 : "l"(params_.group_counters + group)
                 : "memory");
    if (params_.slot_done_ns != nullptr) {
      unsigned long long now;
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
      params_.slot_done_ns[slot] = now;
    }
  }

 private:
  Params params_;
  int tiles_done_ = 0;
  // Deferred signalling: the tile stored last and not yet counted (-1: none).
  int pending_group_ = -1;
  int pending_slot_ = 0;
  int signal_thread_ = 0;
  int consumer_threads_ = 0;
};

// CUTLASS's operator-epilogue adapter, plus a store_tail that counts the CTA's last tile when
// signalling is deferred (the adapter's own store_tail does nothing). The kernel calls store_tail
// on the consumer threads after their last tile, only if they stored one.
template <class Epilogue>
class SignalingAdapter
    : public cutlass::epilogue::collective::detail::Sm90TmaWarpSpecializedAdapter<Epilogue> {
  using Base = cutlass::epilogue::collective::detail::Sm90TmaWarpSpecializedAdapter<Epilogue>;

 public:
  using Base::Base;

  template <class... Pipelines>
  CUTLASS_DEVICE auto store_tail(Pipelines... pipelines) {
    Epilogue::signal_last_tile();
    return Base::store_tail(pipelines...);
  }
};

}  // namespace kiln::overlap::device
