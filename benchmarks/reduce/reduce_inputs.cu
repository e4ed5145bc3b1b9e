// Reduction inputs (see reduce_inputs.hpp): a counter-based hash per element, so any size fills
// in one pass and the same seed gives the same array.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "benchmarks/reduce/reduce_inputs.hpp"
#include "core/cuda_check.hpp"

namespace kiln::benchmarks {
namespace {

__device__ __forceinline__ std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

template <typename T>
__global__ void fill_kernel(T* out, std::int64_t count, std::uint64_t seed) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += stride) {
    const std::uint64_t h = mix(seed * 0x9e3779b97f4a7c15ull + static_cast<std::uint64_t>(i));
    if constexpr (std::is_same_v<T, int>) {
      out[i] = static_cast<int>(h % 2001) - 1000;
    } else {
      const float u = 0.25f + static_cast<float>(h >> 40) * (1.0f / 16777216.0f);
      if constexpr (std::is_same_v<T, float>)
        out[i] = u;
      else if constexpr (std::is_same_v<T, __nv_bfloat16>)
        out[i] = __float2bfloat16_rn(u);
      else
        out[i] = __float2half_rn(u);
    }
  }
}

template <typename T>
void launch(void* buffer, std::int64_t count, std::uint64_t seed, cudaStream_t stream) {
  fill_kernel<T><<<4096, 256, 0, stream>>>(static_cast<T*>(buffer), count, seed);
  KILN_CUDA_CHECK_LAUNCH();
}

}  // namespace

void fill_reduce_input(void* buffer, core::DType dtype, std::int64_t count, std::uint64_t seed,
                       cudaStream_t stream) {
  if (count <= 0) return;
  switch (dtype) {
    case core::DType::kInt32:
      return launch<int>(buffer, count, seed, stream);
    case core::DType::kFp32:
      return launch<float>(buffer, count, seed, stream);
    case core::DType::kBf16:
      return launch<__nv_bfloat16>(buffer, count, seed, stream);
    case core::DType::kFp16:
      return launch<__half>(buffer, count, seed, stream);
  }
}

}  // namespace kiln::benchmarks
