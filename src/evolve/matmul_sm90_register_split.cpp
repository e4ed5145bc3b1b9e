// The register-split sm90 GEMM unit (see matmul_sm90_register_split.hpp).
#include "evolve/matmul_sm90_register_split.hpp"

#include <fmt/format.h>

#include "evolve/matmul_triangle_scheduler.hpp"
#include "evolve/source_text.hpp"

namespace kiln::evolve {

namespace {

// The collective main loop. CUTLASS's register-sourced collective is the base: its types, TMA
// descriptors and producer tail are used as they are; the shared storage gains a stage of Bs,
// the producer loads three tiles a stage and the consumers split A and issue three products.
constexpr const char* kRegisterSplitMainloop = R"(
// kiln-register-split: begin
// A's k-block kb of one stage from shared memory into the big part's registers, then split:
// big rounded to TF32 (its low 13 bits zero, so the tensor cores read it exactly), small the
// exact remainder, rounded to TF32 as well (its error is 2^-11 of 2^-11 of the element).
template <class CopyA, class SmemA, class ViewA, class FragA>
CUTLASS_DEVICE void load_split_a(CopyA const& copy_a, SmemA const& smem_a, ViewA& view_a,
                                 FragA& big, FragA& small, int kb, int stage) {
  cute::copy(copy_a, smem_a(cute::_, cute::_, kb, stage), view_a(cute::_, cute::_, kb));
  auto b = big(cute::_, cute::_, kb);
  auto s = small(cute::_, cute::_, kb);
  CUTLASS_PRAGMA_UNROLL
  for (int i = 0; i < cute::size(b); ++i) {
    const float x = __uint_as_float(b(i).raw());
    uint32_t hi, lo;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(hi) : "f"(x));
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(lo) : "f"(x - __uint_as_float(hi)));
    b(i) = cutlass::tfloat32_t::bitcast(hi);
    s(i) = cutlass::tfloat32_t::bitcast(lo);
  }
}

// Four consecutive words v of B's raw tile (loaded from `big`) split as A is: big part back to
// `big`, small part to `small`.
CUTLASS_DEVICE void split_four(uint4 v, uint32_t* big, uint32_t* small) {
  uint32_t x[4] = {v.x, v.y, v.z, v.w}, hi[4], lo[4];
  CUTLASS_PRAGMA_UNROLL
  for (int j = 0; j < 4; ++j) {
    const float f = __uint_as_float(x[j]);
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(hi[j]) : "f"(f));
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(lo[j]) : "f"(f - __uint_as_float(hi[j])));
  }
  *reinterpret_cast<uint4*>(big) = make_uint4(hi[0], hi[1], hi[2], hi[3]);
  *reinterpret_cast<uint4*>(small) = make_uint4(lo[0], lo[1], lo[2], lo[3]);
}

// With B read as stored (kSplitB): one stage's tile of B split in place in shared memory, big
// part (rounded to TF32) where it was, small part into the stage's Bs, by the kThreads consumer
// threads that share the stage, 16 bytes a thread at a time (the two tiles have one layout, so
// a flat index is the same element in both, swizzle or not). Then the generic-proxy writes are
// made visible to wgmma's async proxy and the threads wait for each other: every thread's
// products read every thread's part of the tile.
template <int kElements, int kThreads>
CUTLASS_DEVICE void split_b_stage(uint32_t* big, uint32_t* small, int thread, int barrier) {
  static_assert(kElements % (4 * kThreads) == 0, "a stage of B is whole 16-byte vectors a thread");
  CUTLASS_PRAGMA_UNROLL
  for (int i = 4 * thread; i < kElements; i += 4 * kThreads) {
    split_four(*reinterpret_cast<const uint4*>(big + i), big + i, small + i);
  }
  cutlass::arch::fence_view_async_shared();
  cutlass::arch::NamedBarrier::sync(kThreads, barrier);
}

// The same split by one warp (the transform warp below), 16 bytes a lane at a time; the caller
// publishes it.
template <int kElements>
CUTLASS_DEVICE void split_b_stage_by_warp(uint32_t* big, uint32_t* small, int lane) {
  // Two vectors a lane in flight: one at a time the loop waits out every shared-memory load
  // (32 of them a 128 x 32 tile), about as long as the stage's products.
  static_assert(kElements % 256 == 0, "a stage of B is whole pairs of 16-byte vectors a lane");
  CUTLASS_PRAGMA_NO_UNROLL
  for (int i = 4 * lane; i < kElements; i += 256) {
    const uint4 first = *reinterpret_cast<const uint4*>(big + i);
    const uint4 second = *reinterpret_cast<const uint4*>(big + i + 128);
    split_four(first, big + i, small + i);
    split_four(second, big + i + 128, small + i + 128);
  }
}

