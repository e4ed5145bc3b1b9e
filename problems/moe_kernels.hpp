// Kernels of the expert-parallel MoE problems (moe_dispatch.cpp, moe_combine.cpp; layout and
// routing in moe_routing.hpp). Token rows are bf16 [rows][hidden], moved as 16-byte vectors;
// topk_idx [tokens][topk] int32, topk_weights [tokens][topk] fp32.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "problems/moe_routing.hpp"

namespace kiln::comm {
class NvlinkCollectives;
}

namespace kiln::problems {

// A buffer of every rank, as mapped on this one (peer memory).
struct MoePeers {
  static constexpr int kMaxWorld = 8;
  void* rank[kMaxWorld];
};

// --- The reference (Megatron-style: routing map, sort by expert, NCCL, sort chunks).

// map[e * tokens + t] = 1 when token t chose expert e, else 0.
void moe_routing_map(const int* topk_idx, const MoeDims& dims, int* map, cudaStream_t stream);
// Exclusive prefix sum of `count` ints (CUB); `storage` of moe_scan_storage_bytes(count).
std::size_t moe_scan_storage_bytes(int count);
void moe_exclusive_scan(const int* in, int* out, int count, void* storage,
                        std::size_t storage_bytes, cudaStream_t stream);
// counts[e] = tokens routed to e, from the map and its prefix sum.
void moe_expert_counts(const int* map, const int* scan, const MoeDims& dims, int* counts,
                       cudaStream_t stream);
// send[send_row[e * tokens + t]] = x[t] for every choice (t, e).
void moe_permute(const void* x, const int* topk_idx, const int* send_row, const MoeDims& dims,
                 void* send, cudaStream_t stream);
// out rows [to, to + rows) = in rows [from, from + rows) for each chunk ([chunk][3] int64,
// `from` ascending), `rows` rows in all.
void moe_move_chunks(const void* in, void* out, const std::int64_t* chunks, int chunk_count,
                     std::int64_t rows, const MoeDims& dims, cudaStream_t stream);
// out[t] = sum_j w[t][j] * rows[send_row[e_j * tokens + t]], fp32 in choice order, one rounding.
void moe_unpermute_weighted(const void* rows, const int* topk_idx, const float* topk_weights,
                            const int* send_row, const MoeDims& dims, void* out,
                            cudaStream_t stream);

// --- kiln's (peer memory, no NCCL, no host round trip).

// One block per expert e: positions[t * topk + j] for each choice of e = the number of earlier
// tokens of this rank that chose e; this rank's count of e stored at counts.rank[r][e] for every
// rank r (the caller points each at this rank's row of r's counts).
void moe_count_positions(const int* topk_idx, const MoeDims& dims, const MoePeers& counts,
                         int* positions, cudaStream_t stream);
// Passes `nvlink`'s next barrier (every rank's counts written), then from the local counts
// [world][experts]: bases[e] = the row where this rank's tokens for e start in e's rank's
// receive buffer (experts before e on that rank, then the sources before this rank).
void moe_slot_bases(comm::NvlinkCollectives& nvlink, const int* counts, const MoeDims& dims,
                    int* bases, cudaStream_t stream);
// Writes row x[t] into recv.rank[owner(e)] at row bases[e] + positions[t * topk + j] for every
// choice (t, j) of expert e; the caller then passes a barrier before the receivers read.
void moe_push_rows(const void* x, const int* topk_idx, const int* positions, const int* bases,
                   const MoeDims& dims, const MoePeers& recv, cudaStream_t stream);
// out[t] = sum_j w[t][j] * y.rank[owner(e_j)][bases[e_j] + positions[t * topk + j]], read over
// peer memory; the same arithmetic as moe_unpermute_weighted.
void moe_pull_combine(const MoePeers& y, const int* topk_idx, const float* topk_weights,
                      const int* positions, const int* bases, const MoeDims& dims, void* out,
                      cudaStream_t stream);

}  // namespace kiln::problems
