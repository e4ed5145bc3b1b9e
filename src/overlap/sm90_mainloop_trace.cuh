// A diagnostic build of CUTLASS's sm90 TMA warp-specialized main loop (issue 17): the collective
// CUTLASS makes, with `mma` and `mma_tail` copied from CUTLASS 4.2's
// sm90_mma_tma_gmma_ss_warpspecialized.hpp (same waits, same releases) plus %clock64 reads, so that
// a ping-pong kernel's per-tile idle (~450-610 cycles per tile more than cuBLAS's nvjet kernel,
// docs/results/2026-12-02d-handoff/) can be placed: between two warp groups' tiles, at a tile's
// first stage, or inside the k-loop. Built only with -DKILN_MAINLOOP_TRACE (never in the default
// build); the records are fetched by kiln_mainloop_trace_bf16_nk (signaling_gemm_bf16_nk.cu).
#pragma once

#include <cuda_runtime.h>

#include <cutlass/cutlass.h>
#include <cute/tensor.hpp>

namespace kiln::overlap::device {

// Records: [CTA][consumer warp group][tile of that warp group][field], fields:
//   0 mma entry (after the kernel's order-barrier wait), 1 first stage ready, 2 mma exit
//   (the kernel cues the other warp group then), 3 mma_tail exit (every GMMA of the tile done),
//   4 cycles spent waiting for stages in the k-loop (first stage excluded), 5 waits that found
//   the stage not ready, 6 cycles in the loop's warpgroup_wait, 7 (smid << 32) | k-blocks,
//   8 epilogue entry (after the kernel's epilogue-order wait), 9 the tile's TMA stores issued,
//   10 epilogue exit (eager signalling: after the stores completed and the tile was counted).
// K-block records, for a warp group's first kTraceKTiles tiles: [..][tile][j] = %clock64 when
// the k-loop's warpgroup_wait<1> returned with k-block j's GMMAs done (j < k-blocks - 1; the
// last k-block's is field 3). Together they say which k-blocks ran slow and what the other warp
// group was doing meanwhile (docs/results/2026-12-03e-kblock-trace/). They cost: with them the
// k-loop runs at 591 cycles per 128x144 k-block instead of 580 (the whole GEMM 4% slower), so
// compare k-blocks of one trace build with each other, not with the default build.
inline constexpr int kTraceCtas = 264;
inline constexpr int kTraceTiles = 96;
inline constexpr int kTraceFields = 16;
inline constexpr int kTraceKTiles = 16;
inline constexpr int kTraceKBlocks = 128;
static __device__ unsigned long long g_mainloop_trace[kTraceCtas][2][kTraceTiles][kTraceFields];
static __device__ unsigned long long g_kblock_trace[kTraceCtas][2][kTraceKTiles][kTraceKBlocks];
// Probe switches (bit 0: the epilogue skips its staging and TMA stores, so that what remains of
// the per-tile cost without them can be placed; outputs are then wrong by design).
static __device__ int g_trace_probe;

static inline bool set_trace_probe(int probe) {
  return cudaMemcpyToSymbol(g_trace_probe, &probe, sizeof(probe)) == cudaSuccess;
}

// Copies the tile records and then the k-block records to `host` (which must hold both) and
// zeroes them; returns the bytes copied, or -1.
static inline long long fetch_mainloop_trace(void* host, unsigned long long bytes) {
  const unsigned long long tiles = sizeof(g_mainloop_trace);
  const unsigned long long kblocks = sizeof(g_kblock_trace);
  if (bytes < tiles + kblocks) return -1;
  if (cudaDeviceSynchronize() != cudaSuccess) return -1;
  if (cudaMemcpyFromSymbol(host, g_mainloop_trace, tiles) != cudaSuccess) return -1;
  if (cudaMemcpyFromSymbol(static_cast<char*>(host) + tiles, g_kblock_trace, kblocks) !=
      cudaSuccess) {
    return -1;
  }
  void* address = nullptr;
  if (cudaGetSymbolAddress(&address, g_mainloop_trace) != cudaSuccess) return -1;
  if (cudaMemset(address, 0, tiles) != cudaSuccess) return -1;
  if (cudaGetSymbolAddress(&address, g_kblock_trace) != cudaSuccess) return -1;
  if (cudaMemset(address, 0, kblocks) != cudaSuccess) return -1;
  return static_cast<long long>(tiles + kblocks);
}

CUTLASS_DEVICE unsigned long long trace_now() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)::"memory");
  return t;
}

// This consumer warp group's record of its `tile`-th tile (nullptr past the arrays).
CUTLASS_DEVICE unsigned long long* trace_record(int tile) {
  const int cta = static_cast<int>(blockIdx.x + blockIdx.y * gridDim.x);
  const int group = static_cast<int>(threadIdx.x) / 128 - 1;
  if (cta >= kTraceCtas || group < 0 || group > 1 || tile >= kTraceTiles) return nullptr;
  return g_mainloop_trace[cta][group][tile];
}

CUTLASS_DEVICE unsigned long long* trace_kblock_record(int tile) {
  const int cta = static_cast<int>(blockIdx.x + blockIdx.y * gridDim.x);
  const int group = static_cast<int>(threadIdx.x) / 128 - 1;
  if (cta >= kTraceCtas || group < 0 || group > 1 || tile >= kTraceKTiles) return nullptr;
  return g_kblock_trace[cta][group][tile];
}