// kSplitB: B too is read as stored (one raw tile a stage, TMA copying its bits) and split in
// shared memory, so that no operand is split in memory; 0: B is stored [Bb | Bs] and a stage
// loads both. 1: the consumers split a stage when it arrives (split_b_stage), on their own time.
// 2: the producer warp group's fourth warp splits it (CUTLASS's auxiliary load warp, idle in
// this kernel otherwise) between B's arrival and the stage's release to the consumers: B's tile
// lands on a barrier of its own (raw_full), A's on the stage's full barrier, which completes
// only when the transform warp has arrived on it too (two producer arrivals). The warp shares
// the producer's 40 registers a thread. Clusters of one block only: a peer's multicast could
// reach raw_full before this block has initialised it (the kernel's cluster barrier precedes
// the collective's code).
template <class Base, int kSplitB>
struct RegisterSplitMainloop : Base {
  using TiledMma = typename Base::TiledMma;
  using TileShape = typename Base::TileShape;
  using SmemLayoutA = typename Base::SmemLayoutA;  // (BLK_M, BLK_K, PIPE)
  using SmemLayoutB = typename Base::SmemLayoutB;  // (BLK_N, BLK_K, PIPE), for Bb and for Bs
  using MainloopPipeline = typename Base::MainloopPipeline;
  using PipelineState = typename Base::PipelineState;
  using ClusterShape = typename Base::DispatchPolicy::ClusterShape;
  static constexpr int kTileK = cute::size<2>(TileShape{});
  static constexpr int kLoadsB = kSplitB ? 1 : 2;  // tiles of B a stage loads
  static constexpr bool kTransformWarp = kSplitB == 2;
  static_assert(!kTransformWarp || cute::size(ClusterShape{}) == 1,
                "the transform warp's barriers are initialised after the cluster's sync");
  // The stage's full barrier counts the bytes of A (and B unless the transform warp splits it,
  // B then counted by raw_full) and one producer arrival, two with the transform warp.
  static constexpr uint32_t TmaTransactionBytes =
      Base::TmaTransactionBytesMK + (kTransformWarp ? 0 : kLoadsB * Base::TmaTransactionBytesNK);
  static constexpr int NumProducerThreadEvents = kTransformWarp ? 2 : 1;
  static constexpr int kStages = cute::size<2>(SmemLayoutB{});
  // Named barrier (after CUTLASS's reserved ones) on which the producer warp waits once for the
  // transform warp's initialisation of raw_full.
  static constexpr int kTransformInitBarrier = 3;

  struct SharedStorage {
    struct TensorStorage
        : cute::aligned_struct<cute::max(Base::SmemAlignmentA, Base::SmemAlignmentB), cute::_0> {
      cute::array_aligned<typename TiledMma::ValTypeA, cute::cosize_v<SmemLayoutA>,
                          Base::SmemAlignmentA>
          smem_A;
      cute::array_aligned<typename TiledMma::ValTypeB, cute::cosize_v<SmemLayoutB>,
                          Base::SmemAlignmentB>
          smem_B;
      cute::array_aligned<typename TiledMma::ValTypeB, cute::cosize_v<SmemLayoutB>,
                          Base::SmemAlignmentB>
          smem_Bs;
      uint64_t raw_full[kStages];  // kSplitB 2: B's tile of a stage has landed
    } tensors;
    using PipelineStorage = typename MainloopPipeline::SharedStorage;
    PipelineStorage pipeline;
  };
  using TensorStorage = typename SharedStorage::TensorStorage;
  using PipelineStorage = typename SharedStorage::PipelineStorage;

  struct Arguments : Base::Arguments {
    int b_k = 0;            // B's columns a batch covered by its descriptor
    int b_small_tiles = 0;  // k-tiles from a tile of Bb to the same tile of Bs (kSplitB: 0, B
                            // has no small part in memory, and b_k is the problem's K)
  };
  struct Params : Base::Params {
    int b_k = 0;
    int b_small_tiles = 0;
  };

  template <class ProblemShape>
  static bool can_implement(ProblemShape const& shape, Arguments const& args) {
    const int m = cute::get<0>(shape), n = cute::get<1>(shape), k = cute::get<2>(shape),
              l = cute::get<3>(shape);
    const long long k_tiles = (k + kTileK - 1) / kTileK;
    if (kSplitB && (args.b_small_tiles != 0 || args.b_k != k)) return false;
    if (!kSplitB && (args.b_small_tiles < k_tiles ||
                     static_cast<long long>(args.b_k) < (args.b_small_tiles + k_tiles) * kTileK))
      return false;
    return Base::can_implement(shape, args) &&
           Base::can_implement(cute::make_shape(m, n, args.b_k, l), args);
  }

