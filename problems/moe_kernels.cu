// MoE dispatch/combine kernels (see moe_kernels.hpp). Rows move as 16-byte vectors, one vector per
// thread and grid-stride loops, so every row length that is whole vectors works.
#include <cuda_bf16.h>

#include <algorithm>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_scan.cuh>

#include "comm/nvlink_collectives.hpp"
#include "comm/peer_barrier.cuh"
#include "core/cuda_check.hpp"
#include "problems/moe_kernels.hpp"

namespace kiln::problems {
namespace {

constexpr int kThreads = 256;
constexpr int kLoadBatch = 8;  // peer rows requested together before they are added

// What the kernels need of MoeDims (its helpers are host code).
struct Shape {
  int tokens, topk, experts, local_experts;
  int vectors;  // 16-byte vectors per row
};

Shape shape_of(const MoeDims& dims) {
  return {dims.tokens, dims.topk, dims.experts, dims.local_experts(),
          static_cast<int>(dims.row_bytes() / 16)};
}

unsigned grid_for(std::size_t units) {
  return static_cast<unsigned>(
      std::clamp<std::size_t>((units + kThreads - 1) / kThreads, 1, 65536));
}

// acc += w * row, fp32 with one rounding per step (an explicit fma, so the reference and kiln's
// kernel, and the host check, compute the same bits).
__device__ __forceinline__ void add_weighted(float (&acc)[8], const uint4& raw, float w) {
  const __nv_bfloat16* e = reinterpret_cast<const __nv_bfloat16*>(&raw);
#pragma unroll
  for (int i = 0; i < 8; ++i) acc[i] = fmaf(w, __bfloat162float(e[i]), acc[i]);
}

__device__ __forceinline__ uint4 round_to_bf16(const float (&acc)[8]) {
  uint4 packed;
  __nv_bfloat16* out = reinterpret_cast<__nv_bfloat16*>(&packed);
#pragma unroll
  for (int i = 0; i < 8; ++i) out[i] = __float2bfloat16_rn(acc[i]);
  return packed;
}

// ------------------------------------------------------------------------------ reference

__global__ void routing_map_kernel(const int* idx, Shape s, int* map) {
  const std::size_t choices = static_cast<std::size_t>(s.tokens) * s.topk;
  for (std::size_t c = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; c < choices;
       c += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const int t = static_cast<int>(c / s.topk);
    map[static_cast<std::size_t>(idx[c]) * s.tokens + t] = 1;
  }
}

__global__ void expert_counts_kernel(const int* map, const int* scan, Shape s, int* counts) {
  const int e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= s.experts) return;
  const std::size_t end = static_cast<std::size_t>(s.experts) * s.tokens;
  const int total = scan[end - 1] + map[end - 1];
  const int next = e + 1 < s.experts ? scan[static_cast<std::size_t>(e + 1) * s.tokens] : total;
  counts[e] = next - scan[static_cast<std::size_t>(e) * s.tokens];
}

// One block per choice.
__global__ void permute_kernel(const uint4* x, const int* idx, const int* send_row, Shape s,
                               uint4* send) {
  const std::size_t c = blockIdx.x;
  const int t = static_cast<int>(c / s.topk);
  const std::size_t row = send_row[static_cast<std::size_t>(idx[c]) * s.tokens + t];
  for (int v = threadIdx.x; v < s.vectors; v += blockDim.x)
    send[row * s.vectors + v] = x[static_cast<std::size_t>(t) * s.vectors + v];
}

// A block per input row: finds its chunk (the last whose `from` is not above the row).
__global__ void move_chunks_kernel(const uint4* in, uint4* out, const std::int64_t* chunks,
                                   int chunk_count, std::int64_t rows, int vectors) {
  for (std::int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    int lo = 0, hi = chunk_count;  // first chunk with from > r
    while (lo < hi) {
      const int mid = (lo + hi) / 2;
      if (chunks[3 * mid] <= r)
        lo = mid + 1;
      else
        hi = mid;
    }
    const std::int64_t* chunk = chunks + 3 * (lo - 1);
    const std::size_t to = static_cast<std::size_t>(chunk[1] + (r - chunk[0]));
    for (int v = threadIdx.x; v < vectors; v += blockDim.x)
      out[to * vectors + v] = in[static_cast<std::size_t>(r) * vectors + v];
  }
}

__global__ void unpermute_weighted_kernel(const uint4* rows, const int* idx, const float* w,
                                          const int* send_row, Shape s, uint4* out) {
  const std::size_t units = static_cast<std::size_t>(s.tokens) * s.vectors;
  for (std::size_t u = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; u < units;
       u += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const int t = static_cast<int>(u / s.vectors), v = static_cast<int>(u % s.vectors);
    float acc[8] = {};
    for (int j = 0; j < s.topk; ++j) {
      const std::size_t c = static_cast<std::size_t>(t) * s.topk + j;
      const std::size_t row = send_row[static_cast<std::size_t>(idx[c]) * s.tokens + t];
      add_weighted(acc, rows[row * s.vectors + v], w[c]);
    }
    out[u] = round_to_bf16(acc);
  }
}

// ------------------------------------------------------------------------------ kiln

// Block e scans the choices in order, kThreads at a time: a ballot per warp and the warps' totals
// give each hit its place, stable by token (a token picks e at most once).
__global__ void __launch_bounds__(kThreads)
    count_positions_kernel(const int* idx, Shape s, MoePeers counts, int world, int* positions) {
  __shared__ int warp_hits[kThreads / 32];
  const int e = blockIdx.x, lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int choices = s.tokens * s.topk;
  int running = 0;
  for (int first = 0; first < choices; first += kThreads) {
    const int c = first + threadIdx.x;
    const bool hit = c < choices && idx[c] == e;
    const unsigned ballot = __ballot_sync(0xffffffffu, hit);
    if (lane == 0) warp_hits[warp] = __popc(ballot);
    __syncthreads();
    int before = running;
    for (int w = 0; w < warp; ++w) before += warp_hits[w];
    if (hit) positions[c] = before + __popc(ballot & ((1u << lane) - 1u));
    for (int w = 0; w < kThreads / 32; ++w) running += warp_hits[w];
    __syncthreads();  // warp_hits is rewritten next round
  }
  if (threadIdx.x < world) {
    static_cast<int*>(counts.rank[threadIdx.x])[e] = running;
    __threadfence_system();  // visible on the peer before its barrier passes (next kernel)
  }
}

struct BasesArgs {
  comm::PeerBarrier sync;
  const int* counts;  // [world][experts], written by every rank
  Shape shape;
  int* bases;
};

__global__ void __launch_bounds__(kThreads) slot_bases_kernel(BasesArgs a) {
  using Scan = cub::BlockScan<int, kThreads>;
  __shared__ typename Scan::TempStorage scan_storage;
  __shared__ int before_expert[kMoeMaxExperts];  // rows of all experts before e, every source
  __shared__ int before_source[kMoeMaxExperts];  // rows of e from the sources before this rank
  comm::peer_barrier(a.sync);
  const int experts = a.shape.experts;
  int running = 0;
  for (int first = 0; first < experts; first += kThreads) {
    const int e = first + threadIdx.x;
    int total = 0, mine = 0;
    if (e < experts) {
      // Every source's count requested at once (they are independent loads), from L2: peers
      // wrote them.
      int count[MoePeers::kMaxWorld];
#pragma unroll
      for (int r = 0; r < MoePeers::kMaxWorld; ++r)
        count[r] = r < a.sync.world ? __ldcg(a.counts + r * experts + e) : 0;
#pragma unroll
      for (int r = 0; r < MoePeers::kMaxWorld; ++r) {
        total += count[r];
        if (r < a.sync.rank) mine += count[r];
      }
    }
    int exclusive, chunk_total;
    Scan(scan_storage).ExclusiveSum(total, exclusive, chunk_total);
    if (e < experts) {
      before_expert[e] = running + exclusive;
      before_source[e] = mine;
    }
    running += chunk_total;
    __syncthreads();  // scan_storage is reused; the arrays are read below
  }
  for (int e = threadIdx.x; e < experts; e += kThreads) {
    const int first_local = e / a.shape.local_experts * a.shape.local_experts;
    a.bases[e] = before_expert[e] - before_expert[first_local] + before_source[e];
  }
}

// A thread per vector of a token row: read once, written to each of the token's k slots.
__global__ void push_rows_kernel(const uint4* x, const int* idx, const int* positions,
                                 const int* bases, Shape s, MoePeers recv) {
  const std::size_t units = static_cast<std::size_t>(s.tokens) * s.vectors;
  for (std::size_t u = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; u < units;
       u += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const int t = static_cast<int>(u / s.vectors), v = static_cast<int>(u % s.vectors);
    const uint4 value = x[u];
    for (int j = 0; j < s.topk; ++j) {
      const std::size_t c = static_cast<std::size_t>(t) * s.topk + j;
      const int e = idx[c];
      const std::size_t row = static_cast<std::size_t>(bases[e]) + positions[c];
      static_cast<uint4*>(recv.rank[e / s.local_experts])[row * s.vectors + v] = value;
    }
  }
  // This thread's remote stores visible system-wide before the kernel ends and the barrier that
  // follows releases them to the receivers.
  __threadfence_system();
}

// A thread per output vector: up to kLoadBatch peer rows requested at once (one NVLink round trip
// per batch, not per row), then added in choice order as the reference does.
__global__ void pull_combine_kernel(MoePeers y, const int* idx, const float* w,
                                    const int* positions, const int* bases, Shape s, uint4* out) {
  const std::size_t units = static_cast<std::size_t>(s.tokens) * s.vectors;
  for (std::size_t u = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; u < units;
       u += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const int t = static_cast<int>(u / s.vectors), v = static_cast<int>(u % s.vectors);
    float acc[8] = {};
    for (int first = 0; first < s.topk; first += kLoadBatch) {
      uint4 raw[kLoadBatch];
#pragma unroll
      for (int b = 0; b < kLoadBatch; ++b) {
        if (first + b < s.topk) {
          const std::size_t c = static_cast<std::size_t>(t) * s.topk + first + b;
          const int e = idx[c];
          const std::size_t row = static_cast<std::size_t>(bases[e]) + positions[c];
          raw[b] = comm::load_peer(static_cast<const uint4*>(y.rank[e / s.local_experts]) +
                                   row * s.vectors + v);
        }
      }
#pragma unroll
      for (int b = 0; b < kLoadBatch; ++b) {
        if (first + b < s.topk)
          add_weighted(acc, raw[b], w[static_cast<std::size_t>(t) * s.topk + first + b]);
      }
    }
    out[u] = round_to_bf16(acc);
  }
}

}  // namespace

