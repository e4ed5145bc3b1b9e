// Cheats on kb1-19-relu with call-dependent results: y = max(x, 0) * (1 + eps * (call % 7)) with
// eps = FLT_EPSILON (1.19e-7: "1e-7" in whole ulps of 1.0f), within any fp32 tolerance of the
// reference but different in the last bits from one call to the next (as an order-dependent
// atomic reduction would be). kiln runs every correctness trial twice on the same inputs and
// compares the outputs bitwise: it must reject it ("nondeterministic").
#include <cfloat>

#include <cuda_runtime.h>

#include "kiln/candidate.h"

__global__ void relu_scaled(const float* __restrict__ x, float* __restrict__ y, size_t n,
                            float factor) {
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += size_t(blockDim.x) * gridDim.x)
    y[i] = fmaxf(x[i], 0.f) * factor;
}

extern "C" int kiln_candidate_abi_version(void) { return KILN_CANDIDATE_ABI_VERSION; }

extern "C" int kiln_candidate_run(const KilnCandidateArgs* a) {
  if (a->num_inputs < 1 || a->num_outputs != 1) return 1;
  const size_t n = a->output_bytes[0] / 4;
  if (n == 0) return 0;
  // Exactly k ulps above 1.0f: a different factor on any 2 consecutive calls. (With 1e-7f
  // itself, k = 3 and k = 4 both round to 1 + 3 ulps, so one pair of calls in 7 would agree.)
  const float factor = 1.0f + FLT_EPSILON * float(a->call % 7);
  const size_t blocks = (n + 255) / 256 < 1024 ? (n + 255) / 256 : 1024;
  relu_scaled<<<unsigned(blocks), 256, 0, static_cast<cudaStream_t>(a->stream)>>>(
      static_cast<const float*>(a->inputs[0]), static_cast<float*>(a->outputs[0]), n, factor);
  return cudaGetLastError() == cudaSuccess ? 0 : 3;
}
