// CUB's device-wide int32 sum (cub::DeviceReduce::Sum), called as a CUB user would: the library
// baseline of the reduce-sum-int32 problem.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace kiln::problems {

// Bytes of temporary storage CUB asks for (its own query).
std::size_t cub_sum_int32_temp_bytes(std::int64_t count);
// out[0] = sum of in[0 .. count) with int32 wrap-around; throws kiln::Error on a CUDA error.
void launch_cub_sum_int32(const std::int32_t* in, std::int32_t* out, std::int64_t count, void* temp,
                          std::size_t temp_bytes, cudaStream_t stream);

}  // namespace kiln::problems