void moe_routing_map(const int* topk_idx, const MoeDims& dims, int* map, cudaStream_t stream) {
  const std::size_t bytes = static_cast<std::size_t>(dims.experts) * dims.tokens * sizeof(int);
  KILN_CUDA_CHECK(cudaMemsetAsync(map, 0, bytes, stream));
  routing_map_kernel<<<grid_for(dims.choices()), kThreads, 0, stream>>>(topk_idx, shape_of(dims),
                                                                        map);
  KILN_CUDA_CHECK_LAUNCH();
}

std::size_t moe_scan_storage_bytes(int count) {
  std::size_t bytes = 0;
  KILN_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, static_cast<const int*>(nullptr),
                                                static_cast<int*>(nullptr), count));
  return bytes;
}

void moe_exclusive_scan(const int* in, int* out, int count, void* storage,
                        std::size_t storage_bytes, cudaStream_t stream) {
  KILN_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(storage, storage_bytes, in, out, count, stream));
}

void moe_expert_counts(const int* map, const int* scan, const MoeDims& dims, int* counts,
                       cudaStream_t stream) {
  expert_counts_kernel<<<(dims.experts + kThreads - 1) / kThreads, kThreads, 0, stream>>>(
      map, scan, shape_of(dims), counts);
  KILN_CUDA_CHECK_LAUNCH();
}

