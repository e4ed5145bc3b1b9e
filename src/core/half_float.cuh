// Device conversions between the 16-bit float types (and float) and float, for kernels that add
// in fp32 and round once: kiln's reorder, the NVLink collectives.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

namespace kiln::core {

template <typename T>
__device__ __forceinline__ float to_float(T v) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __bfloat162float(v);
  else if constexpr (std::is_same_v<T, __half>)
    return __half2float(v);
  else
    return static_cast<float>(v);
}

// Rounds to nearest even.
template <typename T>
__device__ __forceinline__ T from_float(float v) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __float2bfloat16_rn(v);
  else if constexpr (std::is_same_v<T, __half>)
    return __float2half_rn(v);
  else
    return static_cast<T>(v);
}

}  // namespace kiln::core
