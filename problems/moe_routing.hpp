// What the expert-parallel MoE problems (moe_dispatch.cpp, moe_combine.cpp) share.
// Host routing: every rank's top-k experts and gate weights, rebuilt by any rank from (seed, rank)
// alone and skewed towards low-numbered experts, so per-expert and per-rank counts are uneven as
// in real routers; and the layout that follows from all ranks' choices. Expert e lives on rank
// e / (E/W); a rank's receive buffer is "expert-major": for each local expert, for each source
// rank, that source's tokens routed to it in token order.
// Device pieces: the inputs in peer memory, the reference's routing step (Megatron's all-to-all
// dispatcher: counts exchanged through NCCL, the host synchronised) and kiln's (counts exchanged
// through peer memory behind one device barrier).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "bench/problem.hpp"
#include "comm/nvlink_collectives.hpp"
#include "comm/peer_memory.hpp"
#include "core/device_buffer.hpp"

namespace kiln::problems {

struct MoeDims {
  int tokens = 0, hidden = 0, topk = 0, experts = 0, world = 1;
  int local_experts() const { return experts / world; }
  int owner(int expert) const { return expert / local_experts(); }
  std::size_t choices() const { return static_cast<std::size_t>(tokens) * topk; }
  std::size_t row_bytes() const { return static_cast<std::size_t>(hidden) * 2; }  // bf16
  // The most rows one rank can receive: every token of every rank sending it each choice that
  // can land there (the choices of a token are distinct, so at most min(k, E/W) of them).
  std::size_t capacity_rows() const;
};

// The kernels keep a few per-expert values in shared memory.
inline constexpr int kMoeMaxExperts = 1024;

// "decode" and "prefill", with dims tokens, hidden, topk, experts.
std::vector<bench::ProblemSize> moe_sizes();
MoeDims moe_dims(const bench::ProblemSize& size, int world);
// Throws kiln::UsageError (the suite skips the row on every rank) when `problem` cannot run these
// dims: experts not split evenly over the ranks, rows not whole 16-byte vectors, k > E, more than
// 8 ranks (peer memory), more than kMoeMaxExperts experts, or a dtype other than bf16.
void require_runnable(const MoeDims& dims, core::DType dtype, const std::string& problem,
                      const std::string& size);

// The seed of a rank's token rows (X in dispatch, Y in combine; core::fill_uniform).
std::uint64_t moe_rows_seed(std::uint64_t seed, int rank);

// One rank's routing: [token][choice], experts distinct per token, weights > 0 summing to 1.
struct MoeRouting {
  std::vector<int> experts;
  std::vector<float> weights;
};
MoeRouting make_routing(const MoeDims& dims, std::uint64_t seed, int rank);

struct MoeSlot {
  int rank = 0;          // the expert's rank
  std::int64_t row = 0;  // the row in that rank's receive buffer
};

// Every rank's routing and where every choice lands.
struct MoeLayout {
  std::vector<MoeRouting> routing;          // [source]
  std::vector<std::int64_t> counts;         // [source * experts + expert]
  std::vector<std::int64_t> received;       // [rank] rows received in all
  std::vector<std::vector<MoeSlot>> slots;  // [source][token * topk + choice]
};
MoeLayout make_layout(const MoeDims& dims, std::uint64_t seed);

// One contiguous run of rows moved between the source-major and expert-major orders.
struct MoeChunk {
  std::int64_t from = 0, to = 0, rows = 0;
};

// One rank's side of the reference's token exchange, from the counts it sends ([expert]: its
// tokens routed to each expert) and receives ([source][local expert]).
struct MoeExchangePlan {
  // [peer]: its rows in the send buffer (sorted by expert) and in the source-major receive buffer.
  std::vector<std::int64_t> send_rows, send_offset;
  std::vector<std::int64_t> recv_rows, recv_offset;
  std::int64_t received = 0;
  // The (source, local expert) chunks of the received rows, listed in the order of the buffer they
  // are read from (so `from` ascends): source-major -> expert-major when to_expert_major.
  std::vector<MoeChunk> chunks;
};
MoeExchangePlan moe_exchange_plan(const std::vector<int>& send_counts,
                                  const std::vector<int>& recv_counts, int world,
                                  bool to_expert_major);

// Rows that cross the interconnect, for the cost models: the busiest rank's, from one draw of
// the routing at a fixed seed (W*T tokens; the generator's expectation within a few percent at
// the preset sizes). Times are the max over ranks, so the busiest rank bounds them.
struct MoeTraffic {
  double sent_remote = 0;      // most rows a rank sends to other ranks
  double received_remote = 0;  // most rows a rank receives from other ranks
  double received = 0;         // most rows a rank receives in all (its own included)
};
MoeTraffic moe_traffic(const MoeDims& dims);

// ---------------------------------------------------------------------------------------------
// Device pieces shared by the two problems.

// This rank's inputs in one peer allocation (an outside candidate reads every rank's): the token
// rows (X or Y), then topk_idx [T][k] int32, then topk_weights [T][k] fp32.
class MoeInputs {
 public:
  MoeInputs(comm::Communicator& comm, std::size_t rows_bytes, std::size_t choices);
  void* rows() const { return memory_.local(); }
  const int* topk_idx() const;
  const float* topk_weights() const;
  // Every rank's token rows as mapped here.
  const std::vector<void*>& rows_peers() const { return memory_.peers(); }
  // Copies `routing` in and waits for the copies (the host vectors may change after).
  void upload(const MoeRouting& routing, cudaStream_t stream);
  void add_to(bench::CandidateBuffers& buffers) const;

