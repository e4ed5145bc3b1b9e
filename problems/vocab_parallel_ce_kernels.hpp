// Kernels of the vocab-parallel cross-entropy problem (problems/vocab_parallel_ce.cpp): each rank
// holds the logits of every token for its slice of the vocabulary (tokens x vocab_local bf16,
// row-major) and the global target of every token; loss = logsumexp over the whole vocabulary
// minus the target's logit.
#pragma once

#include <cuda_runtime.h>

namespace kiln::problems {

// Reference pieces (each followed by an NCCL all-reduce in the problem).
void ce_local_max(const void* logits, int tokens, int vocab_local, float* max_out,
                  cudaStream_t stream);
// sum_j exp(x_j - global_max) over this rank's slice.
void ce_local_sum_exp(const void* logits, int tokens, int vocab_local, const float* global_max,
                      float* sum_out, cudaStream_t stream);
// The target's logit when this rank holds it, else 0.
void ce_target_logit(const void* logits, const int* targets, int tokens, int vocab_local,
                     int vocab_start, float* target_out, cudaStream_t stream);
// loss = log(sum) + max - target.
void ce_finish(const float* global_max, const float* sum, const float* target, int tokens,
               float* loss, cudaStream_t stream);

// kiln's pieces: one pass per token gives (max, sum exp(x - max), target logit or 0, 0) into
// `stats` [tokens][4]; the merge combines every rank's stats [world][tokens][4] into the loss.
void ce_local_stats(const void* logits, const int* targets, int tokens, int vocab_local,
                    int vocab_start, float* stats, cudaStream_t stream);
void ce_merge(const float* gathered, int world, int tokens, float* loss, cudaStream_t stream);

}  // namespace kiln::problems
