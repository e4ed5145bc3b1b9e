// Vocab-parallel cross-entropy kernels (see vocab_parallel_ce_kernels.hpp). One block of 256
// threads per token; bf16 logits read once per pass, fp32 arithmetic.
#include <cuda_bf16.h>

#include <cfloat>

#include "core/cuda_check.hpp"
#include "problems/vocab_parallel_ce_kernels.hpp"

namespace kiln::problems {
namespace {

constexpr int kThreads = 256;

__device__ __forceinline__ float logit(const __nv_bfloat16* row, int j) {
  return __bfloat162float(row[j]);
}

// Block-wide max; every thread gets the result.
__device__ float block_max(float v) {
  __shared__ float warps[kThreads / 32];
  for (int o = 16; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = v;
  __syncthreads();
  float m = -FLT_MAX;
  for (int w = 0; w < kThreads / 32; ++w) m = fmaxf(m, warps[w]);
  __syncthreads();
  return m;
}

__device__ float block_sum(float v) {
  __shared__ float warps[kThreads / 32];
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = v;
  __syncthreads();
  float s = 0.0f;
  for (int w = 0; w < kThreads / 32; ++w) s += warps[w];
  __syncthreads();
  return s;
}

__global__ void max_kernel(const __nv_bfloat16* logits, int vocab_local, float* out) {
  const __nv_bfloat16* row = logits + static_cast<long long>(blockIdx.x) * vocab_local;
  float m = -FLT_MAX;
  for (int j = threadIdx.x; j < vocab_local; j += kThreads) m = fmaxf(m, logit(row, j));
  m = block_max(m);
  if (threadIdx.x == 0) out[blockIdx.x] = m;
}

__global__ void sum_exp_kernel(const __nv_bfloat16* logits, int vocab_local, const float* gmax,
                               float* out) {
  const __nv_bfloat16* row = logits + static_cast<long long>(blockIdx.x) * vocab_local;
  const float m = gmax[blockIdx.x];
  float s = 0.0f;
  for (int j = threadIdx.x; j < vocab_local; j += kThreads) s += __expf(logit(row, j) - m);
  s = block_sum(s);
  if (threadIdx.x == 0) out[blockIdx.x] = s;
}

__global__ void target_kernel(const __nv_bfloat16* logits, const int* targets, int tokens,
                              int vocab_local, int vocab_start, float* out) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= tokens) return;
  const int local = targets[t] - vocab_start;
  out[t] = local >= 0 && local < vocab_local
               ? logit(logits + static_cast<long long>(t) * vocab_local, local)
               : 0.0f;
}

__global__ void finish_kernel(const float* gmax, const float* sum, const float* target, int tokens,
                              float* loss) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < tokens) loss[t] = logf(sum[t]) + gmax[t] - target[t];
}

// One pass (online softmax, Milakov & Gimelshein 2018): each thread keeps (max, sum exp(x-max)).
__global__ void stats_kernel(const __nv_bfloat16* logits, const int* targets, int vocab_local,
                             int vocab_start, float4* stats) {
  const __nv_bfloat16* row = logits + static_cast<long long>(blockIdx.x) * vocab_local;
  float m = -FLT_MAX, s = 0.0f;
  for (int j = threadIdx.x; j < vocab_local; j += kThreads) {
    const float x = logit(row, j);
    if (x > m) {
      s = s * __expf(m - x) + 1.0f;
      m = x;
    } else {
      s += __expf(x - m);
    }
  }
  const float block_m = block_max(m);
  s = s == 0.0f ? 0.0f : s * __expf(m - block_m);
  s = block_sum(s);
  if (threadIdx.x == 0) {
    const int local = targets[blockIdx.x] - vocab_start;
    const float target = local >= 0 && local < vocab_local ? logit(row, local) : 0.0f;
    stats[blockIdx.x] = make_float4(block_m, s, target, 0.0f);
  }
}

__global__ void merge_kernel(const float4* gathered, int world, int tokens, float* loss) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= tokens) return;
  float m = -FLT_MAX;
  for (int r = 0; r < world; ++r) m = fmaxf(m, gathered[r * tokens + t].x);
  float s = 0.0f, target = 0.0f;
  for (int r = 0; r < world; ++r) {
    const float4 v = gathered[r * tokens + t];
    s += v.y * __expf(v.x - m);
    target += v.z;
  }
  loss[t] = logf(s) + m - target;
}

unsigned blocks_for(int tokens) {
  return static_cast<unsigned>((tokens + 255) / 256);
}

}  // namespace

void ce_local_max(const void* logits, int tokens, int vocab_local, float* max_out,
                  cudaStream_t stream) {
  max_kernel<<<tokens, kThreads, 0, stream>>>(static_cast<const __nv_bfloat16*>(logits),
                                              vocab_local, max_out);
  KILN_CUDA_CHECK_LAUNCH();
}

void ce_local_sum_exp(const void* logits, int tokens, int vocab_local, const float* global_max,
                      float* sum_out, cudaStream_t stream) {
  sum_exp_kernel<<<tokens, kThreads, 0, stream>>>(static_cast<const __nv_bfloat16*>(logits),
                                                  vocab_local, global_max, sum_out);
  KILN_CUDA_CHECK_LAUNCH();
}

void ce_target_logit(const void* logits, const int* targets, int tokens, int vocab_local,
                     int vocab_start, float* target_out, cudaStream_t stream) {
  target_kernel<<<blocks_for(tokens), 256, 0, stream>>>(static_cast<const __nv_bfloat16*>(logits),
                                                        targets, tokens, vocab_local, vocab_start,
                                                        target_out);
  KILN_CUDA_CHECK_LAUNCH();
}

void ce_finish(const float* global_max, const float* sum, const float* target, int tokens,
               float* loss, cudaStream_t stream) {
  finish_kernel<<<blocks_for(tokens), 256, 0, stream>>>(global_max, sum, target, tokens, loss);
  KILN_CUDA_CHECK_LAUNCH();
}

void ce_local_stats(const void* logits, const int* targets, int tokens, int vocab_local,
                    int vocab_start, float* stats, cudaStream_t stream) {
  stats_kernel<<<tokens, kThreads, 0, stream>>>(static_cast<const __nv_bfloat16*>(logits), targets,
                                                vocab_local, vocab_start,
                                                reinterpret_cast<float4*>(stats));
  KILN_CUDA_CHECK_LAUNCH();
}

void ce_merge(const float* gathered, int world, int tokens, float* loss, cudaStream_t stream) {
  merge_kernel<<<blocks_for(tokens), 256, 0, stream>>>(reinterpret_cast<const float4*>(gathered),
                                                       world, tokens, loss);
  KILN_CUDA_CHECK_LAUNCH();
}

}  // namespace kiln::problems