  // A's descriptor over the problem's K, B's over b_k; each stage expects A's, Bb's and Bs's
  // bytes.
  template <class ProblemShape>
  static Params to_underlying_arguments(ProblemShape const& shape, Arguments const& args,
                                        void* workspace) {
    const int m = cute::get<0>(shape), n = cute::get<1>(shape), l = cute::get<3>(shape);
    Params params{Base::to_underlying_arguments(shape, args, workspace)};
    params.tma_load_b =
        Base::to_underlying_arguments(cute::make_shape(m, n, args.b_k, l), args, workspace)
            .tma_load_b;
    params.tma_transaction_bytes = TmaTransactionBytes;
    params.tma_transaction_bytes_nk = kLoadsB * Base::TmaTransactionBytesNK;  // B's a stage
    params.b_k = args.b_k;
    params.b_small_tiles = args.b_small_tiles;
    return params;
  }

  template <class ProblemShape_MNKL>
  CUTLASS_DEVICE auto load_init(ProblemShape_MNKL const& shape, Params const& params) const {
    using X = cute::Underscore;
    auto [m, n, k, l] = shape;
    auto a = params.tma_load_a.get_tma_tensor(cute::make_shape(m, k, l));
    auto b = params.tma_load_b.get_tma_tensor(cute::make_shape(n, params.b_k, l));
    return cute::make_tuple(
        cute::local_tile(a, TileShape{}, cute::make_coord(cute::_, cute::_, cute::_),
                         cute::Step<cute::_1, X, cute::_1>{}),   // (BLK_M, BLK_K, m, k, l)
        cute::local_tile(b, TileShape{}, cute::make_coord(cute::_, cute::_, cute::_),
                         cute::Step<X, cute::_1, cute::_1>{}));  // (BLK_N, BLK_K, n, k, l)
  }

  // Producer: per k-tile t, A's tile t, B's tile t (Bb, or B as stored) and, unless kSplitB,
  // tile t + b_small_tiles (Bs) into one stage, counted by one barrier.
  template <class TensorA, class TensorB, class KTileIterator, class BlockCoord>
  CUTLASS_DEVICE void load(Params const& params, MainloopPipeline pipeline,
                           PipelineState smem_pipe_write,
                           cute::tuple<TensorA, TensorB> const& load_inputs,
                           BlockCoord const& blk_coord, KTileIterator k_tile_iter, int k_tile_count,
                           int, uint32_t block_rank_in_cluster, TensorStorage& shared_tensors) {
    using namespace cute;
    // The whole warp, once: the transform warp has initialised raw_full. barrier.sync without
    // .aligned (on both sides): compute-sanitizer's synccheck found the aligned form reached by
    // a diverged transform warp (2026-11-30g call 1: 128 errors on kb1-17).
    if constexpr (kTransformWarp)
      if (smem_pipe_write.count() == 0)
        cutlass::arch::NamedBarrier(2 * cutlass::NumThreadsPerWarp, kTransformInitBarrier)
            .arrive_and_wait_unaligned();
    if (!cute::elect_one_sync()) return;
    Tensor sA = as_position_independent_swizzle_tensor(
        make_tensor(make_smem_ptr(shared_tensors.smem_A.data()), SmemLayoutA{}));
    Tensor sB = as_position_independent_swizzle_tensor(
        make_tensor(make_smem_ptr(shared_tensors.smem_B.data()), SmemLayoutB{}));
    Tensor sBs = as_position_independent_swizzle_tensor(
        make_tensor(make_smem_ptr(shared_tensors.smem_Bs.data()), SmemLayoutB{}));
    constexpr uint32_t cluster_x = size<0>(ClusterShape{});
    const uint2 block = {block_rank_in_cluster % cluster_x, block_rank_in_cluster / cluster_x};
    auto [m_coord, n_coord, k_coord, l_coord] = blk_coord;
    Tensor gA = get<0>(load_inputs)(_, _, m_coord, _, l_coord);  // (BLK_M, BLK_K, k)
    Tensor gB = get<1>(load_inputs)(_, _, n_coord, _, l_coord);  // (BLK_N, BLK_K, k)
    auto tma_a = params.tma_load_a.get_slice(block.y);
    auto tma_b = params.tma_load_b.get_slice(block.x);
    Tensor tAgA = tma_a.partition_S(gA);
    Tensor tAsA = tma_a.partition_D(sA);
    Tensor tBgB = tma_b.partition_S(gB);
    Tensor tBsB = tma_b.partition_D(sB);
    Tensor tBsBs = tma_b.partition_D(sBs);
    // Multicast as CUTLASS's collective: a tile of B to the cluster's blocks along M (A is not
    // multicast: clusters are cluster_m x 1).
    uint16_t mask_a = 0, mask_b = 0;
    auto block_layout = Layout<ClusterShape>{};
    if constexpr (cute::is_same_v<typename Base::GmemTiledCopyA, SM90_TMA_LOAD_MULTICAST>) {
      for (int n = 0; n < size<1>(block_layout); ++n)
        mask_a |= static_cast<uint16_t>(1u << block_layout(block.x, n, Int<0>{}));
    }
    if constexpr (cute::is_same_v<typename Base::GmemTiledCopyB, SM90_TMA_LOAD_MULTICAST>) {
      for (int m = 0; m < size<0>(block_layout); ++m)
        mask_b |= static_cast<uint16_t>(1u << block_layout(m, block.y, Int<0>{}));
    }
    CUTLASS_PRAGMA_NO_UNROLL
    for (; k_tile_count > 0; --k_tile_count) {
      pipeline.producer_acquire(smem_pipe_write);
      auto* barrier = pipeline.producer_get_barrier(smem_pipe_write);
      const int stage = smem_pipe_write.index();
      const int t = *k_tile_iter;
      copy(params.tma_load_a.with(*barrier, mask_a), tAgA(_, _, _, t), tAsA(_, _, _, stage));
      if constexpr (kTransformWarp) {
        uint64_t& raw = shared_tensors.raw_full[stage];
        cutlass::arch::ClusterTransactionBarrier::arrive_and_expect_tx(
            &raw, Base::TmaTransactionBytesNK);
        copy(params.tma_load_b.with(raw, mask_b), tBgB(_, _, _, t), tBsB(_, _, _, stage));
      } else {
        copy(params.tma_load_b.with(*barrier, mask_b), tBgB(_, _, _, t), tBsB(_, _, _, stage));
      }
      if constexpr (!kSplitB)
        copy(params.tma_load_b.with(*barrier, mask_b), tBgB(_, _, _, t + params.b_small_tiles),
             tBsBs(_, _, _, stage));
      ++k_tile_iter;
      ++smem_pipe_write;
    }
  }

