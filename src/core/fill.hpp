// Device fills: test values for checked runs, uniform values for rate measurements, poison.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/dtype.hpp"

namespace kiln::core {

// buffer[i] = test_value(seed, rank, i) for i < count.
void fill_test_values(void* buffer, DType dtype, std::uint64_t count, std::uint64_t seed, int rank,
                      cudaStream_t stream);
// buffer[i] = uniform_value(seed, i) in [-1, 1) (integers: 0 or -1; use for float types).
void fill_uniform(void* buffer, DType dtype, std::uint64_t count, std::uint64_t seed,
                  cudaStream_t stream);
// Fills every byte with 0x7F: NaN in fp16, ~3.4e38 in bf16/fp32, 0x7F7F7F7F in int32 — never a
// value a correct kernel writes in kiln's checks.
void poison(void* buffer, std::uint64_t bytes, cudaStream_t stream);

}  // namespace kiln::core
