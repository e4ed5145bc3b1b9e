#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "benchmarks/collective/collective_check.hpp"
#include "core/cuda_check.hpp"

namespace kiln::benchmarks {
namespace {

__device__ bool matches(__nv_bfloat16 v, int expected) {
  return __bfloat162float(v) == static_cast<float>(expected);
}
__device__ bool matches(__half v, int expected) {
  return __half2float(v) == static_cast<float>(expected);
}
__device__ bool matches(float v, int expected) {
  return v == static_cast<float>(expected);
}
__device__ bool matches(int v, int expected) {
  return v == expected;
}

template <typename T>
__global__ void count_wrong_kernel(const T* recv, std::uint64_t count, CollectiveExpectation e,
                                   unsigned long long* counter) {
  unsigned long long wrong = 0;
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
       i < count; i += stride) {
    if (!matches(recv[i], expected_value(e, i))) ++wrong;
  }
  // One atomic per warp keeps the counter off the critical path.
  for (int offset = 16; offset > 0; offset /= 2)
    wrong += __shfl_down_sync(0xFFFFFFFFu, wrong, offset);
  if ((threadIdx.x & 31) == 0 && wrong != 0) atomicAdd(counter, wrong);
}

template <typename T>
void launch(const void* recv, std::uint64_t count, const CollectiveExpectation& e,
            unsigned long long* counter, cudaStream_t stream) {
  const std::uint64_t blocks = (count + 255) / 256;
  const unsigned grid = static_cast<unsigned>(blocks < 8192 ? (blocks == 0 ? 1 : blocks) : 8192);
  count_wrong_kernel<T><<<grid, 256, 0, stream>>>(static_cast<const T*>(recv), count, e, counter);
  KILN_CUDA_CHECK_LAUNCH();
}

}  // namespace

void count_wrong_elements(const void* recv, core::DType dtype, std::uint64_t count,
                          const CollectiveExpectation& expectation,
                          unsigned long long* device_counter, cudaStream_t stream) {
  if (count == 0) return;
  switch (dtype) {
    case core::DType::kBf16:
      launch<__nv_bfloat16>(recv, count, expectation, device_counter, stream);
      break;
    case core::DType::kFp16:
      launch<__half>(recv, count, expectation, device_counter, stream);
      break;
    case core::DType::kFp32:
      launch<float>(recv, count, expectation, device_counter, stream);
      break;
    case core::DType::kInt32:
      launch<int>(recv, count, expectation, device_counter, stream);
      break;
  }
}

}  // namespace kiln::benchmarks
