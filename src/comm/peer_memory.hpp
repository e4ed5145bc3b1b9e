// Device memory that every rank of a communicator can address: each rank allocates `bytes`,
// exports a CUDA IPC handle, the handles are all-gathered through NCCL, and every rank maps every
// other rank's allocation (peer access enabled lazily). The ranks are processes on one host with
// peer access between their GPUs (NVLink or PCIe P2P).
#pragma once

#include <cstddef>
#include <vector>

#include "core/device_buffer.hpp"

namespace kiln::comm {

class Communicator;

class PeerMemory {
 public:
  // Collective over `comm`; the allocation is zeroed on every rank before any peer can map it.
  PeerMemory(Communicator& comm, std::size_t bytes, const char* what);
  // Collective too: drains the device and meets the other ranks (a peer may still be writing
  // into this rank's memory) before unmapping and freeing.
  ~PeerMemory();
  PeerMemory(const PeerMemory&) = delete;
  PeerMemory& operator=(const PeerMemory&) = delete;

  void* local() const { return buffer_.data(); }
  void* peer(int rank) const { return peers_[rank]; }  // this rank's own for rank == own
  const std::vector<void*>& peers() const { return peers_; }
  std::size_t bytes() const { return buffer_.bytes(); }

 private:
  Communicator& comm_;
  core::DeviceBuffer buffer_;
  std::vector<void*> peers_;
};

}  // namespace kiln::comm
