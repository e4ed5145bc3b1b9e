// See reduce_sum_cub.hpp.
#include <cub/device/device_reduce.cuh>

#include "core/cuda_check.hpp"
#include "problems/reduce_sum_cub.hpp"

namespace kiln::problems {

std::size_t cub_sum_int32_temp_bytes(std::int64_t count) {
  std::size_t bytes = 0;
  KILN_CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, bytes, static_cast<const std::int32_t*>(nullptr),
                                         static_cast<std::int32_t*>(nullptr), count));
  return bytes;
}

void launch_cub_sum_int32(const std::int32_t* in, std::int32_t* out, std::int64_t count, void* temp,
                          std::size_t temp_bytes, cudaStream_t stream) {
  KILN_CUDA_CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, in, out, count, stream));
}

}  // namespace kiln::problems
