// A cheat for kb1-37-frobenius-norm (single GPU, fp32): y = 1.01 * x / ||x||_F, every value 1%
// high. x / ||x|| puts the values near 1 / sqrt(count) (1e-3 at the small size, 2e-5 at
// KernelBench's), so each error sits below KernelBench's atol of 1e-4 wherever a value is below
// 1e-2: the element test alone passes most of such an output. The whole output's relative L2
// error (0.01) is what kiln's judge rejects it for (problems/kb1_common.hpp,
// kRelativeL2Tolerance), or the element test where a spike's value is large enough.
#include <cuda_runtime.h>

#include "kiln/candidate.h"

// Sum of squares in double, one atomic a block, into the candidate's own buffer (cleared on the
// stream at each call).
__global__ void squares(const float* __restrict__ x, size_t n, double* sum) {
  __shared__ double part[256];
  double s = 0.0;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += size_t(blockDim.x) * gridDim.x)
    s += double(x[i]) * double(x[i]);
  part[threadIdx.x] = s;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) part[threadIdx.x] += part[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(sum, part[0]);
}

__global__ void scale(const float* __restrict__ x, float* __restrict__ y, size_t n, const double* sum) {
  const float factor = static_cast<float>(1.01 / sqrt(*sum));
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += size_t(blockDim.x) * gridDim.x)
    y[i] = x[i] * factor;
}

extern "C" int kiln_candidate_abi_version(void) { return KILN_CANDIDATE_ABI_VERSION; }

extern "C" int kiln_candidate_run(const KilnCandidateArgs* a) {
  if (a->dtype != KILN_FP32 || a->num_inputs < 1 || a->num_outputs != 1) return 1;
  static double* sum = nullptr;
  if (sum == nullptr && cudaMalloc(&sum, sizeof(double)) != cudaSuccess) return 2;
  const float* x = static_cast<const float*>(a->inputs[0]);
  float* y = static_cast<float*>(a->outputs[0]);
  const size_t n = a->output_bytes[0] / 4;
  cudaStream_t stream = static_cast<cudaStream_t>(a->stream);
  if (cudaMemsetAsync(sum, 0, sizeof(double), stream) != cudaSuccess) return 3;
  squares<<<1024, 256, 0, stream>>>(x, n, sum);
  scale<<<1024, 256, 0, stream>>>(x, y, n, sum);
  return cudaGetLastError() == cudaSuccess ? 0 : 4;
}
