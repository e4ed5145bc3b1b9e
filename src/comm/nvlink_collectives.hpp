// Device-side collectives over NVLink: every rank's send data lives in peer memory (CUDA IPC), and
// one kernel per call pulls the peers' blocks straight into the local output with 16-byte loads
// over NVLink, after one barrier: block b of each rank flags its arrival in every peer's memory
// (release, system scope) and waits for the peers' block b (acquire), so a peer's send data,
// written before its kernel started, is complete. No NCCL kernel, no protocol chunking: for
// messages of a few MiB and less, the cost is one launch, one flag round trip and the copy itself
// (NCCL takes tens of microseconds there). Idea: the one-shot custom all-reduce kernels of
// vLLM/TensorRT-LLM and ParallelKernelBench's symmetric-memory solutions; the code is kiln's.
//
// A barrier whose peer never arrives traps after 30 s (the stream then reports an error) rather
// than spinning forever. Every rank launches the same grid (sized by the smallest SM count).
//
// Contract: the send buffer is `send_buffer()` (symmetric: the same size on every rank). A rank
// must not change its send data until every rank's call that reads it has completed (the
// harness meets the ranks on the host between new inputs), since peers read it in place.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "comm/peer_memory.hpp"
#include "core/dtype.hpp"

namespace kiln::comm {

class Communicator;
struct PeerBarrier;  // comm/peer_barrier.cuh

// How all_reduce moves the data (both sum in rank order with fp32 accumulation, so both give
// the same bits):
//   kOneShot  every rank reads every peer's whole vector: one barrier, (W-1) * S NVLink bytes;
//   kTwoShot  rank r sums its 1/W segment from every peer into a peer-visible staging buffer,
//             then every rank pulls the other segments from their owners: 2(W-1)/W * S bytes
//             (half of one-shot's from four ranks on) for a second barrier; needs
//             reserve_two_shot();
//   kLamport  every rank pushes its vector into every rank's receive slots, whose empty elements
//             hold -0.0; each rank polls its own slots (comm/lamport_all_reduce.hpp): no barrier,
//             no remote read; bf16/fp16 up to the reserved capacity (reserve_lamport()), and -0.0
//             inputs count as +0.0.
//   kAuto     comm::choose_all_reduce (all_reduce_choice.hpp): Lamport for small 16-bit messages
//             where reserved, two-shot from three ranks and 1 MiB where reserved, else one-shot.
//             On 4xH200 (2026-11-27, docs/results/2026-11-27-h200-x4) two-shot took 19.4 against
//             22.9 us at 1 MiB and 92.9 against 171.4 us at 16 MiB, one-shot 13.2 against 16.9 us
//             at 256 KiB; at two ranks both move the same bytes and one-shot was as fast or faster.
enum class AllReduceAlgorithm { kAuto, kOneShot, kTwoShot, kLamport };

class NvlinkCollectives {
 public:
  static constexpr int kMaxWorld = 8;     // = PeerBarrier::kMaxWorld
  static constexpr int kMaxBlocks = 132;  // = PeerBarrier::kMaxBlocks
  // Collective over `comm`: maps `max_send_bytes` of send buffer and the barrier flags of every
  // rank. Throws kiln::UsageError above kMaxWorld ranks.
  NvlinkCollectives(Communicator& comm, std::size_t max_send_bytes);

  // Where this rank writes what it sends (max_send_bytes, peer-visible).
  void* send_buffer() const { return send_->local(); }
  std::size_t max_send_bytes() const { return send_->bytes(); }
  // Every rank's send buffer as mapped here (own included).
  const std::vector<void*>& send_peers() const { return send_->peers(); }

  // The send buffer contract: a call's kernel reads the peers' send buffers after its barrier and
  // no barrier follows it, so a peer may still be reading this rank's data from call k while this
  // rank's stream runs call k + 1. Data a caller writes for call k + 1 must therefore not overwrite
  // what call k sent: write alternate halves by call parity (a call's barrier proves every peer
  // finished the call before it), or add a barrier() after the call.

