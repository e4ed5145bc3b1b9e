// Kernels of the reduction kb1 problems (see kb1_reduce_kernels.hpp).
#include <cfloat>

#include "core/cuda_check.hpp"
#include "problems/kb1_reduce_kernels.hpp"

namespace kiln::problems::kb1 {
namespace {

// Running best of a max/min/arg scan; `better` is strict so the first index wins ties.
template <ReduceOp Op>
__device__ __forceinline__ bool better(float candidate, float best) {
  if constexpr (Op == ReduceOp::kMax || Op == ReduceOp::kArgmax) return candidate > best;
  return candidate < best;
}

template <ReduceOp Op>
__device__ __forceinline__ void store(void* out, std::int64_t o, double sum, float best,
                                      std::int64_t index, std::int64_t d1) {
  if constexpr (Op == ReduceOp::kSum) static_cast<float*>(out)[o] = static_cast<float>(sum);
  if constexpr (Op == ReduceOp::kMean)
    static_cast<float*>(out)[o] = static_cast<float>(sum / static_cast<double>(d1));
  if constexpr (Op == ReduceOp::kMax || Op == ReduceOp::kMin) static_cast<float*>(out)[o] = best;
  if constexpr (Op == ReduceOp::kArgmax || Op == ReduceOp::kArgmin)
    static_cast<std::int64_t*>(out)[o] = index;
}

template <ReduceOp Op>
__global__ void dim_reduce_reference(const float* x, void* out, std::int64_t b, std::int64_t d1,
                                     std::int64_t d2) {
  const std::int64_t o = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (o >= b * d2) return;
  const std::int64_t batch = o / d2, column = o % d2;
  const float* base = x + batch * d1 * d2 + column;
  double sum = 0.0;
  float best = base[0];
  std::int64_t index = 0;
  for (std::int64_t r = 0; r < d1; ++r) {
    const float v = base[r * d2];
    sum += v;
    if (r > 0 && better<Op>(v, best)) {
      best = v;
      index = r;
    }
  }
  store<Op>(out, o, sum, best, index, d1);
}

constexpr int kColumns = 32, kSplit = 8;

template <ReduceOp Op>
__global__ void dim_reduce_split(const float* x, void* out, std::int64_t b, std::int64_t d1,
                                 std::int64_t d2) {
  __shared__ float sums[kSplit][kColumns];
  __shared__ float bests[kSplit][kColumns];
  __shared__ std::int64_t indices[kSplit][kColumns];
  const std::int64_t column = blockIdx.x * static_cast<std::int64_t>(kColumns) + threadIdx.x;
  const std::int64_t batch = blockIdx.y;
  const int part = threadIdx.y;
  float sum = 0.0f, best = 0.0f;
  std::int64_t index = -1;
  if (column < d2) {
    const float* base = x + batch * d1 * d2 + column;
    for (std::int64_t r = part; r < d1; r += kSplit) {
      const float v = base[r * d2];
      sum += v;
      if (index < 0 || better<Op>(v, best)) {
        best = v;
        index = r;
      }
    }
  }
  sums[part][threadIdx.x] = sum;
  bests[part][threadIdx.x] = best;
  indices[part][threadIdx.x] = index;
  __syncthreads();
  if (part != 0 || column >= d2) return;
  double total = 0.0;
  for (int p = 0; p < kSplit; ++p) total += sums[p][threadIdx.x];
  for (int p = 1; p < kSplit; ++p) {
    const std::int64_t i = indices[p][threadIdx.x];
    if (i < 0) continue;
    const float v = bests[p][threadIdx.x];
    if (index < 0 || better<Op>(v, best) || (v == best && i < index)) {
      best = v;
      index = i;
    }
  }
  store<Op>(out, batch * d2 + column, total, best, index, d1);
}

template <ReduceOp Op>
void launch_dim(bool split, const float* x, void* out, std::int64_t b, std::int64_t d1,
                std::int64_t d2, cudaStream_t stream) {
  KILN_REQUIRE(b > 0 && d1 > 0 && d2 > 0, "dim reduce: empty tensor");
  if (split) {
    KILN_REQUIRE(b < 65536, "dim reduce: B above 65535");
    const dim3 grid(static_cast<unsigned>((d2 + kColumns - 1) / kColumns),
                    static_cast<unsigned>(b));
    dim_reduce_split<Op><<<grid, dim3(kColumns, kSplit), 0, stream>>>(x, out, b, d1, d2);
  } else {
    const std::int64_t blocks = (b * d2 + 255) / 256;
    dim_reduce_reference<Op><<<static_cast<unsigned>(blocks), 256, 0, stream>>>(x, out, b, d1, d2);
  }
  KILN_CUDA_CHECK(cudaGetLastError());
}

void dispatch(ReduceOp op, bool split, const float* x, void* out, std::int64_t b, std::int64_t d1,
              std::int64_t d2, cudaStream_t stream) {
  switch (op) {
    case ReduceOp::kSum:
      return launch_dim<ReduceOp::kSum>(split, x, out, b, d1, d2, stream);
    case ReduceOp::kMean:
      return launch_dim<ReduceOp::kMean>(split, x, out, b, d1, d2, stream);
    case ReduceOp::kMax:
      return launch_dim<ReduceOp::kMax>(split, x, out, b, d1, d2, stream);
    case ReduceOp::kMin:
      return launch_dim<ReduceOp::kMin>(split, x, out, b, d1, d2, stream);
    case ReduceOp::kArgmax:
      return launch_dim<ReduceOp::kArgmax>(split, x, out, b, d1, d2, stream);
    case ReduceOp::kArgmin:
      return launch_dim<ReduceOp::kArgmin>(split, x, out, b, d1, d2, stream);
  }
}

// Block-wide sum of one double per thread (blockDim.x a multiple of 32, at most 1024).
__device__ double block_sum(double v) {
  __shared__ double warp_sums[32];
  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x / 32] = v;
  __syncthreads();
  double total = 0.0;
  if (threadIdx.x == 0)
    for (int w = 0; w < static_cast<int>(blockDim.x / 32); ++w) total += warp_sums[w];
  __syncthreads();
  return total;
}

__global__ void mse_rows(const float* p, const float* t, double* partials, std::int64_t cols) {
  const std::int64_t row = blockIdx.x;
  double sum = 0.0;
  for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    const double d = static_cast<double>(p[row * cols + c]) - t[row * cols + c];
    sum += d * d;
  }
  const double total = block_sum(sum);
  if (threadIdx.x == 0) partials[row] = total;
}

