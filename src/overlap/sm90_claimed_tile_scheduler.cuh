// A dynamic persistent tile scheduler for CUTLASS's sm90 ping-pong kernel: after its first tile
// (the static scheduler's), a cluster claims its next tile from a global counter, so that tiles
// are started in the order they are numbered, whichever cluster runs them (issue 17).
//
// Why: with CUTLASS's static scheduler cluster c runs tiles c, c + C, c + 2C, ... and the clusters
// drift apart over a GEMM; tiles that share an operand panel (neighbours in the tile order) are
// then read at different moments. cuBLAS's Hopper kernels (nvjet) claim tiles with a global
// atomic (846 atomics for 1,824 tiles on 66 clusters, 2026-12-02c's SASS) and Hopper's L2 request
// coalescer merges 4-5x more of their read requests than kiln's (12-16 M sectors against ~3 M at
// 4096x8192x2048, docs/results/2026-12-02d-handoff/), which is where kiln's main loop loses its
// last 2-3%. The idea is CUTLASS's sm100 CLC scheduler (a hardware query answered into every
// CTA's shared memory), emulated with an atomic and distributed shared memory.
//
// Tile numbering: work items are cluster tiles in kiln's band order (band_order.hpp): CUTLASS's
// static order for the same raster and swizzle, except that the last band of the swizzle is
// narrower instead of padded, and odd bands may walk backwards (scheduler=serpentine). A CTA's slot
// is the linear index the static scheduler would give it for the same item, so with swizzle 1 the
// tiles and slots are the static order's; only which cluster runs a tile, and when, differs.
//
// Protocol (the pieces CUTLASS's ping-pong kernel already drives for a dynamic scheduler):
//  - the kernel's scheduler warp in the cluster's first CTA (the leader), throttled by its
//    producer warp (one claim per tile whose loads have started), takes w = C + atomicAdd(counter)
//    and writes the 16-byte answer into every CTA's shared memory with st.async, completing the
//    bytes on that CTA's "full" barrier;
//  - every reader (scheduler warp, producer warp, the consumer warp group of the tile, in every
//    CTA) waits on its own CTA's full barrier and arrives on the leader's "empty" barrier;
//  - the last claim of a launch (the C-th out-of-range one) resets the counter to 0, so that no
//    per-launch memset is needed. A launch that faults leaves the context unusable anyway.
// One counter per GEMM object: launches that share it must be stream-ordered (they are: an
// object's launches go to one stream at a time in kiln).
#pragma once

#include <cutlass/arch/barrier.h>
#include <cutlass/cutlass.h>
#include <cutlass/gemm/kernel/sm90_tile_scheduler.hpp>
#include <cutlass/gemm/kernel/tile_scheduler.hpp>
#include <cutlass/pipeline/sm90_pipeline.hpp>

#include <cstdint>

#include "overlap/band_order.hpp"

namespace kiln::overlap::device {

// The scheduler tag GemmUniversal takes (specialised below in CUTLASS's selector).
struct ClaimedTileSchedulerTag {};

// The answers' pipeline: one producer (the leader CTA's scheduler warp) writing into every CTA of
// the cluster, consumers in every CTA releasing to the leader. The kernel's Params are those of
// CUTLASS's CLC pipeline; consumer_arv_count is per CTA and multiplied here by the cluster size.
template <int kStages>
class ClusterAnswerPipeline {
 public:
  static constexpr int Stages = kStages;
  using PipelineState = cutlass::PipelineState<kStages>;
  struct SharedStorage {
    cutlass::arch::ClusterTransactionBarrier full[kStages];
    cutlass::arch::ClusterBarrier empty[kStages];
  };
  enum class ThreadCategory { NonParticipant, Producer, Consumer, ProducerConsumer };
  struct Params {
    std::uint32_t transaction_bytes = 0;
    ThreadCategory role = ThreadCategory::NonParticipant;
    std::uint32_t is_leader = 0;
    std::uint32_t num_consumers = 0;
    std::uint32_t producer_blockid = 0;
    std::uint32_t producer_arv_count = 0;
    std::uint32_t consumer_arv_count = 0;
    int initializing_warp = 0;
  };

