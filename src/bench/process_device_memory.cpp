#include "bench/process_device_memory.hpp"

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <vector>

namespace kiln::bench {

namespace {

// The few NVML declarations used, written out because the CUDA toolkit here ships no nvml.h; they
// are NVML's stable C ABI (NVML API reference: nvmlInit_v2, nvmlDeviceGetHandleByPciBusId_v2,
// nvmlDeviceGetComputeRunningProcesses_v3 and its nvmlProcessInfo_v2_t rows).
using NvmlReturn = int;
constexpr NvmlReturn kNvmlSuccess = 0;
constexpr NvmlReturn kNvmlInsufficientSize = 7;
struct NvmlProcessInfo {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};
using NvmlDevice = void*;

struct Nvml {
  NvmlReturn (*init)() = nullptr;
  NvmlReturn (*handle_by_bus_id)(const char*, NvmlDevice*) = nullptr;
  NvmlReturn (*compute_processes)(NvmlDevice, unsigned int*, NvmlProcessInfo*) = nullptr;
  std::string why;  // why it could not be loaded ("" when it was)
};

// Loaded and initialised once per process (the library stays loaded: NVML is meant to be).
const Nvml& nvml() {
  static const Nvml loaded = [] {
    Nvml n;
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      n.why = fmt::format("NVML not loadable ({})", dlerror());
      return n;
    }
    n.init = reinterpret_cast<NvmlReturn (*)()>(dlsym(lib, "nvmlInit_v2"));
    n.handle_by_bus_id = reinterpret_cast<NvmlReturn (*)(const char*, NvmlDevice*)>(
        dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
    n.compute_processes =
        reinterpret_cast<NvmlReturn (*)(NvmlDevice, unsigned int*, NvmlProcessInfo*)>(
            dlsym(lib, "nvmlDeviceGetComputeRunningProcesses_v3"));
    if (!n.init || !n.handle_by_bus_id || !n.compute_processes) {
      n.why = "NVML lacks nvmlDeviceGetComputeRunningProcesses_v3 (a driver before R510)";
      n.compute_processes = nullptr;
    } else if (const NvmlReturn r = n.init(); r != kNvmlSuccess) {
      n.why = fmt::format("nvmlInit_v2 failed (NVML error {})", r);
      n.compute_processes = nullptr;
    }
    return n;
  }();
  return loaded;
}

}  // namespace

std::optional<std::size_t> memory_of_process(std::span<const ProcessMemoryRow> rows, unsigned pid) {
  std::optional<std::size_t> total;
  for (const ProcessMemoryRow& row : rows) {
    if (row.pid != pid) continue;
    if (row.bytes == kNotAvailable) return std::nullopt;
    total = total.value_or(0) + static_cast<std::size_t>(row.bytes);
  }
  return total;
}

ProcessDeviceMemory::ProcessDeviceMemory(int cuda_device) {
  const Nvml& n = nvml();
  if (!n.compute_processes) {
    why_ = n.why;
    return;
  }
  char bus_id[32] = {};
  if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, cuda_device) != cudaSuccess) {
    cudaGetLastError();  // not sticky; leave no error for the judge's own checks
    why_ = fmt::format("no PCI bus id for CUDA device {}", cuda_device);
    return;
  }
  NvmlDevice device = nullptr;
  if (const NvmlReturn r = n.handle_by_bus_id(bus_id, &device); r != kNvmlSuccess) {
    why_ = fmt::format("NVML has no device at {} (NVML error {})", bus_id, r);
    return;
  }
  device_ = device;
}

std::optional<std::size_t> ProcessDeviceMemory::read() {
  if (!device_) return std::nullopt;  // why_ says why since construction
  std::vector<NvmlProcessInfo> infos(64);
  for (int attempt = 0; attempt < 4; ++attempt) {
    unsigned int count = static_cast<unsigned int>(infos.size());
    const NvmlReturn r = nvml().compute_processes(device_, &count, infos.data());
    if (r == kNvmlInsufficientSize) {  // more processes started meanwhile: room for them and more
      infos.resize(count + 16);
      continue;
    }
    if (r != kNvmlSuccess) {
      why_ = fmt::format("nvmlDeviceGetComputeRunningProcesses_v3 failed (NVML error {})", r);
      return std::nullopt;
    }
    std::vector<ProcessMemoryRow> rows;
    rows.reserve(count);
    for (unsigned int i = 0; i < count; ++i) rows.push_back({infos[i].pid, infos[i].usedGpuMemory});
    const auto mine = memory_of_process(rows, static_cast<unsigned>(getpid()));
    why_ = mine ? ""
                : fmt::format(
                      "process {} is not among the {} NVML lists on the device, or "
                      "has no figure (PID namespace of a container?)",
                      getpid(), count);
    return mine;
  }
  why_ = "the device's process list kept growing while it was read";
  return std::nullopt;
}

}  // namespace kiln::bench
