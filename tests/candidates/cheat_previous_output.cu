// Cheats: computes the first call honestly, then replays that output on every later call
// (stale results). kiln must reject it: every trial has fresh inputs.
#include "common_barrier.cuh"

static void* saved = nullptr;

extern "C" int kiln_candidate_run(const KilnCandidateArgs* a) {
  const CandidatePeers p = candidate_peers(a);
  cudaStream_t stream = static_cast<cudaStream_t>(a->stream);
  if (saved == nullptr) {
    candidate_barrier<<<1, 32, 0, stream>>>(p);
    candidate_gather<<<132, 256, 0, stream>>>(p, static_cast<char*>(a->outputs[0]),
                                              a->output_bytes[0]);
    cudaMalloc(&saved, a->output_bytes[0]);
    cudaMemcpyAsync(saved, a->outputs[0], a->output_bytes[0], cudaMemcpyDeviceToDevice, stream);
  } else {
    cudaMemcpyAsync(a->outputs[0], saved, a->output_bytes[0], cudaMemcpyDeviceToDevice, stream);
  }
  return 0;
}