 private:
  std::size_t rows_bytes_, choices_, idx_offset_, weights_offset_;
  comm::PeerMemory memory_;
};

// The reference's routing step, as Megatron's all-to-all token dispatcher takes it: a routing map
// (experts x tokens, 0/1), its prefix sum (each choice's row in the send buffer sorted by expert,
// so by destination rank and local expert, tokens in order), the tokens per expert, the counts
// exchanged with grouped ncclSend/ncclRecv, then the stream synchronised and the counts read on
// the host, which sizes the token exchange.
class MoeReferenceRouting {
 public:
  MoeReferenceRouting(bench::RankContext& context, const MoeDims& dims, bool to_expert_major);
  void run(const int* topk_idx);
  // After run(): [expert * tokens + token] the row of that choice in the expert-sorted order.
  const int* send_row() const { return scan_.as<int>(); }
  const MoeExchangePlan& plan() const { return plan_; }
  const std::int64_t* chunks() const { return chunks_.as<std::int64_t>(); }  // plan().chunks

 private:
  bench::RankContext& context_;
  MoeDims dims_;
  bool to_expert_major_;
  core::DeviceBuffer map_, scan_, scan_storage_, counts_, recv_counts_, chunks_;
  std::vector<int> send_counts_host_, recv_counts_host_;
  std::vector<std::int64_t> chunks_host_;
  MoeExchangePlan plan_;
};

// Grouped ncclSend/ncclRecv of bf16 rows: to each peer send_rows[p] rows from send_offset[p],
// from each peer recv_rows[p] rows into recv_offset[p].
void moe_exchange_rows(bench::RankContext& context, const MoeDims& dims, const void* send,
                       const std::vector<std::int64_t>& send_offset,
                       const std::vector<std::int64_t>& send_rows, void* recv,
                       const std::vector<std::int64_t>& recv_offset,
                       const std::vector<std::int64_t>& recv_rows);

// kiln's routing step, on the device with no host round trip: each expert's count and each
// choice's place among that expert's rows from this rank (moe_count_positions), the counts
// written into every rank's peer memory, then one barrier and this rank's first row in each
// expert's receive buffer (moe_slot_bases). The counts alternate between two halves by call, so a
// rank that runs ahead into its next call never overwrites counts a peer still reads.
class MoeDeviceRouting {
 public:
  MoeDeviceRouting(bench::RankContext& context, const MoeDims& dims);
  void run(const int* topk_idx);
  const int* positions() const { return positions_.as<int>(); }  // [token * topk + choice]
  const int* bases() const { return bases_.as<int>(); }          // [expert]
  comm::NvlinkCollectives& nvlink() { return nvlink_; }

 private:
  bench::RankContext& context_;
  MoeDims dims_;
  comm::NvlinkCollectives nvlink_;  // send buffer: counts [2][world][experts] int32
  core::DeviceBuffer positions_, bases_;
  unsigned calls_ = 0;
};

}  // namespace kiln::problems
