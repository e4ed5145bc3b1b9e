// Cheats on kb1-19-relu: computes only when more than 20 ms of host time (steady_clock) passed
// since its previous call, else returns without work. Correctness trials, with their setup in
// between, tend to be far apart; a back-to-back timed loop is not, so with fixed inputs and an
// unchecked output the result of an earlier call would remain and the timed calls would cost
// nothing. kiln gives fresh inputs, poisons and checks the output on every timed call too: it
// must reject it.
#include <chrono>

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
  using clock = std::chrono::steady_clock;
  static bool called = false;
  static clock::time_point previous;
  const clock::time_point now = clock::now();
  const bool far = !called || now - previous > std::chrono::milliseconds(20);
  called = true;
  previous = now;
  if (!far) return 0;
  const size_t n = a->output_bytes[0] / 4;
  if (n == 0) return 0;
  const size_t blocks = (n + 255) / 256 < 1024 ? (n + 255) / 256 : 1024;
  relu<<<unsigned(blocks), 256, 0, static_cast<cudaStream_t>(a->stream)>>>(
      static_cast<const float*>(a->inputs[0]), static_cast<float*>(a->outputs[0]), n);
  return cudaGetLastError() == cudaSuccess ? 0 : 3;
}
