// cub::DeviceReduce::Sum as an outside candidate for reduce-sum-int32: the library yardstick of
// issue 20's ladder test, judged by the same `kiln bench candidate` path (fresh inputs every call,
// the same timing) as the kernels `kiln evolve` generates. Temporary storage is allocated on the
// first call and grown when a larger size needs more (CUB's own query).
#include <cub/device/device_reduce.cuh>
#include <cuda_runtime.h>

#include <cstring>

#include "kiln/candidate.h"

static void* temp = nullptr;
static size_t temp_bytes = 0;

extern "C" int kiln_candidate_abi_version(void) { return KILN_CANDIDATE_ABI_VERSION; }

extern "C" int kiln_candidate_run(const KilnCandidateArgs* a) {
  long long n = 0;
  for (int i = 0; i < a->num_dims; ++i)
    if (std::strcmp(a->dim_names[i], "count") == 0) n = a->dims[i];
  if (n <= 0 || a->num_inputs < 1 || a->num_outputs < 1) return 2;
  const int* in = static_cast<const int*>(a->inputs[0]);
  int* out = static_cast<int*>(a->outputs[0]);
  cudaStream_t stream = static_cast<cudaStream_t>(a->stream);
  size_t need = 0;
  if (cub::DeviceReduce::Sum(nullptr, need, in, out, n, stream) != cudaSuccess) return 1;
  if (need > temp_bytes) {
    cudaFree(temp);
    temp = nullptr;
    temp_bytes = 0;
    if (cudaMalloc(&temp, need) != cudaSuccess) return 3;
    temp_bytes = need;
  }
  return cub::DeviceReduce::Sum(temp, temp_bytes, in, out, n, stream) == cudaSuccess ? 0 : 1;
}
