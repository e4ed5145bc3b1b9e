// Host conversion of a stored bf16 or fp16 value (its 16 bits) to float, for checks that read
// device results back without CUDA's half types; and the device's bf16 rounding, for checks that
// rebuild bf16 inputs on the host.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/dtype.hpp"

namespace kiln::core {

inline float half_bits_to_float(std::uint16_t bits, DType dtype) {
  if (dtype == DType::kBf16) {
    const std::uint32_t word = static_cast<std::uint32_t>(bits) << 16;
    float value;
    std::memcpy(&value, &word, sizeof(value));
    return value;
  }
  const int sign = bits >> 15, exponent = (bits >> 10) & 0x1F, mantissa = bits & 0x3FF;
  float value;
  if (exponent == 0)
    value = std::ldexp(static_cast<float>(mantissa), -24);
  else if (exponent == 31)
    value = mantissa ? NAN : INFINITY;
  else
    value = std::ldexp(static_cast<float>(mantissa | 0x400), exponent - 25);
  return sign ? -value : value;
}

// A finite float rounded to bf16 (round to nearest even, as __float2bfloat16_rn), as a float.
inline float round_to_bf16(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  bits = (bits + 0x7FFFu + ((bits >> 16) & 1u)) & 0xFFFF0000u;
  float out;
  std::memcpy(&out, &bits, sizeof(out));
  return out;
}

}  // namespace kiln::core
