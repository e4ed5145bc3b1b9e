// A correct candidate for kb1-19-relu (single GPU, fp32): y = max(x, 0), float4 loads and
// stores in a grid-stride loop plus a scalar tail (n need not be a multiple of 4), all on the
// stream kiln gives. kiln must accept it.
#include <cuda_runtime.h>

#include "kiln/candidate.h"

__global__ void relu_vec4(const float* __restrict__ x, float* __restrict__ y, size_t n) {
  const size_t stride = size_t(blockDim.x) * gridDim.x;
  const size_t tid = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const size_t n4 = n / 4;
  const float4* x4 = reinterpret_cast<const float4*>(x);
  float4* y4 = reinterpret_cast<float4*>(y);
  for (size_t i = tid; i < n4; i += stride) {
    float4 v = x4[i];
    v.x = fmaxf(v.x, 0.f);
    v.y = fmaxf(v.y, 0.f);
    v.z = fmaxf(v.z, 0.f);
    v.w = fmaxf(v.w, 0.f);
    y4[i] = v;
  }
  for (size_t i = n4 * 4 + tid; i < n; i += stride) y[i] = fmaxf(x[i], 0.f);
}

__global__ void relu_scalar(const float* __restrict__ x, float* __restrict__ y, size_t n) {
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += size_t(blockDim.x) * gridDim.x)
    y[i] = fmaxf(x[i], 0.f);
}

extern "C" int kiln_candidate_abi_version(void) { return KILN_CANDIDATE_ABI_VERSION; }

extern "C" int kiln_candidate_run(const KilnCandidateArgs* a) {
  if (a->dtype != KILN_FP32 || a->num_inputs < 1 || a->num_outputs != 1) return 1;
  if (a->input_bytes[0] < a->output_bytes[0]) return 1;
  static int sms = 0;
  if (sms == 0) {
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
      return 2;
  }
  const float* x = static_cast<const float*>(a->inputs[0]);
  float* y = static_cast<float*>(a->outputs[0]);
  const size_t n = a->output_bytes[0] / 4;
  if (n == 0) return 0;
  cudaStream_t stream = static_cast<cudaStream_t>(a->stream);
  const int threads = 256;
  const bool aligned = (reinterpret_cast<size_t>(x) % 16 == 0) && (reinterpret_cast<size_t>(y) % 16 == 0);
  const size_t work = aligned ? (n + 3) / 4 : n;
  size_t blocks = (work + threads - 1) / threads;
  if (blocks > size_t(sms) * 8) blocks = size_t(sms) * 8;
  if (aligned)
    relu_vec4<<<unsigned(blocks), threads, 0, stream>>>(x, y, n);
  else
    relu_scalar<<<unsigned(blocks), threads, 0, stream>>>(x, y, n);
  return cudaGetLastError() == cudaSuccess ? 0 : 3;
}