  // recv[j * bytes .. +bytes) = rank j's send_buffer()[offset .. offset + bytes). bytes and
  // offset % 16 == 0.
  void all_gather(std::size_t bytes, void* recv, cudaStream_t stream, std::size_t offset = 0);
  // recv[j * block .. +block) = rank j's send_buffer()[rank * block .. +block), block % 16 == 0.
  void all_to_all(std::size_t block_bytes, void* recv, cudaStream_t stream);
  // recv[0 .. bytes) = root's send_buffer()[0 .. bytes). From three ranks and 1 MiB up, and
  // when reserve_two_shot() was called: a scatter then an all-gather among the ranks.
  void broadcast(std::size_t bytes, int root, void* recv, cudaStream_t stream);
  // recv[0 .. block) = root's send_buffer()[rank * block .. +block).
  void scatter(std::size_t block_bytes, int root, void* recv, cudaStream_t stream);
  // Reductions (sum, fp32 accumulation for 16-bit types, one rounding, rank order: every rank
  // gets the same bits) by `algorithm` (see AllReduceAlgorithm): recv[0 .. count) = sum over ranks
  // of send_buffer()[0 .. count). recv must not be the send buffer (kLamport excepted); count 0
  // does nothing.
  void all_reduce(core::DType dtype, std::size_t count, void* recv, cudaStream_t stream,
                  AllReduceAlgorithm algorithm = AllReduceAlgorithm::kAuto);
  // Collective: maps a staging buffer of max_send_bytes on every rank, which kTwoShot and the
  // two-phase broadcast need.
  void reserve_two_shot();
  // Collective: maps the Lamport receive buffers (3 x world slots of `max_bytes`, rounded up to
  // 16) on every rank and empties them; kLamport takes messages up to `max_bytes`.
  void reserve_lamport(std::size_t max_bytes);
  // recv[0 .. block) = sum over ranks of send_buffer()[rank * block .. +block), block in elements.
  void reduce_scatter(core::DType dtype, std::size_t block_count, void* recv, cudaStream_t stream);

  // A barrier alone (one block): what every rank enqueued before it on its stream is done, and
  // its send data visible, when the work after it starts.
  void barrier(cudaStream_t stream);
  // The arguments of the next barrier, for a kernel of the caller's that reads or writes peer
  // memory and calls comm::peer_barrier() itself (see peer_barrier.cuh for the launch rules);
  // each call takes one epoch, so every rank must make the same sequence of calls.
  PeerBarrier next_barrier();
  // The next call takes epoch `epoch` + 1 (for tests that start near a 32-bit wrap). Every rank
  // must call it with the same value, before any call or in the same place of the sequence.
  // Throws kiln::UsageError for an epoch below the current one (epochs only grow).
  void start_epochs_after(unsigned long long epoch);
  // Tests only: this rank's two-shot calls (all-reduce, broadcast) spin `ns` after their first
  // barrier, so that a second barrier letting peers gather early would read stale segments.
  void debug_delay_two_shot(unsigned long long ns) { debug_two_shot_delay_ns_ = ns; }
  // Blocks a peer-memory kernel may launch for `vectors` 16-byte vectors (one per thread of 512
  // while the grid fits, at most one block per SM of the smallest GPU): the same on every rank.
  int blocks_for(std::size_t vectors) const;

 private:
  // Copies `sources` ranks' [offset, offset + block) into recv, one block each, in order; the
  // grid reads them starting at sources[rotation % size].
  void pull(const std::vector<int>& sources, std::size_t offset, std::size_t block_bytes,
            void* recv, cudaStream_t stream, int rotation = 0);
  void pull_sum(core::DType dtype, std::size_t offset_bytes, std::size_t count, void* recv,
                cudaStream_t stream);
  // The two-phase kernel: a sum of every rank's count elements (root < 0) or root's copy.
  void two_shot(core::DType dtype, std::size_t count, int root, void* recv, cudaStream_t stream);
  void lamport(core::DType dtype, std::size_t count, void* recv, cudaStream_t stream);
  bool lamport_fits(core::DType dtype, std::size_t bytes) const;
  void check_root(int root) const;
  Communicator* comm_;
  int rank_ = 0, world_ = 1;
  int sms_ = 0;
  unsigned long long epoch_ = 0;
  std::unique_ptr<PeerMemory> send_;
  std::unique_ptr<PeerMemory> flags_;    // [world][kMaxBlocks] arrival epochs, written by peers
  std::unique_ptr<PeerMemory> stage_;    // kTwoShot's reduced segments (reserve_two_shot())
  std::unique_ptr<PeerMemory> lamport_;  // kLamport's receive buffers (reserve_lamport())
  std::size_t lamport_capacity_ = 0;     // bytes per slot
  unsigned long long lamport_calls_ = 0;
  unsigned long long debug_two_shot_delay_ns_ = 0;
};

}  // namespace kiln::comm
