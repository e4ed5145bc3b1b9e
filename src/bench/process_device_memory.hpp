// The device memory this process holds, as the driver counts it (NVML's per-process figure), for a
// judge server's leak check: cudaMemGetInfo is the whole device's, and with eight judge servers on
// one GPU setting up and freeing KernelBench's tens of GB, a device-wide drop said "leaked" after
// candidates that held nothing (H200, 2026-11-29: judge servers ended after most batches).
// NVML is loaded at run time (libnvidia-ml.so.1 comes with the driver; a CPU machine has none and
// kiln must run there); where it is missing, or where the driver lists processes by PIDs this
// process cannot see (a container with its own PID namespace), the figure is unavailable and the
// reason says why.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>

namespace kiln::bench {

// One row of the driver's list of processes on a device.
struct ProcessMemoryRow {
  unsigned pid = 0;
  unsigned long long bytes = 0;  // kNotAvailable when the driver does not say
};
inline constexpr unsigned long long kNotAvailable = ~0ULL;  // NVML_VALUE_NOT_AVAILABLE

// The bytes process `pid` holds: the sum of its rows (a process may be listed once per GPU
// instance), or nullopt when it is not listed or any of its rows has no figure.
std::optional<std::size_t> memory_of_process(std::span<const ProcessMemoryRow> rows, unsigned pid);

// This process's memory on one CUDA device (the runtime's ordinal, mapped to NVML by PCI bus id).
class ProcessDeviceMemory {
 public:
  explicit ProcessDeviceMemory(int cuda_device);
  // The bytes held now, or nullopt (see why()).
  std::optional<std::size_t> read();
  // Why the last read() had no figure ("" after one that had).
  const std::string& why() const { return why_; }

 private:
  void* device_ = nullptr;  // nvmlDevice_t, null while NVML or the device could not be opened
  std::string why_;
};

}  // namespace kiln::bench
