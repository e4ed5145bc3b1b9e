// Copy-engine exchange between ranks (see copy_engine_exchange.hpp).
#include "overlap/copy_engine_exchange.hpp"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/peer_memory.hpp"
#include "core/cuda_check.hpp"
#include "core/error.hpp"
#include "overlap/group_wait.hpp"

namespace kiln::overlap {
CopyEngineExchange::CopyEngineExchange(comm::Communicator& comm, std::size_t region_bytes,
                                       int label_offset)
    : rank_(comm.rank()),
      world_(comm.size()),
      label_offset_(label_offset),
      region_bytes_(region_bytes) {
  if (region_bytes == 0) throw UsageError("copy-engine exchange: empty region");
  // Every rank's flags are zero before any peer maps them (PeerMemory zeroes, then exchanges).
  buffer_ = std::make_unique<comm::PeerMemory>(comm, region_bytes * world_, "exchange buffer");
  flags_ = std::make_unique<comm::PeerMemory>(comm, flag_bytes(world_), "exchange flags");
}

// Flags before the buffer: members go in reverse order, each unmapping collectively.
CopyEngineExchange::~CopyEngineExchange() = default;

void* CopyEngineExchange::local_region(int source) const {
  return static_cast<char*>(buffer_->local()) + region_bytes_ * source;
}

unsigned* CopyEngineExchange::flag_word(int rank, Flag flag, int index) const {
  return static_cast<unsigned*>(flags_->peer(rank)) + flag * world_ + index;
}

void CopyEngineExchange::set_remote_flags(Flag flag, unsigned epoch, unsigned* outgoing,
                                          cudaStream_t stream) {
  enqueue_value_write(outgoing, epoch, stream);
  for (int r = 0; r < world_; ++r) {
    if (r == rank_) continue;
    KILN_CUDA_CHECK(cudaMemcpyAsync(flag_word(r, flag, rank_), outgoing, sizeof(unsigned),
                                    cudaMemcpyDeviceToDevice, stream));
  }
}

// The spin kernel's message names a flag wait by label: 1000 + peer for "freed", 2000 + peer for
// "arrived".
void CopyEngineExchange::wait_until_peers_freed(unsigned epoch, cudaStream_t stream) {
  for (int r = 0; r < world_; ++r) {
    if (r == rank_) continue;
    enqueue_counter_wait(wait_method_, flag_word(rank_, kFreed, r), epoch - 1, stream,
                         wait_timeout_s_, label_offset_ + 1000 + r);
  }
}

void CopyEngineExchange::copy_to(int destination, std::size_t offset, const void* src,
                                 std::size_t bytes, cudaStream_t stream) {
  if (offset + bytes > region_bytes_) {
    throw Error(fmt::format("copy-engine exchange: {} bytes at {} overrun the {}-byte region",
                            bytes, offset, region_bytes_));
  }
  char* dst = static_cast<char*>(buffer_->peer(destination)) + region_bytes_ * rank_ + offset;
  KILN_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream));
}

void CopyEngineExchange::announce_arrival(unsigned epoch, cudaStream_t stream) {
  set_remote_flags(kArrived, epoch, static_cast<unsigned*>(flags_->local()) + 2 * world_, stream);
}

void CopyEngineExchange::wait_for_arrivals(unsigned epoch, cudaStream_t stream) {
  for (int r = 0; r < world_; ++r) {
    if (r == rank_) continue;
    enqueue_counter_wait(wait_method_, flag_word(rank_, kArrived, r), epoch, stream,
                         wait_timeout_s_, label_offset_ + 2000 + r);
  }
}

void CopyEngineExchange::announce_freed(unsigned epoch, cudaStream_t stream) {
  set_remote_flags(kFreed, epoch, static_cast<unsigned*>(flags_->local()) + 2 * world_ + 1, stream);
}

void CopyEngineExchange::set_wait_method(WaitMethod method, double timeout_seconds) {
  wait_method_ = method;
  wait_timeout_s_ = timeout_seconds;
}

std::string CopyEngineExchange::release_stuck_flags(unsigned epoch, unsigned arrivals) {
  // This rank's arrived[] and freed[] words against what its waits of run `epoch` need (its own
  // index is never waited for: target 0).
  std::vector<unsigned> targets(2 * world_, 0);
  for (int r = 0; r < world_; ++r) {
    if (r == rank_) continue;
    targets[kArrived * world_ + r] = arrivals;
    targets[kFreed * world_ + r] = epoch - 1;
  }
  const std::vector<unsigned> flags =
      raise_words_behind(static_cast<unsigned*>(flags_->local()), targets);
  std::string report;
  const auto behind = [&](int w) { return static_cast<int>(flags[w] - targets[w]) < 0; };
  for (int r = 0; r < world_; ++r) {
    if (r == rank_) continue;
    if (behind(kArrived * world_ + r)) {
      report +=
          fmt::format("{}rank {}'s data of run {} has not arrived (flag {} of {})",
                      report.empty() ? "" : "; ", r, epoch, flags[kArrived * world_ + r], arrivals);
    }
    if (behind(kFreed * world_ + r)) {
      report += fmt::format("{}rank {} has not freed run {} (flag {})", report.empty() ? "" : "; ",
                            r, epoch - 1, flags[kFreed * world_ + r]);
    }
  }
  return report.empty() ? report : "copy-engine exchange: " + report;
}

}  // namespace kiln::overlap
