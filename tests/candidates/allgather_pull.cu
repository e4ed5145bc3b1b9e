// A correct outside candidate for the allgather problem: each rank copies every rank's input
// (peer memory) into its output. No cross-rank barrier of its own: it relies on the problem's
// contract that inputs are complete before any rank's call (see tests/candidates/README.md).
#include <cuda_runtime.h>

#include "kiln/candidate.h"

namespace {
__global__ void gather(const char* const* sources, int world, unsigned long long bytes, char* out) {
  const unsigned long long total = bytes * world;
  for (unsigned long long i = blockIdx.x * 256ull + threadIdx.x; i < total;
       i += 256ull * gridDim.x) {
    out[i] = sources[i / bytes][i % bytes];
  }
}
}  // namespace

extern "C" int kiln_candidate_abi_version(void) { return KILN_CANDIDATE_ABI_VERSION; }

extern "C" int kiln_candidate_run(const KilnCandidateArgs* a) {
  if (a->num_inputs != 1 || a->num_outputs != 1) return 1;
  const char* sources[8];
  if (a->world > 8) return 2;
  for (int r = 0; r < a->world; ++r) sources[r] = static_cast<const char*>(a->peer_inputs[r]);
  const char** device_sources = nullptr;
  // Kernel arguments by value: a small struct would do; keep it plain for a test candidate.
  if (cudaMallocAsync(reinterpret_cast<void**>(&device_sources), sizeof(sources),
                      static_cast<cudaStream_t>(a->stream)) != cudaSuccess)
    return 3;
  cudaMemcpyAsync(device_sources, sources, sizeof(sources), cudaMemcpyHostToDevice,
                  static_cast<cudaStream_t>(a->stream));
  gather<<<132, 256, 0, static_cast<cudaStream_t>(a->stream)>>>(
      device_sources, a->world, a->input_bytes[0], static_cast<char*>(a->outputs[0]));
  cudaFreeAsync(device_sources, static_cast<cudaStream_t>(a->stream));
  return cudaGetLastError() == cudaSuccess ? 0 : 4;
}
