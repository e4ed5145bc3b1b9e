// cvt.rna.tf32.f32 on the host for the emulation harnesses: round to the nearest TF32 value (10
// mantissa bits, the low 13 bits zero), ties away from zero. The generated sources' tf32_big is
// inline PTX, left out of what the harnesses compile.
#pragma once
#include <cstdint>
#include <cstring>

inline float tf32_big(float x) {
  std::uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  bits = (bits + 0x1000u) & ~0x1fffu;
  float r;
  std::memcpy(&r, &bits, sizeof r);
  return r;
}
