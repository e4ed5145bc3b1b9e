// An experimental consumer loop for CUTLASS's sm90 TMA warp-specialized main loop (issue 17,
// docs/results/2026-12-02c-mainloop/): the collective CUTLASS's builder made, with only its
// consumer's k-loop (`mma`) replaced. Loads, the pipeline, mma_tail and the scheduler are
// CUTLASS's. Built only when KILN_CONSUMER_LOOP is defined non-zero (an A/B build, timed against
// the default through torch_gemm_same_process.py --extra-lib); the default build never uses it.
//
// Why: at 4096x8192x2048 cuBLAS's nvjet kernel runs the same 128x144 tile, 2-CTA cluster and 6
// stages as kiln's ping-pong 128x144, with its tensor pipe active 97.7% of the time against 94.7%.
// Its SASS issues each k-block's GMMAs atom by atom (rows 0-63's four k-steps, then rows 64-127's)
// where CUTLASS alternates the atoms at every k-step, and it waits for the previous k-block's group
// (and frees its stage) between the two atoms, where CUTLASS waits after issuing all eight.
//   KILN_CONSUMER_LOOP=1: atom-major issue order, CUTLASS's wait (one group in flight) otherwise;
//   KILN_CONSUMER_LOOP=2: atom-major order and the wait between the atoms (tiles of two atoms).
#pragma once

#include <cute/tensor.hpp>
#include <cutlass/cutlass.h>

namespace kiln::overlap::device {

template <class Base, int kVariant>
struct AtomMajorConsumerLoop : Base {
  template <class FrgTensorC>
  CUTLASS_DEVICE void mma(typename Base::MainloopPipeline pipeline,
                          typename Base::PipelineState smem_pipe_read, FrgTensorC& accum,
                          int k_tile_count, int thread_idx,
                          typename Base::TensorStorage& shared_tensors,
                          typename Base::Params const& /*mainloop_params*/) {
    using namespace cute;
    using TiledMma = typename Base::TiledMma;
    Tensor sA = make_tensor(make_smem_ptr(shared_tensors.smem_A.data()), typename Base::SmemLayoutA{});
    Tensor sB = make_tensor(make_smem_ptr(shared_tensors.smem_B.data()), typename Base::SmemLayoutB{});
    constexpr int kWarpGroups = size(TiledMma{}) / cutlass::NumThreadsPerWarpGroup;
    const auto group_layout =
        make_layout(Int<kWarpGroups>{}, Int<cutlass::NumThreadsPerWarpGroup>{});
    const int group = __shfl_sync(0xffffffff, thread_idx / cutlass::NumThreadsPerWarpGroup, 0);
    TiledMma tiled_mma;
    auto thread_mma = tiled_mma.get_slice(group_layout(group));
    Tensor tCrA = thread_mma.make_fragment_A(thread_mma.partition_A(sA));  // (MMA,M,K,PIPE)
    Tensor tCrB = thread_mma.make_fragment_B(thread_mma.partition_B(sB));  // (MMA,N,K,PIPE)
    constexpr int kAtomsM = decltype(size<1>(tCrA))::value;
    constexpr int kAtomsN = decltype(size<1>(tCrB))::value;
    constexpr int kSteps = decltype(size<2>(tCrA))::value;
    constexpr bool kSplitWait = kVariant == 2 && kAtomsM == 2;

    // One atom row's GMMAs of k-block `stage`, its k-steps back to back on the same accumulators.
    const auto issue_atom = [&](int m, int stage, bool first_block) {
      CUTLASS_PRAGMA_UNROLL
      for (int n = 0; n < kAtomsN; ++n) {
        CUTLASS_PRAGMA_UNROLL
        for (int k = 0; k < kSteps; ++k) {
          tiled_mma.accumulate_ =
              first_block && k == 0 ? cute::GMMA::ScaleOut::Zero : cute::GMMA::ScaleOut::One;
          cute::gemm(tiled_mma, tCrA(_, m, k, stage), tCrB(_, n, k, stage), accum(_, m, n));
        }
      }
    };

    typename Base::PipelineState release = smem_pipe_read;
    warpgroup_fence_operand(accum);
    CUTLASS_PRAGMA_NO_UNROLL
    for (int t = 0; t < k_tile_count; ++t) {
      auto token = pipeline.consumer_try_wait(smem_pipe_read);
      pipeline.consumer_wait(smem_pipe_read, token);
      const int stage = smem_pipe_read.index();
      warpgroup_fence_operand(accum);
      warpgroup_arrive();
      if constexpr (kSplitWait) {
        issue_atom(0, stage, t == 0);
        // The previous k-block's group (committed) is done: free its stage before the second atom.
        warpgroup_wait<0>();
        if (t > 0) {
          pipeline.consumer_release(release);
          ++release;
        }
        warpgroup_arrive();
        issue_atom(1, stage, t == 0);
        warpgroup_commit_batch();
      } else {
        CUTLASS_PRAGMA_UNROLL
        for (int m = 0; m < kAtomsM; ++m) issue_atom(m, stage, t == 0);
        warpgroup_commit_batch();
        warpgroup_wait<1>();  // the previous k-block's group is done, this one in flight
        if (t > 0) {
          pipeline.consumer_release(release);
          ++release;
        }
      }
      warpgroup_fence_operand(accum);
      ++smem_pipe_read;
    }
    // As CUTLASS's mma: the last k-block's stage is left to mma_tail, which waits for every group
    // and frees it.
    warpgroup_fence_operand(accum);
  }
};

}  // namespace kiln::overlap::device