  CUTLASS_DEVICE ClusterAnswerPipeline(SharedStorage& storage, Params const& params)
      : storage_(&storage), bytes_(params.transaction_bytes) {
    const dim3 cluster = cute::cluster_shape();
    cluster_size_ = cluster.x * cluster.y * cluster.z;
    leader_ = cute::block_rank_in_cluster() == 0;
    if (cutlass::canonical_warp_idx_sync() == params.initializing_warp && cute::elect_one_sync()) {
      for (int s = 0; s < kStages; ++s) {
        storage.full[s].init(1);  // the leader's arrive (with the answer's bytes)
        storage.empty[s].init(params.consumer_arv_count * cluster_size_);
      }
    }
    cutlass::arch::fence_barrier_init();
  }

  // The leader waits until every reader of the stage's last answer, in every CTA, has released
  // it, then announces the next answer's bytes on each CTA's full barrier. Other CTAs: nothing.
  CUTLASS_DEVICE void producer_acquire(PipelineState state) {
    if (!leader_) return;
    storage_->empty[state.index()].wait(state.phase());
    const std::uint32_t lane = cutlass::canonical_lane_idx();
    storage_->full[state.index()].arrive_and_expect_tx(bytes_, lane, lane < cluster_size_);
  }
  // The answer's st.async completes the bytes; nothing to commit.
  CUTLASS_DEVICE void producer_commit(PipelineState) {}
  // The leader stays until every answer it wrote has been released (remote CTAs arrive on its
  // barriers); the others own no barrier anyone arrives on.
  CUTLASS_DEVICE void producer_tail(PipelineState state) {
    if (!leader_) return;
    for (int i = 0; i < kStages; ++i) {
      storage_->empty[state.index()].wait(state.phase());
      ++state;
    }
  }
  CUTLASS_DEVICE void consumer_wait(PipelineState state) {
    storage_->full[state.index()].wait(state.phase());
  }
  CUTLASS_DEVICE void consumer_release(PipelineState state) {
    storage_->empty[state.index()].arrive(0u);
  }
  // The stage's full barrier in this CTA's shared memory (st.async maps it to the target CTA).
  CUTLASS_DEVICE std::uint32_t full_barrier(PipelineState state) const {
    return cute::cast_smem_ptr_to_uint(&storage_->full[state.index()]);
  }
  CUTLASS_DEVICE bool leader() const { return leader_; }
  CUTLASS_DEVICE std::uint32_t cluster_size() const { return cluster_size_; }

 private:
  SharedStorage* storage_;
  std::uint32_t bytes_;
  std::uint32_t cluster_size_ = 1;
  bool leader_ = true;
};

// The throttle between the producer warp (a token per tile whose loads start) and the scheduler
// warp (a claim per token): CUTLASS's PipelineAsync, in the leader CTA only and kept local (the
// kernel names CTA 0 as its consumers' destination, which would send every CTA's releases there).
template <int kStages>
class LeaderThrottlePipeline : public cutlass::PipelineAsync<kStages> {
  using Base = cutlass::PipelineAsync<kStages>;

 public:
  using typename Base::Params;
  using typename Base::PipelineState;
  using typename Base::SharedStorage;

  CUTLASS_DEVICE LeaderThrottlePipeline(SharedStorage& storage, Params params)
      : Base(storage, local(params)), leader_(cute::block_rank_in_cluster() == 0) {}

  CUTLASS_DEVICE void producer_acquire(PipelineState state) {
    if (leader_) Base::producer_acquire(state);
  }
  CUTLASS_DEVICE void producer_commit(PipelineState state) {
    if (leader_) Base::producer_commit(state);
  }
  CUTLASS_DEVICE void consumer_wait(PipelineState state) {
    if (leader_) Base::consumer_wait(state);
  }
  CUTLASS_DEVICE void consumer_release(PipelineState state) {
    if (leader_) Base::consumer_release(state);
  }