  // The transform warp (kSplitB 2), called for every work tile as the producer is: per k-tile,
  // once B's raw tile has landed, the big part in place and the small part into Bs, published
  // to the async proxy, then one arrival on the stage's full barrier (the consumers' wait).
  template <class TensorA, class TensorB, class KTileIterator, class BlockCoord>
  CUTLASS_DEVICE void load_auxiliary(Params const&, MainloopPipeline pipeline,
                                     PipelineState smem_pipe_write,
                                     cute::tuple<TensorA, TensorB> const&, BlockCoord const&,
                                     KTileIterator, int k_tile_count, int lane,
                                     uint32_t, TensorStorage& shared_tensors) {
    if constexpr (kTransformWarp) {
      if (smem_pipe_write.count() == 0) {
        if (lane == 0) {
          CUTLASS_PRAGMA_UNROLL
          for (int s = 0; s < kStages; ++s)
            cutlass::arch::ClusterBarrier::init(&shared_tensors.raw_full[s], 1);
          cutlass::arch::fence_barrier_init();
        }
        __syncwarp();
        cutlass::arch::NamedBarrier(2 * cutlass::NumThreadsPerWarp, kTransformInitBarrier)
            .arrive_and_wait_unaligned();
      }
      constexpr int kStageElements = cute::size<0>(SmemLayoutB{}) * cute::size<1>(SmemLayoutB{});
      auto* b_words = reinterpret_cast<uint32_t*>(shared_tensors.smem_B.data());
      auto* bs_words = reinterpret_cast<uint32_t*>(shared_tensors.smem_Bs.data());
      CUTLASS_PRAGMA_NO_UNROLL
      for (; k_tile_count > 0; --k_tile_count) {
        const int stage = smem_pipe_write.index();
        // The producer's state: phase 1 on the first pass, the raw barrier's phase 0.
        cutlass::arch::ClusterBarrier::wait(&shared_tensors.raw_full[stage],
                                            smem_pipe_write.phase() ^ 1);
        split_b_stage_by_warp<kStageElements>(b_words + stage * kStageElements,
                                              bs_words + stage * kStageElements, lane);
        cutlass::arch::fence_view_async_shared();
        __syncwarp();
        if (lane == 0)
          cutlass::arch::ClusterBarrier::arrive(pipeline.producer_get_barrier(smem_pipe_write));
        ++smem_pipe_write;
      }
    }
  }

