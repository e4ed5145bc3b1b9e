// Cheats: rank 1 does nothing (its peers still pass their barrier against rank 1's flag, set
// from the host side here so that nothing hangs). kiln must reject it: every rank is checked.
#include "common_barrier.cuh"

extern "C" int kiln_candidate_run(const KilnCandidateArgs* a) {
  const CandidatePeers p = candidate_peers(a);
  cudaStream_t stream = static_cast<cudaStream_t>(a->stream);
  if (a->rank == 1) {
    // Announce arrival to every peer without doing the work.
    for (int r = 0; r < a->world; ++r) {
      if (r == 1) continue;
      cudaMemcpyAsync(p.scratch[r] + 1, &a->call, sizeof(unsigned long long),
                      cudaMemcpyHostToDevice, stream);
    }
    cudaStreamSynchronize(stream);
    return 0;
  }
  candidate_barrier<<<1, 32, 0, stream>>>(p);
  candidate_gather<<<132, 256, 0, stream>>>(p, static_cast<char*>(a->outputs[0]),
                                            a->output_bytes[0]);
  return 0;
}