 private:
  CUTLASS_DEVICE static Params local(Params params) {
    params.dst_blockid = cute::block_rank_in_cluster();
    return params;
  }
  bool leader_;
};

// The scheduler: CUTLASS's static sm90 scheduler for the grid and parameters (built with swizzle
// 1, so without swizzle padding), kiln's band order for the tiles, plus the claim.
template <class ClusterShape, int kStages = 4>
class ClaimedTileScheduler : public cutlass::gemm::kernel::detail::PersistentTileSchedulerSm90 {
  using Static = cutlass::gemm::kernel::detail::PersistentTileSchedulerSm90;

 public:
  static constexpr bool IsDynamicPersistent = true;
  static constexpr int kClusterM = cute::size<0>(ClusterShape{});
  static constexpr int kClusterN = cute::size<1>(ClusterShape{});
  static constexpr int kClusterSize = kClusterM * kClusterN;

  // The answer: the claimed work item's cluster tile (indices along M and N) and whether it is
  // in range.
  struct CLCResponse {
    std::uint32_t data[4] = {0, 0, 0, 0};
  };
  using Pipeline = ClusterAnswerPipeline<kStages>;
  using PipelineStorage = typename Pipeline::SharedStorage;
  using ThrottlePipeline = LeaderThrottlePipeline<kStages>;
  using ThrottlePipelineStorage = typename ThrottlePipeline::SharedStorage;

  // The answers first: set_data_ptr receives their address, which is then the storage's.
  class SharedStorage {
   public:
    CUTLASS_DEVICE PipelineStorage& pipeline() { return pipeline_; }
    CUTLASS_DEVICE ThrottlePipelineStorage& throttle_pipeline() { return throttle_pipeline_; }
    CUTLASS_DEVICE CLCResponse* data() { return data_; }

   private:
    alignas(16) CLCResponse data_[kStages];
    alignas(16) PipelineStorage pipeline_;
    alignas(16) ThrottlePipelineStorage throttle_pipeline_;
  };

  // The claim counter: a zeroed unsigned in global memory, one per GEMM object (see the header).
  // band and serpentine: the band order's (band_order.hpp); max_swizzle_size must be 1 (the band
  // replaces CUTLASS's swizzle, whose padding tiles would otherwise be counted as work items).
  struct Arguments : Static::Arguments {
    unsigned* claim_counter = nullptr;
    int band = 1;
    int serpentine = 0;
  };
  struct Params : Static::Params {
    unsigned* claim_counter = nullptr;
    kiln::overlap::BandOrder order{};
  };

  template <class ProblemShapeMNKL, class TileShape, class Cluster>
  static Params to_underlying_arguments(ProblemShapeMNKL problem_shape_mnkl, TileShape tile_shape,
                                        Cluster cluster_shape,
                                        cutlass::KernelHardwareInfo const& hw_info,
                                        Arguments const& arguments, void* workspace = nullptr,
                                        const std::uint32_t epilogue_subtile = 1,
                                        std::uint32_t ktile_start_alignment_count = 1u) {
    Params params;
    static_cast<Static::Params&>(params) = Static::to_underlying_arguments(
        problem_shape_mnkl, tile_shape, cluster_shape, hw_info, arguments, workspace,
        epilogue_subtile, ktile_start_alignment_count);
    params.claim_counter = arguments.claim_counter;
    params.order = band_order(params, arguments.band, arguments.serpentine);
    return params;
  }
  static bool can_implement(Arguments const& args) {
    return Static::can_implement(args) && args.claim_counter != nullptr &&
           args.max_swizzle_size == 1 && args.band >= 1;
  }
  // The band order over the static parameters' tile grid (whole clusters, swizzle 1).
  static kiln::overlap::BandOrder band_order(Static::Params const& params, int band,
                                             int serpentine) {
    kiln::overlap::BandOrder order;
    order.cluster_m = static_cast<int>(params.cluster_shape_m_);
    order.cluster_n = static_cast<int>(params.cluster_shape_n_);
    order.tiles_m = static_cast<int>(params.problem_tiles_m_) * order.cluster_m;
    order.tiles_n = static_cast<int>(params.problem_tiles_n_) * order.cluster_n;
    order.raster_along_n = params.raster_order_ == RasterOrder::AlongN ? 1 : 0;
    order.band = band;
    order.serpentine = serpentine;
    return order;
  }