  // Consumers: CUTLASS's register-sourced k-block pipeline (A's next k-block loaded while this
  // one's wgmma run, at most two batches in flight, a stage released at k-block 1 of the next
  // tile, so Base::mma_tail's accounting holds), each k-block three products.
  template <class FrgTensorC>
  CUTLASS_DEVICE void mma(MainloopPipeline pipeline, PipelineState smem_pipe_read,
                          FrgTensorC& accum, int k_tile_count, int thread_idx,
                          TensorStorage& shared_tensors, Params const&) {
    using namespace cute;
    Tensor sA = as_position_independent_swizzle_tensor(
        make_tensor(make_smem_ptr(shared_tensors.smem_A.data()), SmemLayoutA{}));
    Tensor sB = make_tensor(make_smem_ptr(shared_tensors.smem_B.data()), SmemLayoutB{});
    Tensor sBs = make_tensor(make_smem_ptr(shared_tensors.smem_Bs.data()), SmemLayoutB{});
    constexpr int kWarpGroups = size(TiledMma{}) / cutlass::NumThreadsPerWarpGroup;
    const Layout group_layout = make_layout(Int<kWarpGroups>{}, Int<cutlass::NumThreadsPerWarpGroup>{});
    const int group = __shfl_sync(0xffffffff, thread_idx / cutlass::NumThreadsPerWarpGroup, 0);
    TiledMma tiled_mma;
    auto thread_mma = tiled_mma.get_thread_slice(thread_idx);
    auto group_mma = tiled_mma.get_slice(group_layout(group));
    Tensor tCrA = thread_mma.partition_fragment_A(sA(_, _, Int<0>{}));  // (MMA, MMA_M, MMA_K)
    Tensor tCrAs = make_fragment_like(tCrA);
    Tensor tCrB = group_mma.make_fragment_B(group_mma.partition_B(sB));    // (MMA, N, K, PIPE)
    Tensor tCrBs = group_mma.make_fragment_B(group_mma.partition_B(sBs));  // (MMA, N, K, PIPE)
    auto copy_a = make_tiled_copy_A(typename Base::SmemCopyAtomA{}, tiled_mma);
    auto thread_copy_a = copy_a.get_thread_slice(thread_idx);
    Tensor view_a = thread_copy_a.retile_D(tCrA);
    Tensor smem_a = thread_copy_a.partition_S(sA);
    constexpr int kBlocks = size<2>(tCrA);
    static_assert(kBlocks > 2, "the k-block pipeline needs more than two k-blocks a tile");
    if (k_tile_count == 0) {  // a tile with no K range (a triangle's scheduler): zeros
      cute::clear(accum);
      return;
    }
    // kSplitB 1: a stage's B split by the threads that consume it (both warp groups of a
    // cooperative tile, on barrier 0; a ping-pong warp group alone, on its own barrier 1 or 2),
    // as soon as the stage has arrived and before any product reads it.
    constexpr int kStageElements = size<0>(SmemLayoutB{}) * size<1>(SmemLayoutB{});
    static_assert(cute::cosize_v<SmemLayoutB> == kStageElements * size<2>(SmemLayoutB{}),
                  "B's stages are consecutive blocks of shared memory");
    constexpr int kConsumers = size(TiledMma{});
    const int split_barrier = kConsumers == cutlass::NumThreadsPerWarpGroup
                                  ? static_cast<int>(threadIdx.x) / cutlass::NumThreadsPerWarpGroup
                                  : 0;
    auto* b_words = reinterpret_cast<uint32_t*>(shared_tensors.smem_B.data());
    auto* bs_words = reinterpret_cast<uint32_t*>(shared_tensors.smem_Bs.data());
    (void)split_barrier;
    (void)b_words;
    (void)bs_words;
#define KILN_SPLIT_B(stage)                                                             \
  do {                                                                                  \
    if constexpr (kSplitB == 1)                                                         \
      split_b_stage<kStageElements, kConsumers>(b_words + (stage) * kStageElements,     \
                                                bs_words + (stage) * kStageElements,    \
                                                thread_idx, split_barrier);             \
  } while (0)
    // Ab Bb + Ab Bs + As Bb for k-block kb of a stage (a macro, not a lambda: a call that is
    // not inlined makes ptxas serialise every wgmma); the first product of the tile's first
    // k-block overwrites the accumulators.
#define KILN_THREE_PRODUCTS(kb, stage)                                         \
  do {                                                                         \
    cute::gemm(tiled_mma, tCrA(_, _, kb), tCrB(_, _, kb, stage), accum);       \
    tiled_mma.accumulate_ = GMMA::ScaleOut::One;                               \
    cute::gemm(tiled_mma, tCrA(_, _, kb), tCrBs(_, _, kb, stage), accum);      \
    cute::gemm(tiled_mma, tCrAs(_, _, kb), tCrB(_, _, kb, stage), accum);      \
  } while (0)
    PipelineState smem_pipe_release = smem_pipe_read;
    tiled_mma.accumulate_ = GMMA::ScaleOut::Zero;
    warpgroup_fence_operand(accum);
    {  // the first k-tile
      auto token = pipeline.consumer_try_wait(smem_pipe_read);
      pipeline.consumer_wait(smem_pipe_read, token);
      const int stage = smem_pipe_read.index();
      ++smem_pipe_read;
      token = pipeline.consumer_try_wait(smem_pipe_read);
      KILN_SPLIT_B(stage);
      load_split_a(copy_a, smem_a, view_a, tCrA, tCrAs, 0, stage);
      CUTLASS_PRAGMA_UNROLL
      for (int kb = 0; kb < kBlocks - 1; ++kb) {
        load_split_a(copy_a, smem_a, view_a, tCrA, tCrAs, kb + 1, stage);
        warpgroup_arrive();
        KILN_THREE_PRODUCTS(kb, stage);
        warpgroup_commit_batch();
      }
      warpgroup_wait<2>();
      warpgroup_arrive();
      KILN_THREE_PRODUCTS(kBlocks - 1, stage);
      warpgroup_commit_batch();
      --k_tile_count;
      if (k_tile_count == 0) {
        warpgroup_fence_operand(accum);
        return;
      }
      pipeline.consumer_wait(smem_pipe_read, token);
      KILN_SPLIT_B(smem_pipe_read.index());
      load_split_a(copy_a, smem_a, view_a, tCrA, tCrAs, 0, smem_pipe_read.index());
      warpgroup_wait<2>();
    }
    warpgroup_fence_operand(accum);
    CUTLASS_PRAGMA_NO_UNROLL
    for (; k_tile_count > 1; --k_tile_count) {
      const int stage = smem_pipe_read.index();
      ++smem_pipe_read;
      warpgroup_fence_operand(accum);
      cutlass::ConsumerToken token = {cutlass::BarrierStatus::WaitAgain};
      CUTLASS_PRAGMA_UNROLL
      for (int kb = 0; kb < kBlocks; ++kb) {
        if (kb == 0) token = pipeline.consumer_try_wait(smem_pipe_read);
        if (kb == kBlocks - 1) {
          pipeline.consumer_wait(smem_pipe_read, token);
          KILN_SPLIT_B(smem_pipe_read.index());
          load_split_a(copy_a, smem_a, view_a, tCrA, tCrAs, 0, smem_pipe_read.index());
        } else {
          load_split_a(copy_a, smem_a, view_a, tCrA, tCrAs, kb + 1, stage);
        }
        warpgroup_arrive();
        KILN_THREE_PRODUCTS(kb, stage);
        warpgroup_commit_batch();
        warpgroup_wait<2>();
        if (kb == 1) {  // the previous k-tile's batches are done: its stage is free
          pipeline.consumer_release(smem_pipe_release);
          ++smem_pipe_release;
        }
      }
      warpgroup_fence_operand(accum);
    }
    warpgroup_fence_operand(accum);
    {  // the last k-tile
      const int stage = smem_pipe_read.index();
      CUTLASS_PRAGMA_UNROLL
      for (int kb = 0; kb < kBlocks - 1; ++kb) {
        load_split_a(copy_a, smem_a, view_a, tCrA, tCrAs, kb + 1, stage);
        warpgroup_arrive();
        KILN_THREE_PRODUCTS(kb, stage);
        warpgroup_commit_batch();
        warpgroup_wait<2>();
        if (kb == 1) {
          pipeline.consumer_release(smem_pipe_release);
          ++smem_pipe_release;
        }
      }
      warpgroup_arrive();
      KILN_THREE_PRODUCTS(kBlocks - 1, stage);
      warpgroup_commit_batch();
    }
    warpgroup_fence_operand(accum);
#undef KILN_THREE_PRODUCTS
#undef KILN_SPLIT_B
  }

