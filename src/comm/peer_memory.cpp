// CUDA IPC peer mappings (see peer_memory.hpp).
#include "comm/peer_memory.hpp"

#include <fmt/format.h>
#include <nccl.h>

#include "comm/communicator.hpp"
#include "core/cuda_check.hpp"
#include "core/error.hpp"

namespace kiln::comm {
namespace {

// Gathers one IPC handle per rank through NCCL (the ranks are processes on one host).
std::vector<cudaIpcMemHandle_t> all_gather_handles(Communicator& comm,
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

}  // namespace

PeerMemory::PeerMemory(Communicator& comm, std::size_t bytes, const char* what) : comm_(comm) {
  if (bytes == 0) throw UsageError(fmt::format("peer memory ({}): empty allocation", what));
  buffer_ = core::DeviceBuffer(bytes);
  KILN_CUDA_CHECK(cudaMemset(buffer_.data(), 0, bytes));
  KILN_CUDA_CHECK(cudaDeviceSynchronize());
  cudaIpcMemHandle_t handle;
  KILN_CUDA_CHECK(cudaIpcGetMemHandle(&handle, buffer_.data()));
  const auto handles = all_gather_handles(comm, handle);
  peers_.assign(comm.size(), nullptr);
  for (int r = 0; r < comm.size(); ++r) {
    if (r == comm.rank()) {
      peers_[r] = buffer_.data();
      continue;
    }
    const cudaError_t result =
        cudaIpcOpenMemHandle(&peers_[r], handles[r], cudaIpcMemLazyEnablePeerAccess);
    if (result != cudaSuccess) {
      throw Error(
          fmt::format("peer memory ({}): mapping rank {}'s allocation failed: {} (the "
                      "GPUs need peer access, e.g. NVLink)",
                      what, r, cudaGetErrorString(result)));
    }
  }
}

PeerMemory::~PeerMemory() {
  cudaDeviceSynchronize();
  try {
    cudaIpcMemHandle_t unused{};
    (void)all_gather_handles(comm_, unused);
  } catch (...) {
    // The communicator is already broken (another error is on its way out); nothing to wait for.
  }
  for (int r = 0; r < static_cast<int>(peers_.size()); ++r) {
    if (r != comm_.rank() && peers_[r] != nullptr) cudaIpcCloseMemHandle(peers_[r]);
  }
}

}  // namespace kiln::comm
