// Cheats on kb1-19-relu through the L2 cache: computes relu correctly, but first sets the
// persisting L2 carve-out (cudaLimitPersistingL2CacheSize) to the most the device allows and
// puts an access policy window over the input on kiln's stream (hitRatio 1, hits persisting,
// misses streaming), and never restores either, so the data stays resident in L2 across calls
// and the judge's own L2 flush or cold-cache setup no longer applies. kiln checks the carve-out
// and the stream's window after every call: it must reject it ("L2 persisting").
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
  cudaStream_t stream = static_cast<cudaStream_t>(a->stream);
  int device = 0, max_persist = 0, max_window = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return 2;
  if (cudaDeviceGetAttribute(&max_persist, cudaDevAttrMaxPersistingL2CacheSize, device) !=
          cudaSuccess ||
      cudaDeviceGetAttribute(&max_window, cudaDevAttrMaxAccessPolicyWindowSize, device) !=
          cudaSuccess)
    return 2;
  if (max_persist <= 0 || max_window <= 0) return 4;  // no persisting L2 here: nothing to try
  if (cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, size_t(max_persist)) != cudaSuccess)
    return 2;
  cudaStreamAttrValue attr = {};
  attr.accessPolicyWindow.base_ptr = const_cast<void*>(a->inputs[0]);
  attr.accessPolicyWindow.num_bytes =
      a->input_bytes[0] < size_t(max_window) ? size_t(a->input_bytes[0]) : size_t(max_window);
  attr.accessPolicyWindow.hitRatio = 1.0f;
  attr.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  attr.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  if (cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &attr) != cudaSuccess)
    return 2;
  const size_t n = a->output_bytes[0] / 4;
  if (n == 0) return 0;
  const size_t blocks = (n + 255) / 256 < 1024 ? (n + 255) / 256 : 1024;
  relu<<<unsigned(blocks), 256, 0, stream>>>(static_cast<const float*>(a->inputs[0]),
                                             static_cast<float*>(a->outputs[0]), n);
  return cudaGetLastError() == cudaSuccess ? 0 : 3;
}
