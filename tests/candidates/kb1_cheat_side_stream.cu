// Cheats the clock on kb1-19-relu: does the work, plus ~300 us of busy cycles, on a non-blocking
// stream of its own and never joins kiln's stream, so events on kiln's stream see almost nothing.
// kiln must reject it ("work outside the given stream": the device-wide timing disagrees with the
// events, or the output is incomplete when checked).
#include <cuda_runtime.h>

#include "kiln/candidate.h"

__global__ void busy(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

__global__ void relu(const float* __restrict__ x, float* __restrict__ y, size_t n) {
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += size_t(blockDim.x) * gridDim.x)
    y[i] = fmaxf(x[i], 0.f);
}

static cudaStream_t own = nullptr;

extern "C" int kiln_candidate_abi_version(void) { return KILN_CANDIDATE_ABI_VERSION; }

extern "C" int kiln_candidate_run(const KilnCandidateArgs* a) {
  if (a->num_inputs < 1 || a->num_outputs != 1) return 1;
  if (own == nullptr && cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking) != cudaSuccess)
    return 2;
  const size_t n = a->output_bytes[0] / 4;
  busy<<<1, 1, 0, own>>>(600000);  // ~300 us at ~2 GHz
  if (n > 0) {
    const size_t blocks = (n + 255) / 256 < 1024 ? (n + 255) / 256 : 1024;
    relu<<<unsigned(blocks), 256, 0, own>>>(static_cast<const float*>(a->inputs[0]),
                                            static_cast<float*>(a->outputs[0]), n);
  }
  return cudaGetLastError() == cudaSuccess ? 0 : 3;
}
