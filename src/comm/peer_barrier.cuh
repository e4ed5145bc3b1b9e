// The device-side barrier of kiln's peer-memory kernels (comm/nvlink_collectives.hpp), for any
// kernel that reads or writes peers' memory: block b of this rank stores the call's epoch into
// every peer's flag array (release, system scope) and waits until every peer's block b has stored
// it into its own (acquire). What a peer wrote before its kernel started is then visible.
//
// Rules for a kernel that calls peer_barrier(): every rank launches the same grid, of at most
// PeerBarrier::kMaxBlocks blocks, all resident at once (at most one block per SM of the smallest
// GPU), with at least `world` threads per block; epochs only grow (one per call, the same
// sequence on every rank). A peer that never arrives makes the kernel trap after 30 s, so the
// stream reports an error instead of spinning forever. Epochs and flags are 64-bit: a block index
// that a smaller grid leaves unused keeps an old flag, and with 32-bit epochs a flag 2^31 calls old
// would compare as ahead and let the block read data that is not ready (issue 18, defect 4).
#pragma once

namespace kiln::comm {

struct PeerBarrier {
  static constexpr int kMaxWorld = 8;
  static constexpr int kMaxBlocks = 132;
  unsigned long long* peer_flags[kMaxWorld];  // every rank's flag array ([world][kMaxBlocks])
  unsigned long long* my_flags;
  int rank, world;
  unsigned long long epoch;
};

constexpr unsigned long long kPeerBarrierTimeoutNs = 30ull * 1000 * 1000 * 1000;  // 30 s

__device__ __forceinline__ void peer_barrier(const PeerBarrier& b) {
  const int p = threadIdx.x;
  if (p < b.world && p != b.rank) {
    unsigned long long* remote = b.peer_flags[p] + b.rank * PeerBarrier::kMaxBlocks + blockIdx.x;
    asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(remote), "l"(b.epoch) : "memory");
    const unsigned long long* mine = b.my_flags + p * PeerBarrier::kMaxBlocks + blockIdx.x;
    unsigned long long start;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    unsigned long long seen;
    for (;;) {
      asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(seen) : "l"(mine) : "memory");
      if (seen >= b.epoch) break;  // 2^64 calls never wrap
      unsigned long long now;
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
      if (now - start > kPeerBarrierTimeoutNs) __trap();
    }
  }
  __syncthreads();
}

// Peer memory read once: bypass L1 (.cg), the data is not reused.
__device__ __forceinline__ uint4 load_peer(const void* address) {
  uint4 v;
  asm volatile("ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(address));
  return v;
}

}  // namespace kiln::comm
