// Kernels of the reduction kb1 problems: over the middle dimension of a (B, D1, D2) tensor
// (47-49, 51-53) and the mean squared error to a scalar (94). fp32 in; fp32 or int64 out.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace kiln::problems::kb1 {

enum class ReduceOp { kSum, kMean, kMax, kMin, kArgmax, kArgmin };

// True for the ops whose output is int64 indices.
inline bool reduce_writes_indices(ReduceOp op) {
  return op == ReduceOp::kArgmax || op == ReduceOp::kArgmin;
}

// Reference: one thread per output, the middle dimension in order, sums in double; ties keep
// the first index (PyTorch's documented argmax/argmin).
void launch_dim_reduce_reference(ReduceOp op, const float* x, void* out, std::int64_t b,
                                 std::int64_t d1, std::int64_t d2, cudaStream_t stream);
// kiln: 32 outputs per block along D2 (coalesced), the middle dimension split over 8 warps and
// combined in shared memory (more parallelism when B * D2 is small).
void launch_dim_reduce_kiln(ReduceOp op, const float* x, void* out, std::int64_t b, std::int64_t d1,
                            std::int64_t d2, cudaStream_t stream);

// mean((p - t)^2) over `count` elements into one float. `partials` holds at least
// mse_partials(count) doubles. Reference: a block per row of `cols`, double sums, then the
// rows in order. kiln: 16-byte loads, a fixed grid, block partials in double, one final block.
std::int64_t mse_partials(std::int64_t rows);
void launch_mse_reference(const float* p, const float* t, float* out, double* partials,
                          std::int64_t rows, std::int64_t cols, cudaStream_t stream);
void launch_mse_kiln(const float* p, const float* t, float* out, double* partials,
                     std::int64_t count, cudaStream_t stream);

}  // namespace kiln::problems::kb1