  CUTLASS_DEVICE explicit ClaimedTileScheduler(Params const& params)
      : Static(params), claim_counter_(params.claim_counter), order_(params.order) {
#if defined(__CUDA_ARCH__)
    grid_clusters_ = gridDim.x * gridDim.y * gridDim.z / kClusterSize;
#endif
    work_items_ = static_cast<std::uint32_t>(order_.items());
    raster_along_n_ = params.raster_order_ == RasterOrder::AlongN;
  }

  // A cluster's first tile: work item = its static cluster id (the static scheduler's first
  // linear index of the CTA, divided by the cluster size), in the band order.
  template <class ClusterShapeT>
  CUTLASS_DEVICE WorkTileInfo initial_work_tile_info(ClusterShapeT) const {
#if defined(__CUDA_ARCH__)
    const std::uint64_t first =
        raster_along_n_ ? std::uint64_t(blockIdx.x) + std::uint64_t(blockIdx.y) * gridDim.x
                        : std::uint64_t(blockIdx.x) * gridDim.y + std::uint64_t(blockIdx.y);
    return work_for_item(static_cast<std::uint32_t>(first / kClusterSize));
#else
    return WorkTileInfo::invalid_work_tile();
#endif
  }

  CUTLASS_DEVICE void set_data_ptr(CLCResponse* data) {
    storage_ = reinterpret_cast<SharedStorage*>(data);
  }

  // The leader's scheduler warp: claim the next work item and send it to every CTA's stage.
  CUTLASS_DEVICE typename Pipeline::PipelineState advance_to_next_work(
      Pipeline& pipeline, typename Pipeline::PipelineState state) const {
    if (pipeline.leader()) {
      pipeline.producer_acquire(state);
      std::uint32_t claim = 0;
      if (cutlass::canonical_lane_idx() == 0) {
        claim = atomicAdd(claim_counter_, 1u);
        // The launch's last claim: every cluster has had its out-of-range answer, none claims
        // again. (Claims number 0 .. items - 1 in all: items - C in range, then one per cluster.)
        if (claim + 1 == work_items_) atomicExch(claim_counter_, 0u);
      }
      claim = __shfl_sync(0xffffffffu, claim, 0);
      // The answer is the item's cluster tile, computed here, a tile ahead of its readers: the
      // band order's divisions would otherwise delay the producer's next loads.
      const std::uint32_t item = grid_clusters_ + claim;
      if (item < work_items_) {
        const kiln::overlap::BandTile c =
            kiln::overlap::band_cluster_tile(order_, static_cast<int>(item));
        send(state, static_cast<std::uint32_t>(c.m), static_cast<std::uint32_t>(c.n), 1u);
      } else {
        send(state, 0u, 0u, 0u);
      }
    }
    ++state;
    return state;
  }

