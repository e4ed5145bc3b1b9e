// Ulysses all-to-all kernels (see ulysses_a2a_kernels.hpp): 16-byte vectors, one per thread per
// step; the index arithmetic maps an output vector to its source vector.
#include <cstdint>

#include "comm/peer_barrier.cuh"
#include "core/cuda_check.hpp"
#include "problems/ulysses_a2a_kernels.hpp"

namespace kiln::problems {
namespace {

struct Geometry {
  std::size_t head_vectors;  // 16-byte vectors per head
  int heads, local_heads, local_seq;
};

Geometry geometry_of(const UlyssesShape& s) {
  return {s.head_bytes / 16, s.heads, s.heads / s.world, s.local_seq};
}

__global__ void pack_kernel(const uint4* in, Geometry g, int world, uint4* send) {
  // Output order: [d][p][c][h][v]; the source is in[p][c][d * local_heads + h][v].
  const std::size_t per_dest =
      static_cast<std::size_t>(g.local_seq) * 3 * g.local_heads * g.head_vectors;
  const std::size_t total = per_dest * world;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t v = i % g.head_vectors;
    std::size_t rest = i / g.head_vectors;
    const int h = static_cast<int>(rest % g.local_heads);
    rest /= g.local_heads;
    const int c = static_cast<int>(rest % 3);
    rest /= 3;
    const std::size_t p = rest % g.local_seq;
    const int d = static_cast<int>(rest / g.local_seq);
    const std::size_t source =
        ((p * 3 + c) * g.heads + static_cast<std::size_t>(d) * g.local_heads + h) * g.head_vectors +
        v;
    send[i] = in[source];
  }
}

struct PullArgs {
  comm::PeerBarrier sync;
  const uint4* sources[comm::PeerBarrier::kMaxWorld];
  Geometry g;
  int rank;
  uint4* out;
};

__global__ void __launch_bounds__(512) pull_kernel(PullArgs a) {
  comm::peer_barrier(a.sync);
  const Geometry& g = a.g;
  const std::size_t row_vectors = static_cast<std::size_t>(3) * g.local_heads * g.head_vectors;
  const std::size_t per_source = static_cast<std::size_t>(g.local_seq) * row_vectors;
  const std::size_t total = per_source * a.sync.world;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    // Output order: [q][c][h][v] with q = s * local_seq + p.
    const std::size_t v = i % g.head_vectors;
    std::size_t rest = i / g.head_vectors;
    const int h = static_cast<int>(rest % g.local_heads);
    rest /= g.local_heads;
    const int c = static_cast<int>(rest % 3);
    const std::size_t q = rest / 3;
    const int s = static_cast<int>(q / g.local_seq);
    const std::size_t p = q % g.local_seq;
    const std::size_t source =
        ((p * 3 + c) * g.heads + static_cast<std::size_t>(a.rank) * g.local_heads + h) *
            g.head_vectors +
        v;
    a.out[i] = comm::load_peer(a.sources[s] + source);
  }
}

}  // namespace

void ulysses_pack(const void* in, const UlyssesShape& shape, void* send, cudaStream_t stream) {
  const Geometry g = geometry_of(shape);
  pack_kernel<<<1024, 256, 0, stream>>>(static_cast<const uint4*>(in), g, shape.world,
                                        static_cast<uint4*>(send));
  KILN_CUDA_CHECK_LAUNCH();
}

void ulysses_pull(comm::NvlinkCollectives& nvlink, const UlyssesShape& shape, int rank, void* out,
                  cudaStream_t stream) {
  PullArgs a{};
  a.g = geometry_of(shape);
  a.rank = rank;
  a.out = static_cast<uint4*>(out);
  for (int r = 0; r < shape.world; ++r)
    a.sources[r] = static_cast<const uint4*>(nvlink.send_peers()[r]);
  const std::size_t vectors = static_cast<std::size_t>(shape.local_seq) * shape.world * 3 *
                              (shape.heads / shape.world) * (shape.head_bytes / 16);
  const int blocks = nvlink.blocks_for(vectors);  // the same on every rank (peer barrier rule)
  a.sync = nvlink.next_barrier();
  pull_kernel<<<blocks, 512, 0, stream>>>(a);
  KILN_CUDA_CHECK_LAUNCH();
}

}  // namespace kiln::problems
