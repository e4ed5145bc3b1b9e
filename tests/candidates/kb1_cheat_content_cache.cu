// Tries to memoize kb1-19-relu by a cheap fingerprint of the contents: a tiny kernel copies 64
// sampled floats of x into mapped pinned host memory, the host waits for the stream and hashes
// them with n; on a fingerprint hit it replays the cached output (no computation), on a miss it
// computes and keeps a copy (4 entries, round robin). Against a judge that repeats inputs this
// would be fast and, for inputs that differ outside the samples, wrong. kiln gives fresh contents
// before every call, so the fingerprint never hits and it always computes: expected verdict
// "accepted (the cache never hits: every call has fresh contents); its sync makes it slow".
#include <cstdint>
#include <cstring>

#include <cuda_runtime.h>

#include "kiln/candidate.h"

constexpr int kSamples = 64;
constexpr int kEntries = 4;

__global__ void relu(const float* __restrict__ x, float* __restrict__ y, size_t n) {
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += size_t(blockDim.x) * gridDim.x)
    y[i] = fmaxf(x[i], 0.f);
}

__global__ void sample(const float* __restrict__ x, size_t n, float* host) {
  const size_t i = n >= kSamples ? threadIdx.x * ((n - 1) / (kSamples - 1)) : threadIdx.x % n;
  host[threadIdx.x] = x[i];
}

struct Entry {
  uint64_t key;
  size_t n;
  float* copy;
};
static Entry cache[kEntries];
static int next_slot = 0;
static float* samples_host = nullptr;  // mapped pinned memory
static float* samples_dev = nullptr;

extern "C" int kiln_candidate_abi_version(void) { return KILN_CANDIDATE_ABI_VERSION; }

extern "C" int kiln_candidate_run(const KilnCandidateArgs* a) {
  if (a->num_inputs < 1 || a->num_outputs != 1) return 1;
  cudaStream_t stream = static_cast<cudaStream_t>(a->stream);
  const float* x = static_cast<const float*>(a->inputs[0]);
  float* y = static_cast<float*>(a->outputs[0]);
  const size_t n = a->output_bytes[0] / 4;
  if (n == 0) return 0;
  if (samples_host == nullptr) {
    if (cudaHostAlloc(&samples_host, kSamples * sizeof(float), cudaHostAllocMapped) != cudaSuccess)
      return 2;
    if (cudaHostGetDevicePointer(&samples_dev, samples_host, 0) != cudaSuccess) return 2;
  }
  sample<<<1, kSamples, 0, stream>>>(x, n, samples_dev);
  if (cudaGetLastError() != cudaSuccess) return 3;
  if (cudaStreamSynchronize(stream) != cudaSuccess) return 2;
  uint64_t key = 1469598103934665603ull ^ n;  // FNV-1a over the sampled bits
  for (int s = 0; s < kSamples; ++s) {
    uint32_t bits;
    std::memcpy(&bits, &samples_host[s], 4);
    for (int b = 0; b < 4; ++b) key = (key ^ ((bits >> (8 * b)) & 0xff)) * 1099511628211ull;
  }
  for (int e = 0; e < kEntries; ++e) {
    if (cache[e].copy != nullptr && cache[e].key == key && cache[e].n == n)  // hit: replay
      return cudaMemcpyAsync(y, cache[e].copy, n * 4, cudaMemcpyDeviceToDevice, stream) ==
                     cudaSuccess ? 0 : 2;
  }
  const size_t blocks = (n + 255) / 256 < 1024 ? (n + 255) / 256 : 1024;
  relu<<<unsigned(blocks), 256, 0, stream>>>(x, y, n);
  if (cudaGetLastError() != cudaSuccess) return 3;
  Entry& slot = cache[next_slot];
  next_slot = (next_slot + 1) % kEntries;
  if (slot.copy != nullptr && slot.n != n) {
    if (cudaFree(slot.copy) != cudaSuccess) return 2;
    slot.copy = nullptr;
  }
  if (slot.copy == nullptr && cudaMalloc(&slot.copy, n * 4) != cudaSuccess) return 2;
  slot.key = key;
  slot.n = n;
  return cudaMemcpyAsync(slot.copy, y, n * 4, cudaMemcpyDeviceToDevice, stream) == cudaSuccess ? 0 : 2;
}
