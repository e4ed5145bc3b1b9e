// Never finishes: a kernel that spins forever on kiln's stream. kiln must abort it at --timeout
// and reject it.
#include <cuda_runtime.h>

#include "kiln/candidate.h"

__global__ void spin(volatile int* never) {
  while (*never == 0) {
  }
}

static int* flag = nullptr;

extern "C" int kiln_candidate_run(const KilnCandidateArgs* a) {
  if (flag == nullptr) {
    cudaMalloc(&flag, sizeof(int));
    cudaMemset(flag, 0, sizeof(int));
  }
  spin<<<1, 1, 0, static_cast<cudaStream_t>(a->stream)>>>(flag);
  return 0;
}
