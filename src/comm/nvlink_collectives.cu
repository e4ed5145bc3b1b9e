// Pull-based all-gather and all-to-all over peer memory (see nvlink_collectives.hpp).
#include <algorithm>
#include <cstdint>
#include <string>

#include "comm/communicator.hpp"
#include "comm/nvlink_collectives.hpp"
#include "core/cuda_check.hpp"
#include "core/error.hpp"

namespace kiln::comm {
namespace {

struct PullArgs {
  const char* sources[NvlinkCollectives::kMaxWorld];   // every rank's send buffer (own included)
  unsigned* peer_flags[NvlinkCollectives::kMaxWorld];  // every rank's flag array
  unsigned* my_flags;
  int rank, world;
  unsigned epoch;
  std::size_t block_bytes;    // per source rank
  std::size_t source_offset;  // into every source (all-to-all: rank * block_bytes)
  char* out;
};

__global__ void __launch_bounds__(512) pull_kernel(PullArgs a) {
  // The barrier: thread p tells rank p that this block arrived, then waits for rank p's block.
  const int p = threadIdx.x;
  if (p < a.world && p != a.rank) {
    unsigned* remote = a.peer_flags[p] + a.rank * NvlinkCollectives::kMaxBlocks + blockIdx.x;
    asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(remote), "r"(a.epoch) : "memory");
    const unsigned* mine = a.my_flags + p * NvlinkCollectives::kMaxBlocks + blockIdx.x;
    unsigned seen;
    do {
      asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(seen) : "l"(mine) : "memory");
    } while (static_cast<int>(seen - a.epoch) < 0);
  }
  __syncthreads();
  // The copy: world blocks of block_bytes, 16 bytes per load, spread over the whole grid.
  const std::size_t vectors_per_block = a.block_bytes / 16;
  const std::size_t total = vectors_per_block * a.world;
  for (std::size_t v = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; v < total;
       v += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const int source = static_cast<int>(v / vectors_per_block);
    const std::size_t within = v - source * vectors_per_block;
    const uint4* from =
        reinterpret_cast<const uint4*>(a.sources[source] + a.source_offset) + within;
    uint4 value;
    // Peer memory read once: bypass L1 (.cg), the data is not reused.
    asm volatile("ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(value.x), "=r"(value.y), "=r"(value.z), "=r"(value.w)
                 : "l"(from));
    reinterpret_cast<uint4*>(a.out + source * a.block_bytes)[within] = value;
  }
}

}  // namespace

NvlinkCollectives::NvlinkCollectives(Communicator& comm, std::size_t max_send_bytes)
    : rank_(comm.rank()), world_(comm.size()) {
  if (world_ > kMaxWorld) {
    throw UsageError("NVLink collectives: " + std::to_string(world_) + " ranks; at most " +
                     std::to_string(kMaxWorld));
  }
  KILN_CUDA_CHECK(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, comm.device()));
  send_ = std::make_unique<PeerMemory>(comm, max_send_bytes, "NVLink collective send buffer");
  flags_ = std::make_unique<PeerMemory>(comm, sizeof(unsigned) * kMaxWorld * kMaxBlocks,
                                        "NVLink collective flags");
}

void NvlinkCollectives::pull(std::size_t block_bytes, bool source_offset_by_rank, void* recv,
                             cudaStream_t stream) {
  if (block_bytes % 16 != 0) {
    throw UsageError("NVLink collectives: " + std::to_string(block_bytes) +
                     " bytes per rank is not a multiple of 16");
  }
  const std::size_t read_end = (source_offset_by_rank ? world_ : 1) * block_bytes;
  if (read_end > send_->bytes()) {
    throw UsageError("NVLink collectives: " + std::to_string(read_end) +
                     " bytes to send, the buffer holds " + std::to_string(send_->bytes()));
  }
  PullArgs a{};
  for (int r = 0; r < world_; ++r) {
    a.sources[r] = static_cast<const char*>(send_->peer(r));
    a.peer_flags[r] = static_cast<unsigned*>(flags_->peer(r));
  }
  a.my_flags = static_cast<unsigned*>(flags_->local());
  a.rank = rank_;
  a.world = world_;
  a.epoch = ++epoch_;
  a.block_bytes = block_bytes;
  a.source_offset = source_offset_by_rank ? rank_ * block_bytes : 0;
  a.out = static_cast<char*>(recv);
  // Enough 512-thread blocks for 4 vectors per thread, at most one per SM (all resident: the
  // barrier needs every block of every rank running at once).
  const std::size_t vectors = block_bytes / 16 * world_;
  const int blocks = static_cast<int>(std::max<std::size_t>(
      1, std::min<std::size_t>(std::min(sms_, kMaxBlocks), (vectors + 2047) / 2048)));
  pull_kernel<<<blocks, 512, 0, stream>>>(a);
  KILN_CUDA_CHECK_LAUNCH();
}

void NvlinkCollectives::all_gather(std::size_t bytes, void* recv, cudaStream_t stream) {
  pull(bytes, false, recv, stream);
}

void NvlinkCollectives::all_to_all(std::size_t block_bytes, void* recv, cudaStream_t stream) {
  pull(block_bytes, true, recv, stream);
}

}  // namespace kiln::comm
