// CUDA IPC peer mappings (see peer_memory.hpp).
#include "comm/peer_memory.hpp"

#include <fmt/format.h>
#include <nccl.h>

#include <string>

#include "comm/communicator.hpp"
#include "core/cuda_check.hpp"
#include "core/error.hpp"

namespace kiln::comm {
namespace {

// Gathers one IPC handle per rank through NCCL (the ranks are processes on one host).
std::vector<cudaIpcMemHandle_t> all_gather_handles(Communicator& comm,
                                                   const cudaIpcMemHandle_t& mine) {
  const int world = comm.size();
  if (world == 1) return {mine};
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
  std::string failure;
  for (int r = 0; r < comm.size() && failure.empty(); ++r) {
    if (r == comm.rank()) {
      peers_[r] = buffer_.data();
      continue;
    }
    const cudaError_t result =
        cudaIpcOpenMemHandle(&peers_[r], handles[r], cudaIpcMemLazyEnablePeerAccess);
    if (result != cudaSuccess) {
      peers_[r] = nullptr;
      failure = fmt::format(
          "peer memory ({}): mapping rank {}'s allocation failed: {} (the GPUs "
          "need peer access, e.g. NVLink)",
          what, r, cudaGetErrorString(result));
    }
  }
  // Every rank learns whether every rank mapped everything, so that all of them either go on or
  // throw together (a rank alone unwinding would leave the others in mismatched collectives).
  int failed = failure.empty() ? 0 : 1;
  {
    core::DeviceBuffer flag(sizeof(int));
    KILN_CUDA_CHECK(cudaMemcpy(flag.data(), &failed, sizeof(int), cudaMemcpyHostToDevice));
    cudaStream_t stream = nullptr;
    if (comm.size() > 1)
      comm.call("peer memory check", [&] {
        return ncclAllReduce(flag.data(), flag.data(), 1, ncclInt32, ncclMax, comm.get(), stream);
      });
    comm.wait(stream, "peer memory check");
    KILN_CUDA_CHECK(cudaMemcpy(&failed, flag.data(), sizeof(int), cudaMemcpyDeviceToHost));
  }
  if (failed != 0) {
    for (int r = 0; r < comm.size(); ++r) {
      if (r != comm.rank() && peers_[r] != nullptr) cudaIpcCloseMemHandle(peers_[r]);
    }
    peers_.clear();
    throw Error(failure.empty()
                    ? fmt::format("peer memory ({}): another rank could not map this one's", what)
                    : failure);
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
