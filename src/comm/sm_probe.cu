// The SM occupancy probe kernel and its launch (see sm_probe.hpp).
#include <cstddef>
#include <string>
#include <vector>

#include "comm/sm_probe.hpp"
#include "core/cuda_check.hpp"
#include "core/device_buffer.hpp"
#include "core/error.hpp"

namespace kiln::comm {
namespace {

struct ProbeRecord {
  unsigned long long start_ns;
  unsigned long long end_ns;
  int smid;
  int unused;
};

__device__ __forceinline__ unsigned long long global_timer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ int sm_id() {
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return static_cast<int>(id);
}

// The dynamic shared memory is there to be held, not used: only its size matters. Its first word
// carries thread 0's start time to the block, so the kernel has no static shared memory and the
// whole opt-in limit goes to the dynamic part.
__global__ void __launch_bounds__(kSmProbeThreads)
    sm_probe_kernel(unsigned long long hold_ns, ProbeRecord* records) {
  extern __shared__ unsigned long long held[];
  if (threadIdx.x == 0) {
    held[0] = global_timer_ns();
    records[blockIdx.x].start_ns = held[0];
    records[blockIdx.x].smid = sm_id();
  }
  __syncthreads();
  // Every thread spins to the same deadline, so the whole block stays resident until then.
  const unsigned long long until = held[0] + hold_ns;
  while (global_timer_ns() < until) {
  }
  __syncthreads();
  if (threadIdx.x == 0) records[blockIdx.x].end_ns = global_timer_ns();
}

}  // namespace

SmProbeSamples run_sm_probe(cudaStream_t stream, unsigned long long hold_ns) {
  KILN_REQUIRE(hold_ns > 0 && hold_ns <= kSmProbeMaxHoldNs,
               "SM probe: the hold must be between 1 ns and " + std::to_string(kSmProbeMaxHoldNs) +
                   " ns, not " + std::to_string(hold_ns));
  int device = 0;
  KILN_CUDA_CHECK(cudaGetDevice(&device));
  int sm_count = 0;
  KILN_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
  int optin_bytes = 0;
  KILN_CUDA_CHECK(
      cudaDeviceGetAttribute(&optin_bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  cudaFuncAttributes attributes{};
  KILN_CUDA_CHECK(cudaFuncGetAttributes(&attributes, sm_probe_kernel));
  // The opt-in limit covers static and dynamic shared memory together.
  const int dynamic_bytes = optin_bytes - static_cast<int>(attributes.sharedSizeBytes);
  KILN_CUDA_CHECK(cudaFuncSetAttribute(sm_probe_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       dynamic_bytes));
  // The whole method rests on one probe block per SM; check it rather than assume it.
  int blocks_per_sm = 0;
  KILN_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, sm_probe_kernel,
                                                                kSmProbeThreads, dynamic_bytes));
  if (blocks_per_sm != 1)
    throw Error("SM probe: " + std::to_string(blocks_per_sm) + " probe blocks of " +
                std::to_string(dynamic_bytes) +
                " bytes of shared memory fit on an SM of this device, not exactly 1");

  const std::size_t record_bytes = sizeof(ProbeRecord) * static_cast<std::size_t>(sm_count);
  core::DeviceBuffer records(record_bytes);
  KILN_CUDA_CHECK(cudaMemsetAsync(records.data(), 0, record_bytes, stream));
  sm_probe_kernel<<<sm_count, kSmProbeThreads, dynamic_bytes, stream>>>(hold_ns,
                                                                        records.as<ProbeRecord>());
  KILN_CUDA_CHECK(cudaGetLastError());
  std::vector<ProbeRecord> host(static_cast<std::size_t>(sm_count));
  KILN_CUDA_CHECK(
      cudaMemcpyAsync(host.data(), records.data(), record_bytes, cudaMemcpyDeviceToHost, stream));
  KILN_CUDA_CHECK(cudaStreamSynchronize(stream));

  SmProbeSamples samples;
  samples.smid.reserve(host.size());
  samples.start_ns.reserve(host.size());
  samples.end_ns.reserve(host.size());
  for (const ProbeRecord& r : host) {
    samples.smid.push_back(r.smid);
    samples.start_ns.push_back(r.start_ns);
    samples.end_ns.push_back(r.end_ns);
  }
  return samples;
}

}  // namespace kiln::comm
