// Pull-based all-gather and all-to-all over peer memory (see nvlink_collectives.hpp).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

#include <nccl.h>

#include "comm/all_reduce_choice.hpp"
#include "comm/communicator.hpp"
#include "comm/lamport_all_reduce.hpp"
#include "comm/nvlink_collectives.hpp"
#include "comm/peer_barrier.cuh"
#include "comm/rank_timing.hpp"
#include "core/cuda_check.hpp"
#include "core/error.hpp"
#include "core/half_float.cuh"

namespace kiln::comm {
namespace {

using Barrier = PeerBarrier;
static_assert(NvlinkCollectives::kMaxWorld == PeerBarrier::kMaxWorld &&
              NvlinkCollectives::kMaxWorld == LamportArgs::kMaxWorld);
static_assert(NvlinkCollectives::kMaxBlocks == PeerBarrier::kMaxBlocks);

struct PullArgs {
  Barrier sync;
  const char* sources[NvlinkCollectives::kMaxWorld];  // the ranks read from, in output order
  int source_count;
  // The grid reads sources[(k + rotation) % source_count] k-th: all-gathers and all-to-alls
  // start each rank at its next peer, so the ranks do not all read one peer at a time (its
  // NVLink egress then bounds every reader: 4-rank all-gather of 16 MiB, 458 us against NCCL's
  // 192, 4xH200 2026-11-27).
  int rotation;
  std::size_t block_bytes;    // per source
  std::size_t source_offset;  // into every source
  char* out;
};

// Vectors each thread has in flight per pass of the grid: one dependent load per pass left 4-rank
// all-gathers of 16 MiB at 112 GB/s, latency-bound (4xH200, 2026-11-27, 448 us against NCCL's 195).
constexpr int kPullUnroll = 4;

__global__ void __launch_bounds__(512) pull_kernel(PullArgs a) {
  peer_barrier(a.sync);
  const std::size_t vectors_per_block = a.block_bytes / 16;
  const std::size_t total = vectors_per_block * a.source_count;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t first = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
       first < total; first += kPullUnroll * stride) {
    uint4 value[kPullUnroll];
#pragma unroll
    for (int u = 0; u < kPullUnroll; ++u) {  // every load issued before any store
      const std::size_t v = first + u * stride;
      if (v >= total) break;
      const int source = (static_cast<int>(v / vectors_per_block) + a.rotation) % a.source_count;
      value[u] = load_peer(reinterpret_cast<const uint4*>(a.sources[source] + a.source_offset) +
                           v % vectors_per_block);
    }
#pragma unroll
    for (int u = 0; u < kPullUnroll; ++u) {
      const std::size_t v = first + u * stride;
      if (v >= total) break;
      const int source = (static_cast<int>(v / vectors_per_block) + a.rotation) % a.source_count;
      reinterpret_cast<uint4*>(a.out + source * a.block_bytes)[v % vectors_per_block] = value[u];
    }
  }
}

struct SumArgs {
  Barrier sync;
  const char* sources[NvlinkCollectives::kMaxWorld];  // every rank
  std::size_t offset_bytes;                           // into every source
  std::size_t vectors;                                // 16-byte vectors to produce
  char* out;
};

// The sum of vector `v` over every rank's `sources[r] + offset_bytes`, in rank order (so every
// rank computes the same bits), added in fp32 (int32: exact integer adds) and rounded once.
template <typename T>
__device__ __forceinline__ uint4 sum_vector(const char* const* sources, int world,
                                            std::size_t offset_bytes, std::size_t v) {
  constexpr int kElems = 16 / sizeof(T);
  using Acc = std::conditional_t<std::is_same_v<T, int>, int, float>;
  // Every rank's vector requested before any is added: one round trip, not `world`.
  uint4 raw[NvlinkCollectives::kMaxWorld];
#pragma unroll
  for (int r = 0; r < NvlinkCollectives::kMaxWorld; ++r) {
    if (r < world)
      raw[r] = load_peer(reinterpret_cast<const uint4*>(sources[r] + offset_bytes) + v);
  }
  Acc acc[kElems] = {};
#pragma unroll
  for (int r = 0; r < NvlinkCollectives::kMaxWorld; ++r) {
    if (r >= world) break;
    const T* e = reinterpret_cast<const T*>(&raw[r]);
#pragma unroll
    for (int i = 0; i < kElems; ++i) {
      if constexpr (std::is_same_v<T, int>)
        acc[i] += e[i];
      else
        acc[i] += core::to_float(e[i]);
    }
  }
  uint4 packed;
  T* out = reinterpret_cast<T*>(&packed);
#pragma unroll
  for (int i = 0; i < kElems; ++i) {
    if constexpr (std::is_same_v<T, __nv_bfloat16>)
      out[i] = __float2bfloat16_rn(acc[i]);
    else if constexpr (std::is_same_v<T, __half>)
      out[i] = __float2half_rn(acc[i]);
    else
      out[i] = static_cast<T>(acc[i]);
  }
  return packed;
}

// One-shot sum of every rank's vectors.
template <typename T>
__global__ void __launch_bounds__(512) sum_kernel(SumArgs a) {
  peer_barrier(a.sync);
  for (std::size_t v = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
       v < a.vectors; v += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    reinterpret_cast<uint4*>(a.out)[v] = sum_vector<T>(a.sources, a.sync.world, a.offset_bytes, v);
  }
}

struct TwoShotArgs {
  Barrier sync;                     // the inputs are ready
  unsigned long long gather_epoch;  // the second barrier: every segment is reduced
  const char* sources[NvlinkCollectives::kMaxWorld];  // every rank's send buffer
  const char* stages[NvlinkCollectives::kMaxWorld];   // every rank's staging buffer
  char* my_stage;
  int root;  // < 0: sum every rank's vector (all-reduce); else copy root's (broadcast)
  unsigned long long delay_ns;  // tests: this rank spins this long before phase 1
  std::size_t vectors;          // 16-byte vectors in all
  std::size_t segment;          // vectors a rank reduces (the last segment may be shorter)
  char* out;
};

// Two-shot sum (or broadcast: root >= 0). Thread (b, t) of rank r reduces (copies from the root)
// segment r's vectors at its grid-stride offsets into r's staging buffer; after the second barrier
// thread (b, t) of every rank reads exactly the offsets that thread (b, t) of the owner wrote, so a
// barrier per block (not per grid) suffices. A broadcast this way takes (W-1)/W * S of the root's
// NVLink egress in each phase instead of (W-1) * S when every rank reads the root whole.
template <typename T>
__global__ void __launch_bounds__(512) two_shot_kernel(TwoShotArgs a) {
  peer_barrier(a.sync);
  if (a.delay_ns > 0) {  // tests: peers reach phase 2 long before this rank's segment is ready
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < a.delay_ns);
  }
  const int world = a.sync.world, rank = a.sync.rank;
  const std::size_t first = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  auto segment_end = [&](int r) {
    const std::size_t end = (r + 1) * a.segment;
    return end < a.vectors ? end : a.vectors;
  };
  for (std::size_t v = rank * a.segment + first; v < segment_end(rank); v += step) {
    const uint4 sum = a.root < 0 ? sum_vector<T>(a.sources, world, 0, v)
                                 : load_peer(reinterpret_cast<const uint4*>(a.sources[a.root]) + v);
    reinterpret_cast<uint4*>(a.my_stage)[v] = sum;
    reinterpret_cast<uint4*>(a.out)[v] = sum;
  }
  // Every thread's staging stores precede the flag's release (peer_barrier releases from one
  // thread per peer; the CTA barrier orders the other threads' stores before it).
  __syncthreads();
  Barrier gather = a.sync;
  gather.epoch = a.gather_epoch;
  peer_barrier(gather);
  // Every peer's vector at this offset requested before any is stored (one round trip per pass,
  // not world - 1); peers in a rotated order, so no owner is read by every rank at once.
  for (std::size_t offset = first; offset < a.segment; offset += step) {
    uint4 value[NvlinkCollectives::kMaxWorld];
#pragma unroll
    for (int k = 1; k < NvlinkCollectives::kMaxWorld; ++k) {
      const int r = (rank + k) % world;
      const std::size_t v = r * a.segment + offset;
      if (k < world && v < segment_end(r))
        value[k] = load_peer(reinterpret_cast<const uint4*>(a.stages[r]) + v);
    }
#pragma unroll
    for (int k = 1; k < NvlinkCollectives::kMaxWorld; ++k) {
      const int r = (rank + k) % world;
      const std::size_t v = r * a.segment + offset;
      if (k < world && v < segment_end(r)) reinterpret_cast<uint4*>(a.out)[v] = value[k];
    }
  }
}

