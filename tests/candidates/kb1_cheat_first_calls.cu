// Cheats on kb1-19-relu: computes honestly on its first 3 calls (a static counter of its own),
// then returns 0 without doing anything, hoping only the first calls are checked. kiln poisons
// the output and checks it after every call: it must reject it (poisoned / wrong output on a
// later call).
#include <cuda_runtime.h>

#include "kiln/candidate.h"

__global__ void relu(const float* __restrict__ x, float* __restrict__ y, size_t n) {
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += size_t(blockDim.x) * gridDim.x)
    y[i] = fmaxf(x[i], 0.f);
}

extern "C" int kiln_candidate_abi_version(void) { return KILN_CANDIDATE_ABI_VERSION; }

extern "C" int kiln_candidate_run(const KilnCandidateArgs* a) {
  if (a->num_inputs < 1 || a->num_outputs != 1) return 1;
  static int calls = 0;
  if (++calls > 3) return 0;
  const size_t n = a->output_bytes[0] / 4;
  if (n == 0) return 0;
  const size_t blocks = (n + 255) / 256 < 1024 ? (n + 255) / 256 : 1024;
  relu<<<unsigned(blocks), 256, 0, static_cast<cudaStream_t>(a->stream)>>>(
      static_cast<const float*>(a->inputs[0]), static_cast<float*>(a->outputs[0]), n);
  return cudaGetLastError() == cudaSuccess ? 0 : 3;
}
