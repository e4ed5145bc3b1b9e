// Deterministic pseudo-random test inputs, computable on host and device from (seed, rank, index)
// alone, so a checker can rebuild any rank's input without communication. Values are small
// non-zero integers: exact in bf16/fp16/fp32/int32 and under sums over up to 64 ranks, so a
// correct collective matches its reference bit for bit.
#pragma once

#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define KILN_HOST_DEVICE __host__ __device__
#else
#define KILN_HOST_DEVICE
#endif

namespace kiln::core {

// splitmix64 finalizer (Steele, Lea, Flood 2014): a cheap, well-mixed 64-bit hash.
KILN_HOST_DEVICE inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// A value in {-4, -3, -2, -1, 1, 2, 3, 4}: never zero, so an unwritten (zeroed) output shows.
KILN_HOST_DEVICE inline int test_value(std::uint64_t seed, int rank, std::uint64_t index) {
  const std::uint64_t h =
      mix64(seed ^ mix64(index * 0x100000001B3ull + static_cast<std::uint64_t>(rank)));
  const int v = static_cast<int>(h & 7u);
  return v < 4 ? v - 4 : v - 3;
}

// Uniform in [-1, 1): inputs for rate measurements (GEMMs), where exactness does not matter.
KILN_HOST_DEVICE inline float uniform_value(std::uint64_t seed, std::uint64_t index) {
  const std::uint64_t h = mix64(seed ^ mix64(index));
  return static_cast<float>(static_cast<double>(h >> 40) / static_cast<double>(1ull << 23)) - 1.0f;
}

// Standard normal (Box-Muller on two 24-bit uniforms of one hash): inputs for rate measurements
// that PyTorch's torch.randn operands are compared with. A power-capped GEMM's clock depends on
// how many operand bits toggle, so kiln's and PyTorch's GEMMs are timed on the same distribution.
KILN_HOST_DEVICE inline float normal_value(std::uint64_t seed, std::uint64_t index) {
  const std::uint64_t h = mix64(seed ^ mix64(index ^ 0x6E6F726D616CULL));  // "normal"
  // u1 in (0, 1] keeps the logarithm finite; u2 in [0, 1).
  const float u1 = static_cast<float>((h >> 40) + 1) * (1.0f / 16777216.0f);
  const float u2 = static_cast<float>((h >> 16) & 0xFFFFFFull) * (1.0f / 16777216.0f);
  return sqrtf(-2.0f * logf(u1)) * cosf(6.2831853f * u2);
}

}  // namespace kiln::core
