// Kernels of the matmul kb1 problems (1-4, 6-18): a plain reference GEMM over strided,
// optionally transposed and batched fp32 operands, with double accumulators; a warp-per-row
// reference GEMV; and the input shapes some problems need (triangular, symmetric).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace kiln::problems::kb1 {

// C[b][i][j] = sum_k A(b, i, k) * B(b, k, j), C row-major (m x n per batch), A(b, i, k) at
// a[b * a_batch + i * a_row + k * a_col], B(b, k, j) at b[b * b_batch + k * b_row + j * b_col].
struct GemmOperands {
  std::int64_t batch = 1, m = 0, n = 0, k = 0;
  std::int64_t a_batch = 0, a_row = 0, a_col = 0;
  std::int64_t b_batch = 0, b_row = 0, b_col = 0;
};

// 32x32 output tiles through shared memory, one double accumulator per output.
void launch_gemm_reference(const GemmOperands& g, const float* a, const float* b, float* c,
                           cudaStream_t stream);
// y[i] = sum_k A[i][k] x[k], A row-major m x k: one warp per row, double accumulators.
void launch_gemv_reference(const float* a, const float* x, float* y, std::int64_t m, std::int64_t k,
                           cudaStream_t stream);
// Zeroes the strict lower (upper = true keeps the upper triangle) or strict upper triangle of
// an n x n row-major matrix.
void keep_triangle(float* a, std::int64_t n, bool upper, cudaStream_t stream);
// a := (a + a^T) / 2 for an n x n row-major matrix, in place.
void symmetrize(float* a, std::int64_t n, cudaStream_t stream);
// y[i][j] = d[i] * b[i][j] (diag(d) @ B), one thread per element (the reference of 12).
void launch_row_scale_reference(const float* d, const float* b, float* y, std::int64_t rows,
                                std::int64_t cols, cudaStream_t stream);

// x[i] *= factor.
void scale_in_place(float* x, std::int64_t count, float factor, cudaStream_t stream);

}  // namespace kiln::problems::kb1
