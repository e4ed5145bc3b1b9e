// Kernels of the Ulysses sequence->head all-to-all problem (problems/ulysses_qkv_a2a.cpp). A
// rank's input is its sequence shard of packed QKV, [S/W][3][heads][head_bytes]; its output is
// every position of the sequence for its head group, [S][3][heads/W][head_bytes].
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "comm/nvlink_collectives.hpp"

namespace kiln::problems {

struct UlyssesShape {
  int local_seq = 0;           // S / W
  int heads = 0;               // all heads
  int world = 1;               // W; heads / W per rank
  std::size_t head_bytes = 0;  // head_dim x element size, a multiple of 16
};

// Reference's pack: send[d][p][c][h] = in[p][c][d * heads/W + h], so that block d of the send
// buffer is what rank d receives from this rank (then one NCCL all-to-all).
void ulysses_pack(const void* in, const UlyssesShape& shape, void* send, cudaStream_t stream);

// kiln: one kernel, after the peer barrier, pulls out[q][c][h] = rank (q / (S/W))'s
// in[q % (S/W)][c][rank * heads/W + h] over peer memory in 16-byte vectors.
void ulysses_pull(comm::NvlinkCollectives& nvlink, const UlyssesShape& shape, int rank, void* out,
                  cudaStream_t stream);

}  // namespace kiln::problems