  // CUTLASS's tail releases the tile's last stage; a tile with no K range acquired none.
  CUTLASS_DEVICE void mma_tail(MainloopPipeline pipeline, PipelineState smem_pipe_release,
                               int k_tile_count) {
    if (k_tile_count > 0) Base::mma_tail(pipeline, smem_pipe_release, k_tile_count);
  }
};
// kiln-register-split: end
)";

constexpr const char* kUnit = R"(// kiln-unit: begin
// CUTLASS 3.x sm90 GEMM on TF32 tensor cores with A split in registers: tile $TMx$TNx32, cluster
// $CMx1, $SCHEDULE. D ($D_WORDS) = A ($A_WORDS, read as stored) B^T, $B_WORDS,
// fp32 in and out, over `batch` products with the given strides.
// Built once per configuration and layout (kiln's build cache).
$RELEASE#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/gemm/kernel/gemm_universal.hpp"

namespace kiln_unit {
using Tile = cute::Shape<cute::Int<$TM>, cute::Int<$TN>, cute::_32>;
using Cluster = cute::Shape<cute::Int<$CM>, cute::_1, cute::_1>;
using Schedule = $KERNEL;
using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Tile, Cluster,
    cutlass::epilogue::collective::EpilogueTileAuto, float, float, void, $D_LAYOUT,
    4, float, $D_LAYOUT, 4, $EPILOGUE>::CollectiveOp;
// Cooperative: two warp groups split the tile's rows; ping-pong: one a tile.
using TiledMma = decltype(cute::make_tiled_mma(
    cute::GMMA::rs_op_selector<cute::tfloat32_t, cute::tfloat32_t, float, Tile,
                               cute::GMMA::Major::K, cute::GMMA::Major::K>(),
    cute::Layout<cute::Shape<cute::Int<$GROUPS>, cute::_1, cute::_1>>{}));
namespace detail = cutlass::gemm::collective::detail;
using SmemAtomA = decltype(detail::$A_SMEM_SELECTOR<cute::GMMA::Major::$A_MAJOR, cute::tfloat32_t,
                                                    cute::Int<$TM>, cute::_32>());
using SmemAtomB = decltype(detail::ss_smem_selector<cute::GMMA::Major::K, cute::tfloat32_t,
                                                    cute::Int<$TN>, cute::_32>());
// A stage: A's tile and two of B's (Bb, Bs), and its pipeline barriers; the epilogue's storage
// carved out first (as CUTLASS's StageCountAutoCarveout, with Bs counted).
constexpr int kStageBytes = ($TM + 2 * $TN) * 32 * 4 +
                            static_cast<int>(sizeof(typename cutlass::PipelineTmaAsync<1>::SharedStorage))$TRANSFORM_STAGE_BYTES;
constexpr int kEpilogueBytes = (static_cast<int>(sizeof(typename Epilogue::SharedStorage)) + 127) / 128 * 128;
constexpr int kStages = (detail::sm90_smem_capacity_bytes - kEpilogueBytes) / kStageBytes;
static_assert(kStages >= 2, "a stage of A, Bb and Bs leaves room for fewer than two stages");
// A as uint32_t: TMA copies its bits (a float element would make a TF32 descriptor, which
// rounds); the registers then hold the full fp32 value for the split. B as $B_ELEMENT: $B_ELEMENT_WHY.
using Base = cutlass::gemm::collective::CollectiveMma<
    cutlass::gemm::MainloopSm90TmaGmmaRmemAWarpSpecialized<(kStages < 8 ? kStages : 8), Cluster, Schedule>,
    Tile, uint32_t, cutlass::gemm::TagToStrideA_t<$A_LAYOUT>, $B_ELEMENT,
    cutlass::gemm::TagToStrideB_t<cutlass::layout::ColumnMajor>, TiledMma,
    decltype(detail::sm90_cluster_shape_to_tma_atom(cute::_1{})), SmemAtomA,
    cute::Copy_Atom<cute::AutoVectorizingCopy, cute::tfloat32_t>, cute::identity,
    decltype(detail::sm90_cluster_shape_to_tma_atom(cute::Int<$CM>{})), SmemAtomB, void,
    cute::identity>;
$MAINLOOP$TRANSFORM_WARP_TRAIT$TRIANGLE_SCHEDULER
using Kernel = cutlass::gemm::kernel::GemmUniversal<cute::Shape<int, int, int, int>,
                                                    RegisterSplitMainloop<Base, $SPLIT_B>, Epilogue,
                                                    $SCHEDULER_TAG>;
// Without the auxiliary warp the stage's full barrier would wait for an arrival that never comes.
// The stage count leaves the kernel's storage at most the SM's (CUTLASS 4.2's kernels do not
// check; an overflow would only fail `initialize`).
static_assert(Kernel::SharedStorageSize <= detail::sm90_smem_capacity_bytes,
              "the kernel's shared storage exceeds the SM's");
static_assert(($SPLIT_B == 2) == Kernel::IsMainloopAuxiliaryLoadNeeded,
              "the transform warp runs exactly when B is split by it");
using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;
}  // namespace kiln_unit