// Calls f(T{}) with the element type of `dtype`.
template <typename F>
void with_element_type(core::DType dtype, F&& f) {
  switch (dtype) {
    case core::DType::kBf16:
      return f(__nv_bfloat16{});
    case core::DType::kFp16:
      return f(__half{});
    case core::DType::kFp32:
      return f(float{});
    case core::DType::kInt32:
      return f(int{});
  }
}

}  // namespace

NvlinkCollectives::NvlinkCollectives(Communicator& comm, std::size_t max_send_bytes)
    : comm_(&comm), rank_(comm.rank()), world_(comm.size()) {
  if (world_ > kMaxWorld) {
    throw UsageError("NVLink collectives: " + std::to_string(world_) + " ranks; at most " +
                     std::to_string(kMaxWorld));
  }
  KILN_CUDA_CHECK(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, comm.device()));
  // Block b pairs with block b of every peer, so every rank must launch the same grid: size it
  // from the smallest SM count of the ranks.
  {
    int* device_sms = nullptr;
    KILN_CUDA_CHECK(cudaMalloc(&device_sms, sizeof(int)));
    KILN_CUDA_CHECK(cudaMemcpy(device_sms, &sms_, sizeof(int), cudaMemcpyHostToDevice));
    cudaStream_t stream = nullptr;
    comm.call("NVLink collectives: SM count", [&] {
      return ncclAllReduce(device_sms, device_sms, 1, ncclInt32, ncclMin, comm.get(), stream);
    });
    comm.wait(stream, "NVLink collectives: SM count");
    KILN_CUDA_CHECK(cudaMemcpy(&sms_, device_sms, sizeof(int), cudaMemcpyDeviceToHost));
    KILN_CUDA_CHECK(cudaFree(device_sms));
  }
  send_ = std::make_unique<PeerMemory>(comm, max_send_bytes, "NVLink collective send buffer");
  flags_ = std::make_unique<PeerMemory>(comm, sizeof(unsigned long long) * kMaxWorld * kMaxBlocks,
                                        "NVLink collective flags");
}

