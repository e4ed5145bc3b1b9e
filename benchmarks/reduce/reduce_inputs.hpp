// Inputs of the reduction bench and tests: fresh pseudo-random values (never zeros) that keep
// sums meaningful: int32 in [-1000, 1000], floating types in [0.25, 1.25).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/dtype.hpp"

namespace kiln::benchmarks {

void fill_reduce_input(void* buffer, core::DType dtype, std::int64_t count, std::uint64_t seed,
                       cudaStream_t stream);

}  // namespace kiln::benchmarks