  // Every reader: this CTA's tile of the answered work item.
  template <class AnswerPipeline, class AnswerState>
  CUTLASS_DEVICE auto fetch_next_work(WorkTileInfo, AnswerPipeline& pipeline, AnswerState state) {
    pipeline.consumer_wait(state);
    // Read after the wait and before the release (volatile, with the barrier's own asm).
    std::uint32_t cluster_m, cluster_n, valid, unused;
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(cluster_m), "=r"(cluster_n), "=r"(valid), "=r"(unused)
                 : "r"(cute::cast_smem_ptr_to_uint(&storage_->data()[state.index()]))
                 : "memory");
    pipeline.consumer_release(state);
    const WorkTileInfo work =
        valid != 0 ? cta_tile(cluster_m, cluster_n) : WorkTileInfo::invalid_work_tile();
    return cute::make_tuple(work, true);
  }

  // The end of the kernel: the leader sends "no more work" once more (see the kernel).
  CUTLASS_DEVICE void store_invalid_response(typename Pipeline::PipelineState state) {
    // Only the leader's producer_acquire announced the bytes on every CTA's full barrier.
    if (cute::block_rank_in_cluster() == 0) send(state, 0u, 0u, 0u);
  }

 private:
  // This CTA's tile of work item `item` in the band order (its slot: item * cluster size plus the
  // CTA's rank in CUTLASS's numbering, band_order.hpp).
  CUTLASS_DEVICE WorkTileInfo work_for_item(std::uint32_t item) const {
    if (item >= work_items_) return WorkTileInfo::invalid_work_tile();
    const kiln::overlap::BandTile c =
        kiln::overlap::band_cluster_tile(order_, static_cast<int>(item));
    return cta_tile(static_cast<std::uint32_t>(c.m), static_cast<std::uint32_t>(c.n));
  }
  // This CTA's tile of a cluster tile (cluster indices along M and N).
  CUTLASS_DEVICE WorkTileInfo cta_tile(std::uint32_t cluster_m, std::uint32_t cluster_n) const {
    const dim3 in_cluster = cute::block_id_in_cluster();
    return {static_cast<int>(cluster_m * kClusterM + in_cluster.x),
            static_cast<int>(cluster_n * kClusterN + in_cluster.y), 0, true};
  }

  // Lane r < cluster size writes the answer into CTA r's stage and completes its bytes there.
  CUTLASS_DEVICE void send(typename Pipeline::PipelineState state, std::uint32_t cluster_m,
                           std::uint32_t cluster_n, std::uint32_t valid) const {
    const std::uint32_t lane = cutlass::canonical_lane_idx();
    if (lane >= kClusterSize) return;
    const std::uint32_t data = cute::cast_smem_ptr_to_uint(&storage_->data()[state.index()]);
    const std::uint32_t full =
        cute::cast_smem_ptr_to_uint(&storage_->pipeline().full[state.index()]);
    asm volatile(
        "{\n\t"
        ".reg .b32 remote_data, remote_bar;\n\t"
        "mapa.shared::cluster.u32 remote_data, %0, %2;\n\t"
        "mapa.shared::cluster.u32 remote_bar, %1, %2;\n\t"
        "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [remote_data], "
        "{%3, %4, %5, %6}, [remote_bar];\n\t"
        "}"
        :
        : "r"(data), "r"(full), "r"(lane), "r"(cluster_m), "r"(cluster_n), "r"(valid), "r"(0u)
        : "memory");
  }

  unsigned* claim_counter_ = nullptr;
  kiln::overlap::BandOrder order_{};
  SharedStorage* storage_ = nullptr;
  std::uint32_t grid_clusters_ = 1;
  std::uint32_t work_items_ = 0;
  bool raster_along_n_ = false;
};

}  // namespace kiln::overlap::device

// CUTLASS's kernels pick their scheduler through this selector.
namespace cutlass::gemm::kernel::detail {
template <class TileShape, class ClusterShape, std::uint32_t SchedulerPipelineStageCount>
struct TileSchedulerSelector<kiln::overlap::device::ClaimedTileSchedulerTag, arch::Sm90, TileShape,
                             ClusterShape, SchedulerPipelineStageCount> {
  using Scheduler = kiln::overlap::device::ClaimedTileScheduler<ClusterShape>;
};
}  // namespace cutlass::gemm::kernel::detail