void moe_permute(const void* x, const int* topk_idx, const int* send_row, const MoeDims& dims,
                 void* send, cudaStream_t stream) {
  if (dims.choices() == 0) return;
  permute_kernel<<<static_cast<unsigned>(dims.choices()), kThreads, 0, stream>>>(
      static_cast<const uint4*>(x), topk_idx, send_row, shape_of(dims), static_cast<uint4*>(send));
  KILN_CUDA_CHECK_LAUNCH();
}

void moe_move_chunks(const void* in, void* out, const std::int64_t* chunks, int chunk_count,
                     std::int64_t rows, const MoeDims& dims, cudaStream_t stream) {
  if (rows <= 0) return;  // a rank may receive nothing
  const unsigned blocks = static_cast<unsigned>(std::min<std::int64_t>(rows, 65536));
  move_chunks_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const uint4*>(in),
                                                      static_cast<uint4*>(out), chunks, chunk_count,
                                                      rows, shape_of(dims).vectors);
  KILN_CUDA_CHECK_LAUNCH();
}

void moe_unpermute_weighted(const void* rows, const int* topk_idx, const float* topk_weights,
                            const int* send_row, const MoeDims& dims, void* out,
                            cudaStream_t stream) {
  const Shape s = shape_of(dims);
  unpermute_weighted_kernel<<<grid_for(static_cast<std::size_t>(s.tokens) * s.vectors), kThreads, 0,
                              stream>>>(static_cast<const uint4*>(rows), topk_idx, topk_weights,
                                        send_row, s, static_cast<uint4*>(out));
  KILN_CUDA_CHECK_LAUNCH();
}

