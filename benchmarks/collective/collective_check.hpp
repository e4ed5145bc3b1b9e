// Counts the elements of a collective's output that differ from expected_value, on the device.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "benchmarks/collective/collective_expectation.hpp"
#include "core/dtype.hpp"

namespace kiln::benchmarks {

// Adds the number of wrong elements among recv[0, count) to *device_counter (unsigned long long).
void count_wrong_elements(const void* recv, core::DType dtype, std::uint64_t count,
                          const CollectiveExpectation& expectation,
                          unsigned long long* device_counter, cudaStream_t stream);

}  // namespace kiln::benchmarks
