// Cheats: writes only the first half of the output. kiln must reject it: outputs are poisoned.
#include "common_barrier.cuh"

extern "C" int kiln_candidate_run(const KilnCandidateArgs* a) {
  const CandidatePeers p = candidate_peers(a);
  cudaStream_t stream = static_cast<cudaStream_t>(a->stream);
  candidate_barrier<<<1, 32, 0, stream>>>(p);
  candidate_gather<<<132, 256, 0, stream>>>(p, static_cast<char*>(a->outputs[0]),
                                            a->output_bytes[0] / 2);
  return 0;
}