CUTLASS_DEVICE bool trace_probe_skips_stores() {
  return (g_trace_probe & 1) != 0;
}

// The signaling epilogue's marks (fields 8-10), by the warp group's first thread.
CUTLASS_DEVICE void trace_epilogue_mark(int tile, int field) {
  if (threadIdx.x % 128 != 0) return;
  if (unsigned long long* r = trace_record(tile)) r[field] = trace_now();
}

template <class Base>
struct TracedMainloop : Base {
  int traced_tiles_ = 0;

  CUTLASS_DEVICE static unsigned long long now() { return trace_now(); }
  CUTLASS_DEVICE static unsigned long long* record(int tile) { return trace_record(tile); }

  template <class FrgTensorC>
  CUTLASS_DEVICE void mma(typename Base::MainloopPipeline pipeline,
                          typename Base::PipelineState smem_pipe_read, FrgTensorC& accum,
                          int k_tile_count, int thread_idx,
                          typename Base::TensorStorage& shared_tensors,
                          typename Base::Params const& /*mainloop_params*/) {
    using namespace cute;
    using TiledMma = typename Base::TiledMma;
    const unsigned long long entry = now();
    const int k_blocks = k_tile_count;
    unsigned long long* const kblock_done =
        thread_idx == 0 ? trace_kblock_record(traced_tiles_) : nullptr;
    int kblock = 0;
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
    Tensor tCrA = thread_mma.make_fragment_A(thread_mma.partition_A(sA));
    Tensor tCrB = thread_mma.make_fragment_B(thread_mma.partition_B(sB));

    typename Base::PipelineState smem_pipe_release = smem_pipe_read;
    tiled_mma.accumulate_ = GMMA::ScaleOut::Zero;
    warpgroup_fence_operand(accum);
    {
      auto token = pipeline.consumer_try_wait(smem_pipe_read);
      pipeline.consumer_wait(smem_pipe_read, token);
    }
    const unsigned long long first_ready = now();
    {
      const int read_stage = smem_pipe_read.index();
      warpgroup_arrive();
      CUTLASS_PRAGMA_UNROLL
      for (int k_block = 0; k_block < size<2>(tCrA); ++k_block) {
        cute::gemm(tiled_mma, tCrA(_, _, k_block, read_stage), tCrB(_, _, k_block, read_stage),
                   accum);
        tiled_mma.accumulate_ = GMMA::ScaleOut::One;
      }
      warpgroup_commit_batch();
      ++smem_pipe_read;
    }
    tiled_mma.accumulate_ = GMMA::ScaleOut::One;
    warpgroup_fence_operand(accum);
    --k_tile_count;  // CUTLASS's K_PIPE_MMAS = 1 prologue k-block

    unsigned long long waited = 0, gmma_waited = 0, not_ready = 0;
    CUTLASS_PRAGMA_NO_UNROLL
    for (; k_tile_count > 0; --k_tile_count) {
      const unsigned long long before = now();
      auto token = pipeline.consumer_try_wait(smem_pipe_read);
      not_ready += token == cutlass::BarrierStatus::WaitDone ? 0 : 1;
      pipeline.consumer_wait(smem_pipe_read, token);
      const unsigned long long ready = now();
      waited += ready - before;
      const int read_stage = smem_pipe_read.index();
      warpgroup_fence_operand(accum);
      warpgroup_arrive();
      cute::gemm(tiled_mma, tCrA(_, _, _, read_stage), tCrB(_, _, _, read_stage), accum);
      warpgroup_commit_batch();
      const unsigned long long issued = now();
      warpgroup_wait<1>();
      const unsigned long long done = now();
      gmma_waited += done - issued;
      if (kblock_done != nullptr && kblock < kTraceKBlocks) kblock_done[kblock] = done;
      ++kblock;
      warpgroup_fence_operand(accum);
      pipeline.consumer_release(smem_pipe_release);
      ++smem_pipe_read;
      ++smem_pipe_release;
    }
    warpgroup_fence_operand(accum);
    if (thread_idx == 0) {
      if (unsigned long long* r = record(traced_tiles_)) {
        unsigned smid;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
        r[0] = entry;
        r[1] = first_ready;
        r[2] = now();
        r[4] = waited;
        r[5] = not_ready;
        r[6] = gmma_waited;
        r[7] = (static_cast<unsigned long long>(smid) << 32) | static_cast<unsigned>(k_blocks);
      }
    }
  }

  CUTLASS_DEVICE void mma_tail(typename Base::MainloopPipeline pipeline,
                               typename Base::PipelineState smem_pipe_release, int k_tile_count) {
    const int prologue = k_tile_count < 1 ? k_tile_count : 1;
    smem_pipe_release.advance(k_tile_count - prologue);
    cute::warpgroup_wait<0>();
    const unsigned long long done = now();
    for (int count = 0; count < prologue; ++count) {
      pipeline.consumer_release(smem_pipe_release);
      ++smem_pipe_release;
    }
    // mma_tail's thread index is not passed: the warp group's first thread by threadIdx.
    if (threadIdx.x % 128 == 0) {
      if (unsigned long long* r = record(traced_tiles_)) r[3] = done;
    }
    ++traced_tiles_;
  }
};

}  // namespace kiln::overlap::device
