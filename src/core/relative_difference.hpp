// The largest |got - want| and |want| over two bf16 device buffers, and the first element of
// each that is not finite, found on the device: the tensor-parallel problems compared their
// 32-128 MiB outputs on the host, which made every judged call of a tp-gemm row cost ~0.4 s of
// host time at 4 ranks (4xH200, 2026-11-27). The judgement itself (tolerance, messages) stays on
// the host, in the problem.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <optional>

#include "core/device_buffer.hpp"

namespace kiln::core {

struct RelativeDifference {
  double max_abs_difference = 0.0;  // over the elements where both are finite
  double max_abs_want = 0.0;        // over the finite elements of want
  std::optional<std::size_t> first_nonfinite_got, first_nonfinite_want;
};

class RelativeDifferenceMeter {
 public:
  RelativeDifferenceMeter();
  // Enqueues the measurement of `count` bf16 elements on `stream` and waits for it.
  RelativeDifference measure_bf16(const void* want, const void* got, std::size_t count,
                                  cudaStream_t stream);

 private:
  DeviceBuffer result_;  // two float bit patterns (as unsigned) and two element indices
};

}  // namespace kiln::core
