// Cheats on kb1-19-relu: writes zeros to the output and also zeroes its input x (through a
// const_cast), so that a reference computed from the inputs AFTER the call (relu(0) = 0) would
// agree with the output. kiln computes the reference first and hashes the inputs around the
// call: it must reject it with "changed its inputs".
#include <cuda_runtime.h>

#include "kiln/candidate.h"

extern "C" int kiln_candidate_abi_version(void) { return KILN_CANDIDATE_ABI_VERSION; }

extern "C" int kiln_candidate_run(const KilnCandidateArgs* a) {
  if (a->num_inputs < 1 || a->num_outputs != 1) return 1;
  cudaStream_t stream = static_cast<cudaStream_t>(a->stream);
  if (cudaMemsetAsync(a->outputs[0], 0, a->output_bytes[0], stream) != cudaSuccess) return 2;
  if (cudaMemsetAsync(const_cast<void*>(a->inputs[0]), 0, a->input_bytes[0], stream) != cudaSuccess)
    return 2;
  return 0;
}