PeerBarrier NvlinkCollectives::next_barrier() {
  PeerBarrier b{};
  b.my_flags = static_cast<unsigned long long*>(flags_->local());
  for (int r = 0; r < world_; ++r)
    b.peer_flags[r] = static_cast<unsigned long long*>(flags_->peer(r));
  b.rank = rank_;
  b.world = world_;
  b.epoch = ++epoch_;
  return b;
}

void NvlinkCollectives::start_epochs_after(unsigned long long epoch) {
  if (epoch < epoch_) {
    throw UsageError("NVLink collectives: epochs only grow (" + std::to_string(epoch) + " < " +
                     std::to_string(epoch_) + ")");
  }
  epoch_ = epoch;
}

namespace {

__global__ void barrier_kernel(PeerBarrier b) {
  peer_barrier(b);
}

}  // namespace

void NvlinkCollectives::barrier(cudaStream_t stream) {
  barrier_kernel<<<1, 32, 0, stream>>>(next_barrier());
  KILN_CUDA_CHECK_LAUNCH();
}

int NvlinkCollectives::blocks_for(std::size_t vectors) const {
  // One 16-byte vector per thread while the grid fits on the SMs: every remote load is issued at
  // once (a thread's loads in a loop wait one NVLink round trip each: 4 per thread cost the
  // 64-256 KiB sizes 3-4 us on 2xH200, suite run 2). At most one block per SM, all resident: the
  // barrier needs every block of every rank running at once.
  return static_cast<int>(std::max<std::size_t>(
      1, std::min<std::size_t>(std::min(sms_, kMaxBlocks), (vectors + 511) / 512)));
}

namespace {

void check_multiple_of_16(std::size_t bytes, const char* what) {
  if (bytes % 16 != 0) {
    throw UsageError(std::string("NVLink collectives: ") + what + " of " + std::to_string(bytes) +
                     " bytes is not a multiple of 16");
  }
}

}  // namespace

void NvlinkCollectives::pull(const std::vector<int>& sources, std::size_t offset,
                             std::size_t block_bytes, void* recv, cudaStream_t stream,
                             int rotation) {
  check_multiple_of_16(block_bytes, "a block");
  check_multiple_of_16(offset, "an offset");
  if (offset + block_bytes > send_->bytes()) {
    throw UsageError("NVLink collectives: reading " + std::to_string(offset + block_bytes) +
                     " bytes of a " + std::to_string(send_->bytes()) + "-byte send buffer");
  }
  PullArgs a{};
  a.sync = next_barrier();
  for (std::size_t k = 0; k < sources.size(); ++k)
    a.sources[k] = static_cast<const char*>(send_->peer(sources[k]));
  a.source_count = static_cast<int>(sources.size());
  a.rotation = rotation % a.source_count;
  a.block_bytes = block_bytes;
  a.source_offset = offset;
  a.out = static_cast<char*>(recv);
  pull_kernel<<<blocks_for(block_bytes / 16 * sources.size()), 512, 0, stream>>>(a);
  KILN_CUDA_CHECK_LAUNCH();
}

