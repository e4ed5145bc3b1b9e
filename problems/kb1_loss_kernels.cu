// Kernels of the loss kb1 problems (see kb1_loss_kernels.hpp).
#include <cmath>
#include <string>

#include "core/cuda_check.hpp"
#include "core/test_values.hpp"
#include "problems/kb1_loss_kernels.hpp"

namespace kiln::problems::kb1 {
namespace {

constexpr int kThreads = 256;
// kiln's grids: this many blocks of kThreads per SM, all resident at once (__launch_bounds__
// holds the kernels to 32 registers), each block given an about equal share of the work.
constexpr int kBlocksPerSm = 8;
// The triplet kernel reads three rows at once and needs up to 40 registers: 6 blocks per SM.
constexpr int kTripletBlocksPerSm = 6;

struct Add {
  template <typename T>
  __device__ __forceinline__ T operator()(T a, T b) const {
    return a + b;
  }
};
struct Max {
  template <typename T>
  __device__ __forceinline__ T operator()(T a, T b) const {
    return a > b ? a : b;
  }
};

// Block-wide reduction of one value per thread (blockDim.x a multiple of 32, at most 1024); every
// thread gets the result, combined in the same order on every run (deterministic).
template <typename T, typename Combine>
__device__ T block_reduce(T v, Combine combine) {
  __shared__ T warp_values[32];
  for (int o = 16; o > 0; o /= 2) v = combine(v, __shfl_xor_sync(0xffffffffu, v, o));
  if ((threadIdx.x & 31) == 0) warp_values[threadIdx.x / 32] = v;
  __syncthreads();
  T total = warp_values[0];
  for (int w = 1; w < static_cast<int>(blockDim.x / 32); ++w)
    total = combine(total, warp_values[w]);
  __syncthreads();
  return total;
}

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

int grid_for(std::int64_t count) {
  const std::int64_t blocks = (count + kThreads - 1) / kThreads;
  return static_cast<int>(blocks < 1 ? 1 : (blocks > 65536 ? 65536 : blocks));
}

int kiln_blocks(int per_sm = kBlocksPerSm) {
  int sms = 0, device = 0;
  KILN_CUDA_CHECK(cudaGetDevice(&device));
  KILN_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms * per_sm;
}

void require_rows(std::int64_t rows, std::int64_t cols, const char* what) {
  KILN_REQUIRE(rows > 0 && rows < (1ll << 31) && cols > 0, std::string(what) + ": bad shape");
}

// ---- input generators ----

__global__ void classes_kernel(std::int64_t* data, std::int64_t count, std::int64_t classes,
                               std::uint64_t seed) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::uint64_t h = core::mix64(seed ^ core::mix64(static_cast<std::uint64_t>(i)));
    data[i] = static_cast<std::int64_t>(h % static_cast<std::uint64_t>(classes));
  }
}

__global__ void signs_kernel(float* data, std::int64_t count, std::uint64_t seed) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::uint64_t h = core::mix64(seed ^ core::mix64(static_cast<std::uint64_t>(i)));
    data[i] = (h >> 63) != 0 ? 1.0f : -1.0f;
  }
}

// A block per row: the maximum, the sum of exp(x - max) (in double), then the row rewritten.
__global__ void softmax_rows_kernel(float* data, std::int64_t cols) {
  float* row = data + blockIdx.x * cols;
  float m = -INFINITY;
  for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, row[c]);
  m = block_reduce(m, Max{});
  double s = 0.0;
  for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) s += expf(row[c] - m);
  s = block_reduce(s, Add{});
  const float inverse = static_cast<float>(1.0 / s);
  for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) row[c] = expf(row[c] - m) * inverse;
}

// ---- the losses per element ----

struct HuberDouble {
  __device__ double operator()(double p, double t) const {
    const double d = fabs(p - t);
    return d < kHuberBeta ? 0.5 * d * d / kHuberBeta : d - 0.5 * kHuberBeta;
  }
};
struct HuberFloat {
  __device__ __forceinline__ float operator()(float p, float t) const {
    constexpr float beta = static_cast<float>(kHuberBeta);
    const float d = fabsf(p - t);
    return d < beta ? 0.5f * d * d / beta : d - 0.5f * beta;
  }
};
struct KlDivDouble {
  __device__ double operator()(double p, double t) const {
    return t > 0.0 ? t * (log(t) - log(p)) : 0.0;
  }
};
struct KlDivFloat {
  // t * log(t / p): one logarithm (the ratio is at most ~1e19 for probabilities above 1e-19).
  __device__ __forceinline__ float operator()(float p, float t) const {
    return t > 0.0f ? t * logf(__fdividef(t, p)) : 0.0f;
  }
};
struct HingeDouble {
  __device__ double operator()(double p, double t) const {
    const double h = 1.0 - p * t;
    return h > 0.0 ? h : 0.0;
  }
};
__device__ __forceinline__ float hinge(float p, float t) {
  return fmaxf(1.0f - p * t, 0.0f);
}
__device__ __forceinline__ float triplet_square(float a, float b) {
  const float d = a - b + static_cast<float>(kTripletEps);
  return d * d;
}

