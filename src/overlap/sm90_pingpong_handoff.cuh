// An experimental consumer k-loop for CUTLASS's sm90 TMA warp-specialized main loop in the
// ping-pong kernels (issue 17, docs/results/2026-12-02d-handoff/): the collective CUTLASS's
// builder made, with `mma` and `mma_tail` replaced; loads, the pipeline and the scheduler are
// CUTLASS's. Built only when KILN_PINGPONG_HANDOFF is defined non-zero (an A/B build, timed
// against the default through torch_gemm_same_process.py --extra-lib).
//
// Why: at 4096x8192x2048 kiln's ping-pong 128x144 and its CUTLASS twin take ~640 cycles more per
// tile than cuBLAS's nvjet kernel of the same tile, cluster and stage count, and the gap does not
// grow with K (2026-12-02c: twin / cuBLAS 1.03 at K = 2048, 1.007 at 8192, one tile count). In
// CUTLASS's ping-pong kernel a warp group cues the other's main loop (the order barrier) only when
// its `mma` returns, and `mma` returns after waiting for the second-to-last k-block's GMMAs: the
// other warp group then has one k-block of queued GMMAs (~576 cycles at 128x144) to wake from its
// barrier sleep, wait for its first stage and issue, or the tensor pipe idles.
//   KILN_PINGPONG_HANDOFF=1: `mma` returns right after issuing the last k-block (two k-blocks
//     queued at the cue); `mma_tail` waits for both and frees their stages.
//   KILN_PINGPONG_HANDOFF=2: as 1, with two committed k-blocks left in flight in the loop where
//     CUTLASS leaves one (a stage freed one k-block later, more queued work at every wait).
#pragma once

#include <cute/tensor.hpp>
#include <cutlass/cutlass.h>

namespace kiln::overlap::device {

template <class Base, int kVariant>
struct EarlyHandoffMainloop : Base {
  // Committed k-block groups the loop leaves in flight when it frees a stage (CUTLASS: 1).
  static constexpr int kInFlight = kVariant == 2 ? 2 : 1;
  static_assert(kInFlight + 1 < Base::DispatchPolicy::Stages,
                "the consumer would hold every stage the producer could fill");

  // Stages the loop frees itself; mma_tail frees the rest.
  CUTLASS_DEVICE static int released_in_loop(int k_tile_count) {
    return k_tile_count - 1 - kInFlight > 0 ? k_tile_count - 1 - kInFlight : 0;
  }

  template <class FrgTensorC>
  CUTLASS_DEVICE void mma(typename Base::MainloopPipeline pipeline,
                          typename Base::PipelineState smem_pipe_read, FrgTensorC& accum,
                          int k_tile_count, int thread_idx,
                          typename Base::TensorStorage& shared_tensors,
                          typename Base::Params const& /*mainloop_params*/) {
    using namespace cute;
    using TiledMma = typename Base::TiledMma;
    Tensor sA =
        make_tensor(make_smem_ptr(shared_tensors.smem_A.data()), typename Base::SmemLayoutA{});
    Tensor sB =
        make_tensor(make_smem_ptr(shared_tensors.smem_B.data()), typename Base::SmemLayoutB{});
    constexpr int kWarpGroups = size(TiledMma{}) / cutlass::NumThreadsPerWarpGroup;
    const auto group_layout =
        make_layout(Int<kWarpGroups>{}, Int<cutlass::NumThreadsPerWarpGroup>{});
    const int group = __shfl_sync(0xffffffff, thread_idx / cutlass::NumThreadsPerWarpGroup, 0);
    TiledMma tiled_mma;
    auto thread_mma = tiled_mma.get_slice(group_layout(group));
    Tensor tCrA = thread_mma.make_fragment_A(thread_mma.partition_A(sA));  // (MMA,M,K,PIPE)
    Tensor tCrB = thread_mma.make_fragment_B(thread_mma.partition_B(sB));  // (MMA,N,K,PIPE)

    typename Base::PipelineState release = smem_pipe_read;
    tiled_mma.accumulate_ = GMMA::ScaleOut::Zero;  // the tile's first k-step overwrites
    warpgroup_fence_operand(accum);
    CUTLASS_PRAGMA_NO_UNROLL
    for (int t = 0; t < k_tile_count; ++t) {
      auto token = pipeline.consumer_try_wait(smem_pipe_read);
      pipeline.consumer_wait(smem_pipe_read, token);
      const int stage = smem_pipe_read.index();
      warpgroup_fence_operand(accum);
      warpgroup_arrive();
      CUTLASS_PRAGMA_UNROLL
      for (int k = 0; k < size<2>(tCrA); ++k) {
        cute::gemm(tiled_mma, tCrA(_, _, k, stage), tCrB(_, _, k, stage), accum);
        tiled_mma.accumulate_ = GMMA::ScaleOut::One;
      }
      warpgroup_commit_batch();
      // The last k-block is not waited for here: the kernel cues the other warp group as soon as
      // this returns, with this k-block's and the previous ones' GMMAs still queued.
      if (t >= kInFlight && t + 1 < k_tile_count) {
        warpgroup_wait<kInFlight>();
        warpgroup_fence_operand(accum);
        pipeline.consumer_release(release);
        ++release;
      }
      ++smem_pipe_read;
    }
    warpgroup_fence_operand(accum);
  }

  // Waits for every GMMA of the tile and frees the stages mma left held. `smem_pipe_release` is the
  // tile's first stage, as the kernel passes it (CUTLASS's contract).
  CUTLASS_DEVICE void mma_tail(typename Base::MainloopPipeline pipeline,
                               typename Base::PipelineState smem_pipe_release, int k_tile_count) {
    const int freed = released_in_loop(k_tile_count);
    smem_pipe_release.advance(freed);
    cute::warpgroup_wait<0>();
    for (int i = freed; i < k_tile_count; ++i) {
      pipeline.consumer_release(smem_pipe_release);
      ++smem_pipe_release;
    }
  }
};

}  // namespace kiln::overlap::device