void NvlinkCollectives::pull_sum(core::DType dtype, std::size_t offset_bytes, std::size_t count,
                                 void* recv, cudaStream_t stream) {
  const std::size_t bytes = count * core::dtype_size(dtype);
  check_multiple_of_16(bytes, "a reduction");
  check_multiple_of_16(offset_bytes, "an offset");
  if (offset_bytes + bytes > send_->bytes()) {
    throw UsageError("NVLink collectives: reducing " + std::to_string(offset_bytes + bytes) +
                     " bytes of a " + std::to_string(send_->bytes()) + "-byte send buffer");
  }
  SumArgs a{};
  a.sync = next_barrier();
  for (int r = 0; r < world_; ++r) {
    a.sources[r] = static_cast<const char*>(send_->peer(r));
  }
  a.offset_bytes = offset_bytes;
  a.vectors = bytes / 16;
  a.out = static_cast<char*>(recv);
  const int blocks = blocks_for(a.vectors);
  with_element_type(
      dtype, [&](auto element) { sum_kernel<decltype(element)><<<blocks, 512, 0, stream>>>(a); });
  KILN_CUDA_CHECK_LAUNCH();
}

void NvlinkCollectives::reserve_two_shot() {
  if (!stage_) {
    stage_ = std::make_unique<PeerMemory>(*comm_, send_->bytes(), "NVLink two-shot staging");
  }
}

void NvlinkCollectives::reserve_lamport(std::size_t max_bytes) {
  if (max_bytes == 0) throw UsageError("NVLink collectives: a Lamport capacity of 0 bytes");
  const std::size_t capacity = (max_bytes + 15) / 16 * 16;
  if (lamport_) {
    if (capacity > lamport_capacity_) {
      throw UsageError("NVLink collectives: Lamport buffers of " +
                       std::to_string(lamport_capacity_) + " bytes are reserved; " +
                       std::to_string(capacity) + " asked (reserve the largest first)");
    }
    return;
  }
  // Every rank lays out every peer's slots with its own capacity: they must agree.
  const double largest = max_over_ranks(*comm_, static_cast<double>(capacity), nullptr);
  const double smallest = -max_over_ranks(*comm_, -static_cast<double>(capacity), nullptr);
  if (largest != smallest) {
    throw UsageError("NVLink collectives: the ranks reserve different Lamport capacities (" +
                     std::to_string(static_cast<std::size_t>(smallest)) + " to " +
                     std::to_string(static_cast<std::size_t>(largest)) + " bytes)");
  }
  lamport_capacity_ = capacity;
  const std::size_t bytes = LamportArgs::kBuffers * world_ * lamport_capacity_;
  lamport_ = std::make_unique<PeerMemory>(*comm_, bytes, "NVLink Lamport buffers");
  fill_lamport_empty(lamport_->local(), bytes, nullptr);
  KILN_CUDA_CHECK(cudaDeviceSynchronize());
  // No peer may push before every rank's buffers are empty.
  (void)max_over_ranks(*comm_, 0.0, nullptr);
}

bool NvlinkCollectives::lamport_fits(core::DType dtype, std::size_t bytes) const {
  return lamport_ && (dtype == core::DType::kBf16 || dtype == core::DType::kFp16) &&
         bytes % 16 == 0 && bytes <= lamport_capacity_;
}

void NvlinkCollectives::lamport(core::DType dtype, std::size_t count, void* recv,
                                cudaStream_t stream) {
  const std::size_t bytes = count * core::dtype_size(dtype);
  if (!lamport_fits(dtype, bytes)) {
    throw UsageError(
        "NVLink collectives: a Lamport all-reduce needs reserve_lamport() of at least " +
        std::to_string(bytes) + " bytes, bf16 or fp16, and a multiple of 16 bytes (capacity " +
        std::to_string(lamport_capacity_) + ")");
  }
  LamportArgs a{};
  for (int r = 0; r < world_; ++r) a.slots[r] = static_cast<char*>(lamport_->peer(r));
  a.my_slots = static_cast<char*>(lamport_->local());
  a.input = static_cast<const char*>(send_->local());
  a.out = static_cast<char*>(recv);
  a.capacity = lamport_capacity_;
  a.vectors = bytes / 16;
  a.buffer = static_cast<int>(lamport_calls_++ % LamportArgs::kBuffers);
  a.rank = rank_;
  a.world = world_;
  launch_lamport_all_reduce(a, dtype, blocks_for(a.vectors), stream);
}