$ENTRY// kiln-unit: end
)";

}  // namespace

std::string sm90_register_split_gemm_unit(const Sm90MatmulConfig& c) {
  // A (the operand split in registers: the problem's A or B) K-major or with its rows
  // contiguous (MN-major: shared memory in CUTLASS's register-sourced MN-major atom, read into
  // registers element by element); D column-major where the product is C^T = B^T A^T.
  const bool mn = c.register_mn_major;
  std::string unit = kUnit;
  replace_all(unit, "$MAINLOOP", kRegisterSplitMainloop);
  replace_all(unit, "$RELEASE", kCutlassReleaseText);
  // Plain accumulation only (the unit's `promote` is ignored); B's layout at run time.
  // B read as stored (shared_split) is split from its raw bits, so TMA must not round it.
  const std::string b_pointer = c.shared_split ? "reinterpret_cast<const uint32_t*>(B)" : "B";
  replace_all(unit, "$ENTRY",
              sm90_gemm_entry_text(", int b_small_tiles, int b_k",
                                   "typename Kernel::CollectiveMainloop::Arguments{"
                                   "{reinterpret_cast<const uint32_t*>(A), stride_a, " +
                                       b_pointer + ", stride_b}, b_k, b_small_tiles}",
                                   mn || c.register_b, sm90_triangle_before_run(c)));
  replace_all(unit, "$SPLIT_B", std::to_string(c.shared_split));
  // A triangle's ranged form: the scheduler that gives each tile its K range (sm90_scheduler_tag
  // checks that the configuration is one it runs on).
  replace_all(unit, "$TRIANGLE_SCHEDULER", c.triangle ? sm90_triangle_scheduler_text() : "");
  replace_all(unit, "$SCHEDULER_TAG", sm90_scheduler_tag(c));
  // shared_split 2: the kernel runs its auxiliary load warp (the transform warp), which needs a
  // barrier a stage.
  replace_all(unit, "$TRANSFORM_STAGE_BYTES", c.shared_split == 2 ? " + 8" : "");
  replace_all(
      unit, "$TRANSFORM_WARP_TRAIT",
      c.shared_split == 2
          ? "}  // namespace kiln_unit\n"
            "// The kernel's auxiliary load warp runs RegisterSplitMainloop's load_auxiliary.\n"
            "template <>\n"
            "struct cutlass::gemm::kernel::detail::HasAuxiliaryLoad<\n"
            "    typename kiln_unit::Base::DispatchPolicy> : cute::true_type {};\n"
            "namespace kiln_unit {\n"
          : "");
  replace_all(unit, "$B_ELEMENT_WHY",
              c.shared_split ? "its bits too, split in shared memory"
                             : "B's parts are TF32 values already, which the rounding keeps");
  replace_all(unit, "$B_ELEMENT", c.shared_split ? "uint32_t" : "float");
  replace_all(unit, "$B_WORDS",
              c.shared_split
                  ? "B read as stored (n x k a batch, K-major) and split in shared memory"
                  : "B stored as rows [Bb | Bs] (n x b_k a batch, K-major)");
  replace_all(unit, "$D_WORDS", c.register_b ? "column-major" : "row-major");
  replace_all(unit, "$A_WORDS", mn ? "M-major" : "row-major, K-major");
  replace_all(unit, "$D_LAYOUT",
              c.register_b ? "cutlass::layout::ColumnMajor" : "cutlass::layout::RowMajor");
  replace_all(unit, "$A_LAYOUT", mn ? "cutlass::layout::ColumnMajor" : "cutlass::layout::RowMajor");
  replace_all(unit, "$A_SMEM_SELECTOR", mn ? "rs_smem_selector" : "ss_smem_selector");
  replace_all(unit, "$A_MAJOR", mn ? "MN" : "K");
  replace_all(unit, "$TM", std::to_string(c.tile_m));
  replace_all(unit, "$TN", std::to_string(c.tile_n));
  replace_all(unit, "$CM", std::to_string(c.cluster_m));
  replace_all(unit, "$GROUPS", c.pingpong ? "1" : "2");
  replace_all(unit, "$SCHEDULE", c.pingpong ? "ping-pong" : "cooperative");
  replace_all(unit, "$EPILOGUE",
              c.pingpong ? "cutlass::epilogue::TmaWarpSpecialized"
                         : "cutlass::epilogue::TmaWarpSpecializedCooperative");
  replace_all(unit, "$KERNEL",
              c.pingpong ? "cutlass::gemm::KernelTmaWarpSpecializedPingpong"
                         : "cutlass::gemm::KernelTmaWarpSpecializedCooperative");
  return unit;
}

}  // namespace kiln::evolve
