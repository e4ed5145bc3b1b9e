// Cheats the clock: does the work (plus 300 us of busy time) on a stream of its own and never
// joins kiln's stream, so events on kiln's stream see almost nothing. kiln must reject it
// (output incomplete when checked, or the device-wide timing disagrees with the events).
#include "common_barrier.cuh"

__global__ void busy(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

static cudaStream_t own = nullptr;

extern "C" int kiln_candidate_run(const KilnCandidateArgs* a) {
  if (own == nullptr) cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking);
  const CandidatePeers p = candidate_peers(a);
  candidate_barrier<<<1, 32, 0, own>>>(p);
  busy<<<1, 1, 0, own>>>(600000);  // ~300 us at 2 GHz
  candidate_gather<<<132, 256, 0, own>>>(p, static_cast<char*>(a->outputs[0]),
                                         a->output_bytes[0]);
  return 0;
}