void NvlinkCollectives::two_shot(core::DType dtype, std::size_t count, int root, void* recv,
                                 cudaStream_t stream) {
  if (!stage_) {
    throw UsageError(
        "NVLink collectives: a two-shot all-reduce or broadcast needs "
        "reserve_two_shot() first");
  }
  const std::size_t bytes = count * core::dtype_size(dtype);
  check_multiple_of_16(bytes, root < 0 ? "a reduction" : "a broadcast");
  if (bytes > send_->bytes()) {
    throw UsageError("NVLink collectives: moving " + std::to_string(bytes) + " bytes of a " +
                     std::to_string(send_->bytes()) + "-byte send buffer");
  }
  TwoShotArgs a{};
  a.sync = next_barrier();
  a.gather_epoch = next_barrier().epoch;
  a.delay_ns = debug_two_shot_delay_ns_;
  for (int r = 0; r < world_; ++r) {
    a.sources[r] = static_cast<const char*>(send_->peer(r));
    a.stages[r] = static_cast<const char*>(stage_->peer(r));
  }
  a.my_stage = static_cast<char*>(stage_->local());
  a.root = root;
  a.vectors = bytes / 16;
  a.segment = (a.vectors + world_ - 1) / world_;
  a.out = static_cast<char*>(recv);
  const int blocks = blocks_for(a.segment);
  with_element_type(dtype, [&](auto element) {
    two_shot_kernel<decltype(element)><<<blocks, 512, 0, stream>>>(a);
  });
  KILN_CUDA_CHECK_LAUNCH();
}

void NvlinkCollectives::all_gather(std::size_t bytes, void* recv, cudaStream_t stream,
                                   std::size_t offset) {
  std::vector<int> all(world_);
  for (int r = 0; r < world_; ++r) all[r] = r;
  pull(all, offset, bytes, recv, stream, rank_ + 1);
}

void NvlinkCollectives::all_to_all(std::size_t block_bytes, void* recv, cudaStream_t stream) {
  std::vector<int> all(world_);
  for (int r = 0; r < world_; ++r) all[r] = r;
  pull(all, rank_ * block_bytes, block_bytes, recv, stream, rank_ + 1);
}

void NvlinkCollectives::broadcast(std::size_t bytes, int root, void* recv, cudaStream_t stream) {
  check_root(root);
  // Split into a scatter and an all-gather where one source would bound every reader (from three
  // ranks on; at 4 ranks the whole-root pull fell below NCCL from 1 MiB, 4xH200 2026-11-27).
  constexpr std::size_t kTwoPhaseFromBytes = 1 << 20;
  if (stage_ && world_ >= 3 && bytes >= kTwoPhaseFromBytes && bytes % 16 == 0)
    return two_shot(core::DType::kInt32, bytes / 4, root, recv, stream);
  pull({root}, 0, bytes, recv, stream);
}

void NvlinkCollectives::scatter(std::size_t block_bytes, int root, void* recv,
                                cudaStream_t stream) {
  check_root(root);
  pull({root}, rank_ * block_bytes, block_bytes, recv, stream);
}

void NvlinkCollectives::check_root(int root) const {
  if (root < 0 || root >= world_) {
    throw UsageError("NVLink collectives: root " + std::to_string(root) + " outside 0.." +
                     std::to_string(world_ - 1));
  }
}

void NvlinkCollectives::all_reduce(core::DType dtype, std::size_t count, void* recv,
                                   cudaStream_t stream, AllReduceAlgorithm algorithm) {
  // Nothing to move, and no call taken: an empty Lamport call would let a peer run ahead by
  // more than the buffers allow (it waits for nobody), and every rank returns here alike.
  if (count == 0) return;
  if (recv == send_->local() && algorithm != AllReduceAlgorithm::kLamport) {
    throw UsageError(
        "NVLink collectives: an all-reduce into its own send buffer (peers read it in place)");
  }
  const std::size_t bytes = count * core::dtype_size(dtype);
  if (algorithm == AllReduceAlgorithm::kAuto)
    algorithm =
        choose_all_reduce(world_, bytes, dtype, {lamport_ ? lamport_capacity_ : 0, !!stage_});
  if (algorithm == AllReduceAlgorithm::kLamport) return lamport(dtype, count, recv, stream);
  if (algorithm == AllReduceAlgorithm::kTwoShot) return two_shot(dtype, count, -1, recv, stream);
  pull_sum(dtype, 0, count, recv, stream);
}

void NvlinkCollectives::reduce_scatter(core::DType dtype, std::size_t block_count, void* recv,
                                       cudaStream_t stream) {
  pull_sum(dtype, rank_ * block_count * core::dtype_size(dtype), block_count, recv, stream);
}

}  // namespace kiln::comm
