// Kernels of the matmul kb1 problems (see kb1_matmul_kernels.hpp).
#include "core/cuda_check.hpp"
#include "problems/kb1_matmul_kernels.hpp"

namespace kiln::problems::kb1 {
namespace {

constexpr int kTile = 32;

__global__ void gemm_tiles(GemmOperands g, const float* a, const float* b, float* c) {
  __shared__ float a_tile[kTile][kTile + 1];
  __shared__ float b_tile[kTile][kTile + 1];
  const std::int64_t batch = blockIdx.z;
  const std::int64_t row = blockIdx.y * static_cast<std::int64_t>(kTile) + threadIdx.y;
  const std::int64_t col = blockIdx.x * static_cast<std::int64_t>(kTile) + threadIdx.x;
  const float* ab = a + batch * g.a_batch;
  const float* bb = b + batch * g.b_batch;
  double sum = 0.0;
  for (std::int64_t k0 = 0; k0 < g.k; k0 += kTile) {
    const std::int64_t ak = k0 + threadIdx.x, bk = k0 + threadIdx.y;
    a_tile[threadIdx.y][threadIdx.x] =
        row < g.m && ak < g.k ? ab[row * g.a_row + ak * g.a_col] : 0.f;
    b_tile[threadIdx.y][threadIdx.x] =
        bk < g.k && col < g.n ? bb[bk * g.b_row + col * g.b_col] : 0.f;
    __syncthreads();
    for (int kk = 0; kk < kTile; ++kk)
      sum += static_cast<double>(a_tile[threadIdx.y][kk]) * b_tile[kk][threadIdx.x];
    __syncthreads();
  }
  if (row < g.m && col < g.n) c[(batch * g.m + row) * g.n + col] = static_cast<float>(sum);
}

__global__ void gemv_rows(const float* a, const float* x, float* y, std::int64_t m,
                          std::int64_t k) {
  const std::int64_t row = blockIdx.x * static_cast<std::int64_t>(blockDim.y) + threadIdx.y;
  if (row >= m) return;
  double sum = 0.0;
  for (std::int64_t i = threadIdx.x; i < k; i += 32)
    sum += static_cast<double>(a[row * k + i]) * x[i];
  for (int o = 16; o > 0; o /= 2) sum += __shfl_down_sync(0xffffffffu, sum, o);
  if (threadIdx.x == 0) y[row] = static_cast<float>(sum);
}

__global__ void triangle(float* a, std::int64_t n, bool upper) {
  for (std::int64_t e = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; e < n * n;
       e += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t i = e / n, j = e % n;
    if (upper ? j < i : j > i) a[e] = 0.0f;
  }
}

__global__ void symmetric(float* a, std::int64_t n) {
  for (std::int64_t e = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; e < n * n;
       e += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t i = e / n, j = e % n;
    if (j <= i) continue;  // each pair once, by its upper element
    const float v = (a[i * n + j] + a[j * n + i]) / 2.0f;
    a[i * n + j] = v;
    a[j * n + i] = v;
  }
}

__global__ void row_scale(const float* d, const float* b, float* y, std::int64_t rows,
                          std::int64_t cols) {
  const std::int64_t e = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (e < rows * cols) y[e] = d[e / cols] * b[e];
}

__global__ void scale(float* x, std::int64_t count, float factor) {
  for (std::int64_t e = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; e < count;
       e += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    x[e] *= factor;
}

unsigned blocks_for(std::int64_t count) {
  const std::int64_t b = (count + 255) / 256;
  return static_cast<unsigned>(b < 65536 ? (b > 0 ? b : 1) : 65536);
}

}  // namespace

void launch_gemm_reference(const GemmOperands& g, const float* a, const float* b, float* c,
                           cudaStream_t stream) {
  KILN_REQUIRE(g.m > 0 && g.n > 0 && g.k > 0 && g.batch > 0 && g.batch < 65536,
               "gemm reference: bad shape");
  const dim3 grid(static_cast<unsigned>((g.n + kTile - 1) / kTile),
                  static_cast<unsigned>((g.m + kTile - 1) / kTile), static_cast<unsigned>(g.batch));
  KILN_REQUIRE(grid.y < 65536, "gemm reference: M above 2M rows");
  gemm_tiles<<<grid, dim3(kTile, kTile), 0, stream>>>(g, a, b, c);
  KILN_CUDA_CHECK(cudaGetLastError());
}

void launch_gemv_reference(const float* a, const float* x, float* y, std::int64_t m, std::int64_t k,
                           cudaStream_t stream) {
  gemv_rows<<<static_cast<unsigned>((m + 7) / 8), dim3(32, 8), 0, stream>>>(a, x, y, m, k);
  KILN_CUDA_CHECK(cudaGetLastError());
}

void keep_triangle(float* a, std::int64_t n, bool upper, cudaStream_t stream) {
  triangle<<<blocks_for(n * n), 256, 0, stream>>>(a, n, upper);
  KILN_CUDA_CHECK(cudaGetLastError());
}

void symmetrize(float* a, std::int64_t n, cudaStream_t stream) {
  symmetric<<<blocks_for(n * n), 256, 0, stream>>>(a, n);
  KILN_CUDA_CHECK(cudaGetLastError());
}

void launch_row_scale_reference(const float* d, const float* b, float* y, std::int64_t rows,
                                std::int64_t cols, cudaStream_t stream) {
  const std::int64_t blocks = (rows * cols + 255) / 256;
  row_scale<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(d, b, y, rows, cols);
  KILN_CUDA_CHECK(cudaGetLastError());
}

void scale_in_place(float* x, std::int64_t count, float factor, cudaStream_t stream) {
  scale<<<blocks_for(count), 256, 0, stream>>>(x, count, factor);
  KILN_CUDA_CHECK(cudaGetLastError());
}

}  // namespace kiln::problems::kb1
