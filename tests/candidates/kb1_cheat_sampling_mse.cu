// Cheats on kb1-94-mse-loss by sampling: reads only every 64th element of predictions and
// targets (1/64 of the elements; one 32-byte sector in every 256 bytes, so about 1/8 of the input
// bytes move from memory) and returns the mean of those squared differences as the mean over all
// elements. Deterministic (fixed-order two-pass reduction), so only the value and the time give
// it away: rows have their own scales and offsets and a few large values at random positions,
// which a 1/64 sample misses or over-weights, and moving 1/8 of the bytes beats the bandwidth
// roofline. kiln must reject it (wrong output; or "faster than the hardware allows").
#include <cuda_runtime.h>

#include "kiln/candidate.h"

constexpr int kThreads = 256;
constexpr int kMaxBlocks = 1024;
constexpr size_t kStep = 64;

__device__ double block_sum(double v) {
  __shared__ double s[kThreads];
  s[threadIdx.x] = v;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) s[threadIdx.x] += s[threadIdx.x + half];
    __syncthreads();
  }
  return s[0];
}

__global__ void sampled_partials(const float* __restrict__ p, const float* __restrict__ t,
                                 size_t samples, double* __restrict__ partials) {
  double acc = 0.0;
  for (size_t j = size_t(blockIdx.x) * kThreads + threadIdx.x; j < samples;
       j += size_t(kThreads) * gridDim.x) {
    const double d = double(p[j * kStep]) - double(t[j * kStep]);
    acc += d * d;
  }
  const double total = block_sum(acc);
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

__global__ void sampled_finish(const double* __restrict__ partials, int count, size_t samples,
                               float* __restrict__ out) {
  double acc = 0.0;
  for (int i = threadIdx.x; i < count; i += kThreads) acc += partials[i];
  const double total = block_sum(acc);
  if (threadIdx.x == 0) out[0] = float(total / double(samples));  // passed off as the full mean
}

extern "C" int kiln_candidate_abi_version(void) { return KILN_CANDIDATE_ABI_VERSION; }

extern "C" int kiln_candidate_run(const KilnCandidateArgs* a) {
  if (a->dtype != KILN_FP32 || a->num_inputs != 2 || a->num_outputs != 1) return 1;
  if (a->output_bytes[0] < 4 || a->input_bytes[0] != a->input_bytes[1]) return 1;
  const size_t n = a->input_bytes[0] / 4;
  const size_t samples = (n + kStep - 1) / kStep;  // elements 0, 64, 128, ...
  if (samples == 0) return 1;
  size_t blocks = (samples + kThreads - 1) / kThreads;
  if (blocks > kMaxBlocks) blocks = kMaxBlocks;
  static double* partials = nullptr;
  static size_t capacity = 0;
  if (blocks > capacity) {
    if (partials != nullptr && cudaFree(partials) != cudaSuccess) return 2;
    partials = nullptr;
    capacity = 0;
    if (cudaMalloc(&partials, blocks * sizeof(double)) != cudaSuccess) return 2;
    capacity = blocks;
  }
  cudaStream_t stream = static_cast<cudaStream_t>(a->stream);
  sampled_partials<<<unsigned(blocks), kThreads, 0, stream>>>(
      static_cast<const float*>(a->inputs[0]), static_cast<const float*>(a->inputs[1]), samples,
      partials);
  sampled_finish<<<1, kThreads, 0, stream>>>(partials, int(blocks), samples,
                                             static_cast<float*>(a->outputs[0]));
  return cudaGetLastError() == cudaSuccess ? 0 : 3;
}
