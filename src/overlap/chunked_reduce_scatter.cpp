// GEMM + ReduceScatter by destination chunks (see chunked_reduce_scatter.hpp).
#include "overlap/chunked_reduce_scatter.hpp"

#include <fmt/format.h>

#include <cstdint>

#include "core/cuda_check.hpp"
#include "core/error.hpp"
#include "core/sleep.hpp"
#include "overlap/group_wait.hpp"
#include "overlap/part_sum.hpp"

namespace kiln::overlap {

namespace {
// Distinct from the runtime's exchanges and the tuner's in the spin kernel's wait labels.
constexpr int kLabels = 8000;
// How long the caller's stream waits before its first chunk (see the header): async-TP sleeps
// 100 cycles for the same purpose; the sleep kernel's step is ~2 us.
constexpr std::uint64_t kSideFirstNanoseconds = 2000;
}  // namespace

std::string ChunkedReduceScatter::can_implement(const GemmShape& shape, core::DType dtype,
                                                int world) {
  if (dtype != core::DType::kBf16 && dtype != core::DType::kFp16)
    return "chunked ReduceScatter: bf16 or fp16 only";
  if (world < 1 || world > PartList::kMaxParts)
    return fmt::format("chunked ReduceScatter: 1..{} ranks, got {}", PartList::kMaxParts, world);
  if (shape.m < 1 || shape.n < 1 || shape.k < 1) return "chunked ReduceScatter: an empty shape";
  if (shape.m % world != 0)
    return fmt::format("chunked ReduceScatter: M = {} does not split into {} chunks", shape.m,
                       world);
  // sum_parts reads and writes whole 16-byte vectors: 8 two-byte elements per chunk row group.
  if ((static_cast<long long>(shape.m / world) * shape.n) % 8 != 0)
    return fmt::format("chunked ReduceScatter: a chunk of {} x {} is not whole 16-byte vectors",
                       shape.m / world, shape.n);
  return "";
}

std::size_t ChunkedReduceScatter::workspace_bytes(const GemmShape& shape, core::DType dtype,
                                                  int world, int compute_streams) {
  if (compute_streams != 1 && compute_streams != 2)
    throw UsageError(fmt::format("chunked ReduceScatter: compute_streams must be 1 or 2, got {}",
                                 compute_streams));
  if (const std::string why = can_implement(shape, dtype, world); !why.empty())
    throw UsageError(why);
  const std::size_t chunk = static_cast<std::size_t>(shape.m / world) * shape.n *
                            static_cast<std::size_t>(core::dtype_size(dtype));
  return static_cast<std::size_t>(world + 3) * chunk + CopyEngineExchange::flag_bytes(world) +
         static_cast<std::size_t>(compute_streams) * CublasGemm::kWorkspaceBytes;
}

ChunkedReduceScatter::ChunkedReduceScatter(comm::Communicator& comm, const GemmShape& shape,
                                           core::DType dtype, WeightLayout layout, int device_sms,
                                           bool force_spin_wait, int compute_streams)
    : rank_(comm.rank()),
      world_(comm.size()),
      device_sms_(device_sms),
      compute_streams_(compute_streams),
      shape_(shape),
      dtype_(dtype),
      layout_(layout),
      comm_(comm) {
  if (const std::string why = can_implement(shape, dtype, world_); !why.empty())
    throw UsageError(why);
  if (device_sms < 1) throw UsageError("chunked ReduceScatter: device_sms must be >= 1");
  if (compute_streams != 1 && compute_streams != 2)
    throw UsageError(fmt::format("chunked ReduceScatter: compute_streams must be 1 or 2, got {}",
                                 compute_streams));
  chunk_rows_ = shape.m / world_;
  chunk_bytes_ = static_cast<std::size_t>(chunk_rows_) * shape.n *
                 static_cast<std::size_t>(core::dtype_size(dtype));
  exchange_ = std::make_unique<CopyEngineExchange>(comm, chunk_bytes_, kLabels);
  for (auto& s : staging_) s = core::DeviceBuffer(chunk_bytes_);
  own_ = core::DeviceBuffer(chunk_bytes_);
  for (int i = 0; i < 2; ++i) {
    staged_[i] = core::Event(cudaEventDisableTiming);
    copied_[i] = core::Event(cudaEventDisableTiming);
  }
  sent_ = core::Event(cudaEventDisableTiming);
  started_ = core::Event(cudaEventDisableTiming);
  if (compute_streams_ == 2 && world_ > 1) {
    side_cublas_ = std::make_unique<CublasGemm>();
    side_stream_ = std::make_unique<core::Stream>();
  }
  exchange_->set_wait_method(choose_wait_method(copy_stream_, force_spin_wait),
                             kDefaultCounterWaitSeconds);
  // A communicator wait that times out (a peer gone or stalled) names the flags this rank still
  // waits for and raises them, so that the stream waits end and the process can exit.
  stall_reporter_ = comm_.add_stall_reporter([this]() -> std::string {
    if (epoch_ == 0) return "";
    const std::string flags = exchange_->release_stuck_flags(epoch_, epoch_);
    if (flags.empty()) return flags;
    forced_ = true;
    return fmt::format("chunked ReduceScatter on rank {} (run {}): {}; raised to release the waits",
                       rank_, epoch_, flags);
  });
}

ChunkedReduceScatter::~ChunkedReduceScatter() {
  comm_.remove_stall_reporter(stall_reporter_);
}

void ChunkedReduceScatter::run(const void* a, const void* b, void* out, cudaStream_t stream) {
  // Refused before any flag moves: a rank that threw mid-run would leave its peers waiting.
  if (forced_)
    throw UsageError("chunked ReduceScatter: a stalled run raised its flags; no more runs");
  if (reinterpret_cast<std::uintptr_t>(out) % 16 != 0)
    throw UsageError("chunked ReduceScatter: the output must be 16-byte aligned");
  const std::size_t a_chunk = static_cast<std::size_t>(chunk_rows_) * shape_.k *
                              static_cast<std::size_t>(core::dtype_size(dtype_));
  const char* a_bytes = static_cast<const char*>(a);
  const bool two_streams = compute_streams_ == 2 && world_ > 1;
  // Each cuBLAS object times its candidates once, here, before any chunk of the pipeline runs
  // beside it (a timing beside the other stream's GEMM would pick by contention). Nothing is in
  // flight on the buffers they write at the first run.
  if (!warmed_) {
    cublas_.run(chunk_rows_, shape_.n, shape_.k, dtype_, layout_, a_bytes, b, own_.data(), stream);
    if (two_streams) {
      side_cublas_->run(chunk_rows_, shape_.n, shape_.k, dtype_, layout_, a_bytes, b,
                        staging_[0].data(), stream);
    }
    warmed_ = true;
  }
  ++epoch_;
  // The copy and side streams start after the caller's earlier work (the inputs are ready); the
  // copies also wait until every peer has summed the previous run out of its regions.
  KILN_CUDA_CHECK(cudaEventRecord(started_.get(), stream));
  KILN_CUDA_CHECK(cudaStreamWaitEvent(copy_stream_, started_.get(), 0));
  if (two_streams) KILN_CUDA_CHECK(cudaStreamWaitEvent(side_stream_->get(), started_.get(), 0));
  exchange_->wait_until_peers_freed(epoch_, copy_stream_);
  for (int step = 1; step < world_; ++step) {
    const int peer = (rank_ + step) % world_;
    const int slot = (step - 1) % 2;
    // With two streams, slot 0's chunks (odd steps) run on the side stream and slot 1's on the
    // caller's: each stream owns one staging buffer.
    const bool side = two_streams && slot == 0;
    const cudaStream_t compute = side ? side_stream_->get() : stream;
    CublasGemm& gemm = side ? *side_cublas_ : cublas_;
    // The caller's first chunk waits a moment so that the side stream's is dispatched first.
    if (two_streams && step == 2) core::enqueue_sleep(kSideFirstNanoseconds, stream);
    // The staging buffer's previous chunk (two steps back) has left before it is overwritten.
    if (step >= 3) KILN_CUDA_CHECK(cudaStreamWaitEvent(compute, copied_[slot].get(), 0));
    gemm.run(chunk_rows_, shape_.n, shape_.k, dtype_, layout_, a_bytes + peer * a_chunk, b,
             staging_[slot].data(), compute);
    staged_[slot].record(compute);
    KILN_CUDA_CHECK(cudaStreamWaitEvent(copy_stream_, staged_[slot].get(), 0));
    exchange_->copy_to(peer, 0, staging_[slot].data(), chunk_bytes_, copy_stream_);
    copied_[slot].record(copy_stream_);
  }
  // Two ranks: the side stream's one chunk is dispatched before this rank's own.
  if (two_streams && world_ == 2) core::enqueue_sleep(kSideFirstNanoseconds, stream);
  // This rank's own chunk while the last copy runs. The copy stream's end (sent_) follows every
  // chunk of the side stream too (each copy waited for its chunk).
  cublas_.run(chunk_rows_, shape_.n, shape_.k, dtype_, layout_, a_bytes + rank_ * a_chunk, b,
              own_.data(), stream);
  exchange_->announce_arrival(epoch_, copy_stream_);
  sent_.record(copy_stream_);
  KILN_CUDA_CHECK(cudaStreamWaitEvent(stream, sent_.get(), 0));
  exchange_->wait_for_arrivals(epoch_, stream);
  PartList parts;
  parts.count = world_;
  for (int r = 0; r < world_; ++r)
    parts.parts[r] = r == rank_ ? own_.data() : exchange_->local_region(r);
  // Nothing of this run computes any more: the sum takes every SM (kMaxCtasPerSm).
  sum_parts(parts, static_cast<std::int64_t>(chunk_rows_) * shape_.n, dtype_, out, device_sms_,
            stream, kMaxCtasPerSm);
  exchange_->announce_freed(epoch_, stream);
}

}  // namespace kiln::overlap
