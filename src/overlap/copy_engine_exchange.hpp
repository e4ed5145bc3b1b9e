// Moving a finished wave group to the other ranks with the GPU's copy engines instead of an NCCL
// kernel: the communication then holds no SM, so the GEMM keeps every SM (no CTA cap, no wave
// lost to it) and cannot slow the transfer down by occupying them. Each rank owns one buffer of
// `world` regions; rank s writes its contribution into region s of every destination rank with
// cudaMemcpyAsync on mapped peer memory (CUDA IPC), and the reduction over the regions is left
// to the post-communication reorder kernel, which reads every region anyway (and this rank's
// own part straight from the GEMM's slot buffer: region `rank` stays unused).
//
// Synchronisation needs no SM either, only stream memory operations on per-rank flag words:
//   arrived[s]: rank s's copies of run e into this rank are complete (written by s, after them);
//   freed[d]:   rank d has finished reading run e from its buffer (written by d after its reorder),
// so rank s waits freed[d] >= e-1 before it overwrites rank d's region s in run e. A flag is set
// remotely by a 4-byte copy of a local word that a stream write has just set, in stream order
// after the data copies (the copy engine completes a copy before the next one starts; with a
// copy stream per peer, GemmCollective makes the flag's stream wait for every peer stream's copies
// first).
// Idea: DMA-engine offload of collectives to avoid compute interference (e.g. ConCCL,
// arXiv:2412.14335); FlashOverlap's signaling and reordering stay as they are.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <memory>

#include "comm/peer_memory.hpp"
#include "overlap/group_wait.hpp"

namespace kiln::overlap {

class CopyEngineExchange {
 public:
  // Collective over `comm`: allocates this rank's buffer (world x region_bytes) and flags, and
  // maps every peer's through CUDA IPC (peer access is enabled on the way).
  // `label_offset` is added to the spin kernel's wait labels (1000 + peer for "freed", 2000 + peer
  // for "arrived"), so that two exchanges of one operation tell apart.
  CopyEngineExchange(comm::Communicator& comm, std::size_t region_bytes, int label_offset = 0);
  // Bytes of the flag words beside the buffer, for `world` ranks.
  static std::size_t flag_bytes(int world) { return sizeof(unsigned) * (2 * world + 2); }
  ~CopyEngineExchange();
  CopyEngineExchange(const CopyEngineExchange&) = delete;
  CopyEngineExchange& operator=(const CopyEngineExchange&) = delete;

  int rank() const { return rank_; }
  int world() const { return world_; }
  std::size_t region_bytes() const { return region_bytes_; }
  // Region `source` of this rank's own buffer (what `source` sent here).
  void* local_region(int source) const;

  // On `stream`, before run `epoch` writes into any peer: wait until every peer has read run
  // epoch-1 out of its buffer.
  void wait_until_peers_freed(unsigned epoch, cudaStream_t stream);
  // Copies `bytes` from local `src` to byte `offset` of this rank's region in `destination`'s
  // buffer (destination may be this rank: a local copy, also on a copy engine).
  void copy_to(int destination, std::size_t offset, const void* src, std::size_t bytes,
               cudaStream_t stream);
  // After the run's copies, on the same stream: tell every peer they are complete.
  void announce_arrival(unsigned epoch, cudaStream_t stream);
  // Reader side, on the stream that reduces: wait until every peer's copies of `epoch` landed.
  void wait_for_arrivals(unsigned epoch, cudaStream_t stream);
  // Reader side, after the reduction: tell every peer it may overwrite its region again.
  void announce_freed(unsigned epoch, cudaStream_t stream);

  // How the flag waits wait (the operation's detected or forced method) and, for the spin kernel,
  // after how many seconds it traps. Stream memory waits by default.
  void set_wait_method(WaitMethod method, double timeout_seconds);
  // After a run of `epoch` stopped making progress: names each peer whose flag this rank still
  // waits for, and raises those flags to their targets (arrived: `arrivals`, the run's last
  // arrival value, which is `epoch` where arrivals count runs; freed: epoch - 1) so that the
  // stream waits end (the run's output is then wrong). "" when no flag is behind.
  std::string release_stuck_flags(unsigned epoch, unsigned arrivals);

 private:
  enum Flag { kArrived = 0, kFreed = 1 };
  unsigned* flag_word(int rank, Flag flag, int index) const;
  void set_remote_flags(Flag flag, unsigned epoch, unsigned* outgoing, cudaStream_t stream);

  WaitMethod wait_method_ = WaitMethod::kStreamMemOp;
  double wait_timeout_s_ = kDefaultCounterWaitSeconds;
  int rank_ = 0, world_ = 1, label_offset_ = 0;
  std::size_t region_bytes_ = 0;
  std::unique_ptr<comm::PeerMemory> buffer_;  // world regions
  std::unique_ptr<comm::PeerMemory> flags_;   // arrived[world] | freed[world] | outgoing words (2)
};

}  // namespace kiln::overlap