// ---- reference: a block per row, double ----

// Row r's sum of op(p[r * cols + c], t[r * t_row_stride + c]) (t_row_stride 0: t is one row
// broadcast over the rows).
template <typename Op>
__global__ void pair_rows_reference(const float* p, const float* t, double* partials,
                                    std::int64_t cols, std::int64_t t_row_stride, Op op) {
  const std::int64_t r = blockIdx.x;
  double sum = 0.0;
  for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x)
    sum += op(static_cast<double>(p[r * cols + c]), static_cast<double>(t[r * t_row_stride + c]));
  const double total = block_reduce(sum, Add{});
  if (threadIdx.x == 0) partials[r] = total;
}

__global__ void cross_entropy_rows_reference(const float* x, const std::int64_t* targets,
                                             double* partials, std::int64_t classes) {
  const std::int64_t r = blockIdx.x;
  const float* row = x + r * classes;
  double m = -INFINITY;
  for (std::int64_t c = threadIdx.x; c < classes; c += blockDim.x)
    m = fmax(m, static_cast<double>(row[c]));
  m = block_reduce(m, Max{});
  double s = 0.0;
  for (std::int64_t c = threadIdx.x; c < classes; c += blockDim.x)
    s += exp(static_cast<double>(row[c]) - m);
  s = block_reduce(s, Add{});
  if (threadIdx.x == 0) partials[r] = m + log(s) - static_cast<double>(row[targets[r]]);
}

__global__ void triplet_rows_reference(const float* a, const float* p, const float* n,
                                       double* partials, std::int64_t cols) {
  const std::int64_t r = blockIdx.x;
  double sp = 0.0, sn = 0.0;
  for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    const std::int64_t i = r * cols + c;
    const double dp = static_cast<double>(a[i]) - p[i] + kTripletEps;
    const double dn = static_cast<double>(a[i]) - n[i] + kTripletEps;
    sp += dp * dp;
    sn += dn * dn;
  }
  sp = block_reduce(sp, Add{});
  sn = block_reduce(sn, Add{});
  const double loss = sqrt(sp) - sqrt(sn) + kTripletMargin;
  if (threadIdx.x == 0) partials[r] = loss > 0.0 ? loss : 0.0;
}

// One thread adds the partials in order (the reference's final step).
__global__ void sum_in_order(const double* partials, std::int64_t parts, double divisor,
                             float* out) {
  double sum = 0.0;
  for (std::int64_t i = 0; i < parts; ++i) sum += partials[i];
  *out = static_cast<float>(sum / divisor);
}

// ---- kiln ----

// The elements as one flat array: float4 loads (cudaMalloc'd arrays are 256-byte aligned), the
// tail one by one.
template <typename Op>
__global__ void __launch_bounds__(kThreads, kBlocksPerSm)
    flat_pairs(const float* __restrict__ p, const float* __restrict__ t, double* partials,
               std::int64_t count, Op op) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t first = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  float sum = 0.0f;
  const std::int64_t vectors = count / 4;
  const float4* p4 = reinterpret_cast<const float4*>(p);
  const float4* t4 = reinterpret_cast<const float4*>(t);
  for (std::int64_t v = first; v < vectors; v += stride) {
    const float4 a = p4[v], b = t4[v];
    sum += (op(a.x, b.x) + op(a.y, b.y)) + (op(a.z, b.z) + op(a.w, b.w));
  }
  for (std::int64_t i = vectors * 4 + first; i < count; i += stride) sum += op(p[i], t[i]);
  const double total = block_reduce(static_cast<double>(sum), Add{});
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