// One thread adds the partials in order (the reference's final step; deterministic).
__global__ void mean_of_partials_in_order(const double* partials, std::int64_t parts, double count,
                                          float* out) {
  double sum = 0.0;
  for (std::int64_t i = 0; i < parts; ++i) sum += partials[i];
  *out = static_cast<float>(sum / count);
}

__global__ void mse_vectorized(const float* p, const float* t, double* partials,
                               std::int64_t count) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t first = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  float sum = 0.0f;
  const std::int64_t vectors = count / 4;
  const float4* p4 = reinterpret_cast<const float4*>(p);
  const float4* t4 = reinterpret_cast<const float4*>(t);
  for (std::int64_t v = first; v < vectors; v += stride) {
    const float4 a = p4[v], b = t4[v];
    const float dx = a.x - b.x, dy = a.y - b.y, dz = a.z - b.z, dw = a.w - b.w;
    sum += (dx * dx + dy * dy) + (dz * dz + dw * dw);
  }
  for (std::int64_t i = vectors * 4 + first; i < count; i += stride) {
    const float d = p[i] - t[i];
    sum += d * d;
  }
  const double total = block_sum(sum);
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

__global__ void mean_of_partials_tree(const double* partials, std::int64_t parts, double count,
                                      float* out) {
  double sum = 0.0;
  for (std::int64_t i = threadIdx.x; i < parts; i += blockDim.x) sum += partials[i];
  const double total = block_sum(sum);
  if (threadIdx.x == 0) *out = static_cast<float>(total / count);
}

int mse_kiln_blocks() {
  int sms = 0, device = 0;
  KILN_CUDA_CHECK(cudaGetDevice(&device));
  KILN_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms * 8;
}

}  // namespace

void launch_dim_reduce_reference(ReduceOp op, const float* x, void* out, std::int64_t b,
                                 std::int64_t d1, std::int64_t d2, cudaStream_t stream) {
  dispatch(op, false, x, out, b, d1, d2, stream);
}

void launch_dim_reduce_kiln(ReduceOp op, const float* x, void* out, std::int64_t b, std::int64_t d1,
                            std::int64_t d2, cudaStream_t stream) {
  dispatch(op, true, x, out, b, d1, d2, stream);
}

std::int64_t mse_partials(std::int64_t rows) {
  const std::int64_t kiln = mse_kiln_blocks();
  return rows > kiln ? rows : kiln;
}

void launch_mse_reference(const float* p, const float* t, float* out, double* partials,
                          std::int64_t rows, std::int64_t cols, cudaStream_t stream) {
  KILN_REQUIRE(rows > 0 && rows < (1ll << 31) && cols > 0, "mse reference: bad shape");
  mse_rows<<<static_cast<unsigned>(rows), 256, 0, stream>>>(p, t, partials, cols);
  mean_of_partials_in_order<<<1, 1, 0, stream>>>(partials, rows, static_cast<double>(rows) * cols,
                                                 out);
  KILN_CUDA_CHECK(cudaGetLastError());
}

void launch_mse_kiln(const float* p, const float* t, float* out, double* partials,
                     std::int64_t count, cudaStream_t stream) {
  const int blocks = mse_kiln_blocks();
  mse_vectorized<<<blocks, 256, 0, stream>>>(p, t, partials, count);
  mean_of_partials_tree<<<1, 1024, 0, stream>>>(partials, blocks, static_cast<double>(count), out);
  KILN_CUDA_CHECK(cudaGetLastError());
}

}  // namespace kiln::problems::kb1
