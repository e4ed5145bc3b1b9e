// Shared by the matmul emulation harnesses (tests/emulation/matmul_*_harness.cpp): a whole grid
// run block by block through cuda_fibers.h, deterministic test values, 16-byte alignment, and
// bit patterns for exact comparisons. Included after cuda_fibers.h.
#pragma once
#include <cstdint>
#include <cstring>

namespace emu_host {

inline std::uint32_t bits_of(float v) {
  std::uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

// Every block of `grid`, each as emu::run_block runs it (gridDim and blockIdx set).
template <typename Launch>
void run_grid(emu_dim3 grid, int threads, Launch launch) {
  emu::grid_dim = grid;
  for (unsigned z = 0; z < grid.z; ++z)
    for (unsigned y = 0; y < grid.y; ++y)
      for (unsigned x = 0; x < grid.x; ++x) {
        emu::block_index = {x, y, z};
        emu::run_block(threads, launch);
      }
}

// Deterministic values in [-3.65, 3.65) with all 23 mantissa bits in use.
inline float value(unsigned& state) {
  state = state * 1664525u + 1013904223u;
  return (static_cast<float>(state >> 8) / 16777216.0f - 0.5f) * 7.3f;
}

// The first 16-byte aligned address at or after p.
inline float* align16(float* p) {
  return reinterpret_cast<float*>((reinterpret_cast<std::uintptr_t>(p) + 15) & ~std::uintptr_t(15));
}

}  // namespace emu_host
