// The library solutions of the kb1 scans and MSE (issue 19's "strong library where one exists"):
// CUB's device-wide algorithms as a CUB user would call them. Scans: DeviceScan's by-key scans
// with the row index as the key (one scan over the whole tensor, restarting at every row).
// MSE: DeviceReduce over the squared differences, the mean written by the output iterator.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "problems/kb1_cumulative_kernels.hpp"

namespace kiln::problems::kb1 {

// Bytes of temporary storage the call needs (CUB's own query).
std::size_t cub_scan_temp_bytes(ScanOp op, std::int64_t rows, std::int64_t cols);
void launch_cub_scan(ScanOp op, const float* x, const std::uint8_t* mask, float* y,
                     std::int64_t rows, std::int64_t cols, void* temp, std::size_t temp_bytes,
                     cudaStream_t stream);

std::size_t cub_mse_temp_bytes(std::int64_t count);
void launch_cub_mse(const float* p, const float* t, float* out, std::int64_t count, void* temp,
                    std::size_t temp_bytes, cudaStream_t stream);

}  // namespace kiln::problems::kb1
