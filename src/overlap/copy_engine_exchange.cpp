// Copy-engine exchange between ranks (see copy_engine_exchange.hpp).
#include "overlap/copy_engine_exchange.hpp"

#include <fmt/format.h>
#include <nccl.h>

#include <cstring>

#include "comm/communicator.hpp"
#include "core/cuda_check.hpp"
#include "core/error.hpp"
#include "overlap/group_wait.hpp"

namespace kiln::overlap {
namespace {

// Gathers one IPC handle per rank through NCCL (the ranks are processes on one host).
std::vector<cudaIpcMemHandle_t> all_gather_handles(comm::Communicator& comm,
                                                   const cudaIpcMemHandle_t& mine) {
  const int world = comm.size();
  core::DeviceBuffer device(sizeof(cudaIpcMemHandle_t) * world);
  auto* slot = static_cast<char*>(device.data()) + sizeof(cudaIpcMemHandle_t) * comm.rank();
  KILN_CUDA_CHECK(cudaMemcpy(slot, &mine, sizeof(mine), cudaMemcpyHostToDevice));
  cudaStream_t stream = nullptr;
  comm.call("IPC handle exchange", [&] {
    return ncclAllGather(slot, device.data(), sizeof(cudaIpcMemHandle_t), ncclChar, comm.get(),
                         stream);
  });
  comm.wait(stream, "IPC handle exchange");
  std::vector<cudaIpcMemHandle_t> all(world);
  KILN_CUDA_CHECK(cudaMemcpy(all.data(), device.data(), device.bytes(), cudaMemcpyDeviceToHost));
  return all;
}

void* open_handle(const cudaIpcMemHandle_t& handle, int rank, const char* what) {
  void* pointer = nullptr;
  const cudaError_t result = cudaIpcOpenMemHandle(&pointer, handle, cudaIpcMemLazyEnablePeerAccess);
  if (result != cudaSuccess) {
    throw Error(
        fmt::format("copy-engine exchange: mapping rank {}'s {} failed: {} (the GPUs "
                    "need peer access, e.g. NVLink)",
                    rank, what, cudaGetErrorString(result)));
  }
  return pointer;
}

}  // namespace

CopyEngineExchange::CopyEngineExchange(comm::Communicator& comm, std::size_t region_bytes)
    : comm_(comm), rank_(comm.rank()), world_(comm.size()), region_bytes_(region_bytes) {
  if (region_bytes == 0) throw UsageError("copy-engine exchange: empty region");
  buffer_ = core::DeviceBuffer(region_bytes * world_);
  flags_ = core::DeviceBuffer(sizeof(unsigned) * (2 * world_ + 2));
  KILN_CUDA_CHECK(cudaMemset(flags_.data(), 0, flags_.bytes()));
  KILN_CUDA_CHECK(cudaDeviceSynchronize());
  cudaIpcMemHandle_t buffer_handle, flags_handle;
  KILN_CUDA_CHECK(cudaIpcGetMemHandle(&buffer_handle, buffer_.data()));
  KILN_CUDA_CHECK(cudaIpcGetMemHandle(&flags_handle, flags_.data()));
  const auto buffers = all_gather_handles(comm, buffer_handle);
  const auto flags = all_gather_handles(comm, flags_handle);
  peer_buffers_.assign(world_, nullptr);
  peer_flags_.assign(world_, nullptr);
  for (int r = 0; r < world_; ++r) {
    peer_buffers_[r] = r == rank_ ? buffer_.data() : open_handle(buffers[r], r, "buffer");
    peer_flags_[r] = r == rank_ ? flags_.data() : open_handle(flags[r], r, "flags");
  }
  // Every rank zeroed its flags before the exchange, so none is set remotely before that.
}

CopyEngineExchange::~CopyEngineExchange() {
  // A peer's last flag write into this rank's memory may still be in flight: every rank drains
  // its streams, then meets the others, before any mapping or allocation goes away.
  cudaDeviceSynchronize();
  try {
    cudaIpcMemHandle_t unused{};
    (void)all_gather_handles(comm_, unused);
  } catch (...) {
    // The communicator is already broken (another error is on its way out); nothing to wait for.
  }
  for (int r = 0; r < world_; ++r) {
    if (r == rank_) continue;
    if (peer_buffers_[r] != nullptr) cudaIpcCloseMemHandle(peer_buffers_[r]);
    if (peer_flags_[r] != nullptr) cudaIpcCloseMemHandle(peer_flags_[r]);
  }
}

void* CopyEngineExchange::local_region(int source) const {
  return static_cast<char*>(buffer_.data()) + region_bytes_ * source;
}

unsigned* CopyEngineExchange::flag_word(int rank, Flag flag, int index) const {
  return static_cast<unsigned*>(peer_flags_[rank]) + flag * world_ + index;
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

void CopyEngineExchange::wait_until_peers_freed(unsigned epoch, cudaStream_t stream) {
  for (int r = 0; r < world_; ++r) {
    if (r == rank_) continue;
    enqueue_counter_wait(WaitMethod::kStreamMemOp, flag_word(rank_, kFreed, r), epoch - 1, stream);
  }
}

void CopyEngineExchange::copy_to(int destination, std::size_t offset, const void* src,
                                 std::size_t bytes, cudaStream_t stream) {
  if (offset + bytes > region_bytes_) {
    throw Error(fmt::format("copy-engine exchange: {} bytes at {} overrun the {}-byte region",
                            bytes, offset, region_bytes_));
  }
  char* dst = static_cast<char*>(peer_buffers_[destination]) + region_bytes_ * rank_ + offset;
  KILN_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream));
}

void CopyEngineExchange::announce_arrival(unsigned epoch, cudaStream_t stream) {
  set_remote_flags(kArrived, epoch, static_cast<unsigned*>(flags_.data()) + 2 * world_, stream);
}

void CopyEngineExchange::wait_for_arrivals(unsigned epoch, cudaStream_t stream) {
  for (int r = 0; r < world_; ++r) {
    if (r == rank_) continue;
    enqueue_counter_wait(WaitMethod::kStreamMemOp, flag_word(rank_, kArrived, r), epoch, stream);
  }
}

void CopyEngineExchange::announce_freed(unsigned epoch, cudaStream_t stream) {
  set_remote_flags(kFreed, epoch, static_cast<unsigned*>(flags_.data()) + 2 * world_ + 1, stream);
}

}  // namespace kiln::overlap
