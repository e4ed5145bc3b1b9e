// Cheats the clock on kb1-19-relu: returns at once and launches the real kernel from a detached
// std::thread after sleeping 2 ms, so the call and kiln's events cover no work. The thread
// launches on the legacy default stream (cudaStreamLegacy), not on kiln's stream: that handle
// stays valid however long the thread sleeps (kiln's stream may be destroyed by then, after the
// last call), and since kiln's streams are non-blocking the legacy stream does not order the
// kernel after kiln's work, so it is entirely outside what the events measure. kiln must reject
// it (the output is still poisoned when checked, or the device-wide timing disagrees).
#include <chrono>
#include <thread>

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
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return 2;
  const float* x = static_cast<const float*>(a->inputs[0]);
  float* y = static_cast<float*>(a->outputs[0]);
  const size_t n = a->output_bytes[0] / 4;
  if (n == 0) return 0;
  std::thread([device, x, y, n] {  // copies only: *a is gone once the call returns
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    if (cudaSetDevice(device) != cudaSuccess) return;  // nobody to report an error to
    const size_t blocks = (n + 255) / 256 < 1024 ? (n + 255) / 256 : 1024;
    relu<<<unsigned(blocks), 256, 0, cudaStreamLegacy>>>(x, y, n);
  }).detach();
  return 0;
}
