// Device fills: test values for checked runs, uniform values for rate measurements, poison.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "core/dtype.hpp"

namespace kiln::core {

// buffer[i] = test_value(seed, rank, i) for i < count.
void fill_test_values(void* buffer, DType dtype, std::uint64_t count, std::uint64_t seed, int rank,
                      cudaStream_t stream);
// buffer[i] = uniform_value(seed, i) in [-1, 1) (integers: 0 or -1; use for float types).
void fill_uniform(void* buffer, DType dtype, std::uint64_t count, std::uint64_t seed,
                  cudaStream_t stream);
// buffer[i] = normal_value(seed, i), standard normal (float types).
void fill_normal(void* buffer, DType dtype, std::uint64_t count, std::uint64_t seed,
                 cudaStream_t stream);

// The values a rate measurement multiplies: uniform in [-1, 1) (kiln's records before 2026-11-28)
// or standard normal (torch.randn's, what PyTorch's side of every comparison uses).
enum class ValueDistribution { kUniform, kNormal };
// "uniform" | "normal"; anything else throws UsageError naming `argument` and the accepted values.
ValueDistribution parse_value_distribution(const std::string& text, const std::string& argument);
std::string value_distribution_name(ValueDistribution distribution);
void fill_random(void* buffer, DType dtype, std::uint64_t count, std::uint64_t seed,
                 ValueDistribution distribution, cudaStream_t stream);

// Fills every byte with 0x7F: NaN in fp16, ~3.4e38 in bf16/fp32, 0x7F7F7F7F in int32 — never a
// value a correct kernel writes in kiln's checks.
void poison(void* buffer, std::uint64_t bytes, cudaStream_t stream);

}  // namespace kiln::core
