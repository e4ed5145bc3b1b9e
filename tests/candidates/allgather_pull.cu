// A correct outside candidate for the allgather problem: a one-block barrier over the candidate
// scratch (every rank's inputs are written once its peers arrive), then every rank's input is
// copied from peer memory into the output, all on the stream kiln gives.
#include "common_barrier.cuh"

extern "C" int kiln_candidate_abi_version(void) { return KILN_CANDIDATE_ABI_VERSION; }

extern "C" int kiln_candidate_run(const KilnCandidateArgs* a) {
  if (a->num_inputs != 1 || a->num_outputs != 1 || a->world > 8) return 1;
  const CandidatePeers p = candidate_peers(a);
  cudaStream_t stream = static_cast<cudaStream_t>(a->stream);
  candidate_barrier<<<1, 32, 0, stream>>>(p);
  candidate_gather<<<132, 256, 0, stream>>>(p, static_cast<char*>(a->outputs[0]),
                                            a->output_bytes[0]);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
