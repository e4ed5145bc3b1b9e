// The GPU tests' comparisons of 16-bit device results with a reference: read back as floats, then
// the relative L2 error (infinite when a value is not finite, e.g. poison left in place).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/cuda_check.hpp"
#include "core/half_bits.hpp"

namespace kiln::testing {

// `count` bf16 or fp16 values at device address `data`, as floats.
inline std::vector<float> download_floats(const void* data, std::size_t count,
                                          core::DType dtype = core::DType::kBf16) {
  std::vector<std::uint16_t> raw(count);
  KILN_CUDA_CHECK(cudaMemcpy(raw.data(), data, count * 2, cudaMemcpyDeviceToHost));
  std::vector<float> out(count);
  for (std::size_t i = 0; i < count; ++i) out[i] = core::half_bits_to_float(raw[i], dtype);
  return out;
}

// ||got - want|| / ||want|| over the first got.size() values.
inline double relative_error(const std::vector<float>& got, const std::vector<float>& want) {
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(got[i])) return INFINITY;
    diff += (got[i] - want[i]) * double(got[i] - want[i]);
    norm += double(want[i]) * want[i];
  }
  return std::sqrt(diff / std::max(norm, 1e-30));
}

}  // namespace kiln::testing