// The online softmax statistics of one lane: running maximum m, sum s of exp(x - m).
__device__ __forceinline__ void online_add(float& m, float& s, float x) {
  if (x > m) {
    s *= expf(m - x);
    m = x;
  }
  s += expf(x - m);
}
__device__ __forceinline__ void online_add4(float& m, float& s, float4 v) {
  const float vm = fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w));
  if (vm > m) {
    s *= expf(m - vm);  // 0 on the first values (m = -inf, s = 0)
    m = vm;
  }
  s += (expf(v.x - m) + expf(v.y - m)) + (expf(v.z - m) + expf(v.w - m));
}

// A warp per row (rows strided over the grid's warps); per lane online statistics, then the
// lanes combined by butterfly (symmetric, so every lane ends with the same values).
template <bool Vec>
__global__ void __launch_bounds__(kThreads, kBlocksPerSm)
    cross_entropy_warps(const float* __restrict__ x, const std::int64_t* __restrict__ targets,
                        double* partials, std::int64_t rows, std::int64_t classes) {
  const int lane = threadIdx.x & 31;
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * (blockDim.x / 32);
  double sum = 0.0;
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x / 32) + threadIdx.x / 32;
       r < rows; r += warps) {
    const float* row = x + r * classes;
    float m = -INFINITY, s = 0.0f;
    if constexpr (Vec) {
      const float4* row4 = reinterpret_cast<const float4*>(row);
#pragma unroll 4
      for (std::int64_t c = lane; c < classes / 4; c += 32) online_add4(m, s, row4[c]);
    } else {
      for (std::int64_t c = lane; c < classes; c += 32) online_add(m, s, row[c]);
    }
    for (int o = 16; o > 0; o /= 2) {
      const float om = __shfl_xor_sync(0xffffffffu, m, o);
      const float os = __shfl_xor_sync(0xffffffffu, s, o);
      const float nm = fmaxf(m, om);
      s = (m == -INFINITY ? 0.0f : s * expf(m - nm)) +
          (om == -INFINITY ? 0.0f : os * expf(om - nm));
      m = nm;
    }
    if (lane == 0) sum += static_cast<double>((m - row[targets[r]]) + logf(s));
  }
  const double total = block_reduce(sum, Add{});
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

template <bool Vec>
__global__ void __launch_bounds__(kThreads, kTripletBlocksPerSm)
    triplet_warps(const float* __restrict__ a, const float* __restrict__ p,
                  const float* __restrict__ n, double* partials, std::int64_t rows,
                  std::int64_t cols) {
  const int lane = threadIdx.x & 31;
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * (blockDim.x / 32);
  double sum = 0.0;
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x / 32) + threadIdx.x / 32;
       r < rows; r += warps) {
    const std::int64_t base = r * cols;
    float sp = 0.0f, sn = 0.0f;
    if constexpr (Vec) {
      const float4* a4 = reinterpret_cast<const float4*>(a + base);
      const float4* p4 = reinterpret_cast<const float4*>(p + base);
      const float4* n4 = reinterpret_cast<const float4*>(n + base);
#pragma unroll 2
      for (std::int64_t c = lane; c < cols / 4; c += 32) {
        const float4 x = a4[c], y = p4[c], z = n4[c];
        sp += (triplet_square(x.x, y.x) + triplet_square(x.y, y.y)) +
              (triplet_square(x.z, y.z) + triplet_square(x.w, y.w));
        sn += (triplet_square(x.x, z.x) + triplet_square(x.y, z.y)) +
              (triplet_square(x.z, z.z) + triplet_square(x.w, z.w));
      }
    } else {
      for (std::int64_t c = lane; c < cols; c += 32) {
        sp += triplet_square(a[base + c], p[base + c]);
        sn += triplet_square(a[base + c], n[base + c]);
      }
    }
    sp = warp_sum(sp);
    sn = warp_sum(sn);
    if (lane == 0) sum += fmaxf(sqrtf(sp) - sqrtf(sn) + static_cast<float>(kTripletMargin), 0.0f);
  }
  const double total = block_reduce(sum, Add{});
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

