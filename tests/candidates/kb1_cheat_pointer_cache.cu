// Cheats on kb1-19-relu: memoizes by (input pointer, n). On a miss it computes and keeps a copy
// of the output in a cudaMalloc'd buffer of its own; on a hit it only copies that cached output
// into the output (no computation), as if the same buffer always held the same data. kiln
// writes fresh contents into the same buffers before every call: it must reject it (the cached
// output is wrong on the second call).
#include <cuda_runtime.h>

#include "kiln/candidate.h"

__global__ void relu(const float* __restrict__ x, float* __restrict__ y, size_t n) {
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += size_t(blockDim.x) * gridDim.x)
    y[i] = fmaxf(x[i], 0.f);
}

struct Entry {
  const void* input;
  size_t n;
  float* copy;
};
static Entry cache[8];
static int used = 0;

extern "C" int kiln_candidate_abi_version(void) { return KILN_CANDIDATE_ABI_VERSION; }

extern "C" int kiln_candidate_run(const KilnCandidateArgs* a) {
  if (a->num_inputs < 1 || a->num_outputs != 1) return 1;
  cudaStream_t stream = static_cast<cudaStream_t>(a->stream);
  const size_t n = a->output_bytes[0] / 4;
  if (n == 0) return 0;
  for (int e = 0; e < used; ++e) {
    if (cache[e].input == a->inputs[0] && cache[e].n == n) {  // hit: replay, compute nothing
      return cudaMemcpyAsync(a->outputs[0], cache[e].copy, n * 4, cudaMemcpyDeviceToDevice,
                             stream) == cudaSuccess ? 0 : 2;
    }
  }
  const size_t blocks = (n + 255) / 256 < 1024 ? (n + 255) / 256 : 1024;
  relu<<<unsigned(blocks), 256, 0, stream>>>(static_cast<const float*>(a->inputs[0]),
                                             static_cast<float*>(a->outputs[0]), n);
  if (cudaGetLastError() != cudaSuccess) return 3;
  if (used < 8) {  // miss: remember this output (a full cache just computes)
    float* copy = nullptr;
    if (cudaMalloc(&copy, n * 4) != cudaSuccess) return 2;
    if (cudaMemcpyAsync(copy, a->outputs[0], n * 4, cudaMemcpyDeviceToDevice, stream) != cudaSuccess)
      return 2;
    cache[used++] = Entry{a->inputs[0], n, copy};
  }
  return 0;
}