void moe_count_positions(const int* topk_idx, const MoeDims& dims, const MoePeers& counts,
                         int* positions, cudaStream_t stream) {
  count_positions_kernel<<<dims.experts, kThreads, 0, stream>>>(topk_idx, shape_of(dims), counts,
                                                                dims.world, positions);
  KILN_CUDA_CHECK_LAUNCH();
}

void moe_slot_bases(comm::NvlinkCollectives& nvlink, const int* counts, const MoeDims& dims,
                    int* bases, cudaStream_t stream) {
  // One block: within the barrier's launch rules (kThreads >= world) on any GPU.
  const BasesArgs a{nvlink.next_barrier(), counts, shape_of(dims), bases};
  slot_bases_kernel<<<1, kThreads, 0, stream>>>(a);
  KILN_CUDA_CHECK_LAUNCH();
}

void moe_push_rows(const void* x, const int* topk_idx, const int* positions, const int* bases,
                   const MoeDims& dims, const MoePeers& recv, cudaStream_t stream) {
  const Shape s = shape_of(dims);
  push_rows_kernel<<<grid_for(static_cast<std::size_t>(s.tokens) * s.vectors), kThreads, 0,
                     stream>>>(static_cast<const uint4*>(x), topk_idx, positions, bases, s, recv);
  KILN_CUDA_CHECK_LAUNCH();
}

void moe_pull_combine(const MoePeers& y, const int* topk_idx, const float* topk_weights,
                      const int* positions, const int* bases, const MoeDims& dims, void* out,
                      cudaStream_t stream) {
  const Shape s = shape_of(dims);
  pull_combine_kernel<<<grid_for(static_cast<std::size_t>(s.tokens) * s.vectors), kThreads, 0,
                        stream>>>(y, topk_idx, topk_weights, positions, bases, s,
                                  static_cast<uint4*>(out));
  KILN_CUDA_CHECK_LAUNCH();
}

}  // namespace kiln::problems