// Column tiles of kThreads 16-byte vectors (or single values), each thread holding its
// targets in registers: block b walks rows b % groups, + groups, ... of tiles b / groups,
// + blocks / groups, ... (one tile per block when the grid covers every tile).
template <bool Vec>
__global__ void __launch_bounds__(kThreads, kBlocksPerSm)
    hinge_tiles(const float* __restrict__ p, const float* __restrict__ t, double* partials,
                std::int64_t rows, std::int64_t cols, std::int64_t groups) {
  const std::int64_t width = Vec ? cols / 4 : cols;  // vectors (or values) per row
  const std::int64_t tiles = (width + blockDim.x - 1) / blockDim.x;
  const std::int64_t group = blockIdx.x % groups;
  float sum = 0.0f;
  for (std::int64_t tile = blockIdx.x / groups; tile < tiles; tile += gridDim.x / groups) {
    const std::int64_t c = tile * blockDim.x + threadIdx.x;
    if (c >= width) continue;
    if constexpr (Vec) {
      const float4 w = reinterpret_cast<const float4*>(t)[c];
      const float4* p4 = reinterpret_cast<const float4*>(p);
      for (std::int64_t r = group; r < rows; r += groups) {
        const float4 v = p4[r * width + c];
        sum += (hinge(v.x, w.x) + hinge(v.y, w.y)) + (hinge(v.z, w.z) + hinge(v.w, w.w));
      }
    } else {
      const float w = t[c];
      for (std::int64_t r = group; r < rows; r += groups) sum += hinge(p[r * width + c], w);
    }
  }
  const double total = block_reduce(static_cast<double>(sum), Add{});
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

// One block adds the block partials (a tree: fixed for a given grid, so deterministic).
__global__ void sum_tree(const double* partials, std::int64_t parts, double divisor, float* out) {
  double sum = 0.0;
  for (std::int64_t i = threadIdx.x; i < parts; i += blockDim.x) sum += partials[i];
  const double total = block_reduce(sum, Add{});
  if (threadIdx.x == 0) *out = static_cast<float>(total / divisor);
}

template <typename Op>
void pair_reference(const float* p, const float* t, float* out, double* partials, std::int64_t rows,
                    std::int64_t cols, std::int64_t t_row_stride, double divisor, Op op,
                    cudaStream_t stream) {
  pair_rows_reference<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(p, t, partials, cols,
                                                                            t_row_stride, op);
  sum_in_order<<<1, 1, 0, stream>>>(partials, rows, divisor, out);
  KILN_CUDA_CHECK(cudaGetLastError());
}

template <typename Op>
void flat_kiln(const float* p, const float* t, float* out, double* partials, std::int64_t count,
               double divisor, Op op, cudaStream_t stream) {
  const int blocks = kiln_blocks();
  flat_pairs<<<blocks, kThreads, 0, stream>>>(p, t, partials, count, op);
  sum_tree<<<1, 1024, 0, stream>>>(partials, blocks, divisor, out);
  KILN_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

std::int64_t loss_partials(std::int64_t rows) {
  const std::int64_t kiln = kiln_blocks();
  return rows > kiln ? rows : kiln;
}

void fill_classes(std::int64_t* data, std::int64_t count, std::int64_t classes, std::uint64_t seed,
                  cudaStream_t stream) {
  KILN_REQUIRE(classes > 0, "fill_classes: no classes");
  classes_kernel<<<grid_for(count), kThreads, 0, stream>>>(data, count, classes, seed);
  KILN_CUDA_CHECK(cudaGetLastError());
}

void fill_signs(float* data, std::int64_t count, std::uint64_t seed, cudaStream_t stream) {
  signs_kernel<<<grid_for(count), kThreads, 0, stream>>>(data, count, seed);
  KILN_CUDA_CHECK(cudaGetLastError());
}

void softmax_rows_in_place(float* data, std::int64_t rows, std::int64_t cols, cudaStream_t stream) {
  require_rows(rows, cols, "softmax rows");
  softmax_rows_kernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(data, cols);
  KILN_CUDA_CHECK(cudaGetLastError());
}

void launch_cross_entropy_reference(const float* logits, const std::int64_t* targets, float* out,
                                    double* partials, std::int64_t rows, std::int64_t classes,
                                    cudaStream_t stream) {
  require_rows(rows, classes, "cross entropy reference");
  cross_entropy_rows_reference<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(
      logits, targets, partials, classes);
  sum_in_order<<<1, 1, 0, stream>>>(partials, rows, static_cast<double>(rows), out);
  KILN_CUDA_CHECK(cudaGetLastError());
}

void launch_cross_entropy_kiln(const float* logits, const std::int64_t* targets, float* out,
                               double* partials, std::int64_t rows, std::int64_t classes,
                               cudaStream_t stream) {
  require_rows(rows, classes, "cross entropy");
  const int blocks = kiln_blocks();
  if (classes % 4 == 0) {
    cross_entropy_warps<true>
        <<<blocks, kThreads, 0, stream>>>(logits, targets, partials, rows, classes);
  } else {
    cross_entropy_warps<false>
        <<<blocks, kThreads, 0, stream>>>(logits, targets, partials, rows, classes);
  }
  sum_tree<<<1, 1024, 0, stream>>>(partials, blocks, static_cast<double>(rows), out);
  KILN_CUDA_CHECK(cudaGetLastError());
}

void launch_huber_reference(const float* p, const float* t, float* out, double* partials,
                            std::int64_t rows, std::int64_t cols, cudaStream_t stream) {
  require_rows(rows, cols, "huber reference");
  pair_reference(p, t, out, partials, rows, cols, cols, static_cast<double>(rows) * cols,
                 HuberDouble{}, stream);
}

void launch_huber_kiln(const float* p, const float* t, float* out, double* partials,
                       std::int64_t rows, std::int64_t cols, cudaStream_t stream) {
  require_rows(rows, cols, "huber");
  flat_kiln(p, t, out, partials, rows * cols, static_cast<double>(rows) * cols, HuberFloat{},
            stream);
}

void launch_kl_div_reference(const float* p, const float* t, float* out, double* partials,
                             std::int64_t rows, std::int64_t cols, cudaStream_t stream) {
  require_rows(rows, cols, "kl_div reference");
  pair_reference(p, t, out, partials, rows, cols, cols, static_cast<double>(rows), KlDivDouble{},
                 stream);
}

void launch_kl_div_kiln(const float* p, const float* t, float* out, double* partials,
                        std::int64_t rows, std::int64_t cols, cudaStream_t stream) {
  require_rows(rows, cols, "kl_div");
  flat_kiln(p, t, out, partials, rows * cols, static_cast<double>(rows), KlDivFloat{}, stream);
}

void launch_triplet_reference(const float* anchor, const float* positive, const float* negative,
                              float* out, double* partials, std::int64_t rows, std::int64_t cols,
                              cudaStream_t stream) {
  require_rows(rows, cols, "triplet reference");
  triplet_rows_reference<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(
      anchor, positive, negative, partials, cols);
  sum_in_order<<<1, 1, 0, stream>>>(partials, rows, static_cast<double>(rows), out);
  KILN_CUDA_CHECK(cudaGetLastError());
}

void launch_triplet_kiln(const float* anchor, const float* positive, const float* negative,
                         float* out, double* partials, std::int64_t rows, std::int64_t cols,
                         cudaStream_t stream) {
  require_rows(rows, cols, "triplet");
  const int blocks = kiln_blocks(kTripletBlocksPerSm);
  if (cols % 4 == 0) {
    triplet_warps<true>
        <<<blocks, kThreads, 0, stream>>>(anchor, positive, negative, partials, rows, cols);
  } else {
    triplet_warps<false>
        <<<blocks, kThreads, 0, stream>>>(anchor, positive, negative, partials, rows, cols);
  }
  sum_tree<<<1, 1024, 0, stream>>>(partials, blocks, static_cast<double>(rows), out);
  KILN_CUDA_CHECK(cudaGetLastError());
}

void launch_hinge_reference(const float* p, const float* t, float* out, double* partials,
                            std::int64_t rows, std::int64_t cols, cudaStream_t stream) {
  require_rows(rows, cols, "hinge reference");
  pair_reference(p, t, out, partials, rows, cols, 0, static_cast<double>(rows) * cols,
                 HingeDouble{}, stream);
}

void launch_hinge_kiln(const float* p, const float* t, float* out, double* partials,
                       std::int64_t rows, std::int64_t cols, cudaStream_t stream) {
  require_rows(rows, cols, "hinge");
  const bool vec = cols % 4 == 0;
  const std::int64_t tiles = ((vec ? cols / 4 : cols) + kThreads - 1) / kThreads;
  // As many row groups as the grid allows with every tile covered (rows x tiles blocks at most).
  const std::int64_t budget = kiln_blocks();
  std::int64_t groups = tiles < budget ? budget / tiles : 1;
  if (groups > rows) groups = rows;
  const int blocks = static_cast<int>(tiles < budget ? groups * tiles : budget);
  if (vec) {
    hinge_tiles<true><<<blocks, kThreads, 0, stream>>>(p, t, partials, rows, cols, groups);
  } else {
    hinge_tiles<false><<<blocks, kThreads, 0, stream>>>(p, t, partials, rows, cols, groups);
  }
  sum_tree<<<1, 1024, 0, stream>>>(partials, blocks, static_cast<double>(rows) * cols, out);
  KILN_CUDA_CHECK(cudaGetLastError());
}

}  // namespace kiln::problems::kb1
