// Kernels of the pooling kb1 problems (see kb1_pooling_kernels.hpp). Window semantics are
// PyTorch's (its ATen CUDA pooling kernels, e.g. aten/src/ATen/native/cuda/AveragePool2d.cu; no
// code taken): max ignores padded positions; the average divides by the window clipped to the
// padded extent (count_include_pad), which with ceil_mode False is the whole window.
#include <cmath>
#include <string>

#include "core/cuda_check.hpp"
#include "problems/kb1_pooling_kernels.hpp"

namespace kiln::problems::kb1 {
namespace {

constexpr unsigned kFullMask = 0xffffffffu;

__host__ __device__ __forceinline__ std::int64_t imin(std::int64_t a, std::int64_t b) {
  return a < b ? a : b;
}
__host__ __device__ __forceinline__ std::int64_t imax(std::int64_t a, std::int64_t b) {
  return a > b ? a : b;
}

template <PoolOp Op>
__device__ __forceinline__ float identity() {
  return Op == PoolOp::kMax ? -INFINITY : 0.0f;
}

template <PoolOp Op>
__device__ __forceinline__ float combine(float acc, float v) {
  if constexpr (Op == PoolOp::kMax) return fmaxf(acc, v);
  return acc + v;
}

template <PoolOp Op>
__device__ __forceinline__ float4 combine(float4 acc, float4 v) {
  return make_float4(combine<Op>(acc.x, v.x), combine<Op>(acc.y, v.y), combine<Op>(acc.z, v.z),
                     combine<Op>(acc.w, v.w));
}

// PyTorch's count_include_pad divisor along one axis: the window clipped to the padded extent.
__device__ __forceinline__ std::int64_t divisor(const PoolAxis& a, std::int64_t o) {
  const std::int64_t start = o * a.stride - a.padding;
  return imin(start + a.kernel, a.in + a.padding) - start;
}

// --- Reference ---------------------------------------------------------------------------

template <PoolOp Op>
__global__ void pool_reference(const float* x, float* y, PoolShape s, std::int64_t count) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= count) return;
  const PoolAxis &ad = s.axis[0], &ah = s.axis[1], &aw = s.axis[2];
  const std::int64_t ow = i % aw.out, oh = i / aw.out % ah.out, od = i / aw.out / ah.out % ad.out;
  const std::int64_t plane = i / aw.out / ah.out / ad.out;
  const float* xp = x + plane * ad.in * ah.in * aw.in;
  float best = -INFINITY;
  double sum = 0.0;
  for (int kd = 0; kd < ad.kernel; ++kd) {
    const std::int64_t d =
        od * ad.stride - ad.padding + kd * static_cast<std::int64_t>(ad.dilation);
    if (d < 0 || d >= ad.in) continue;
    for (int kh = 0; kh < ah.kernel; ++kh) {
      const std::int64_t h =
          oh * ah.stride - ah.padding + kh * static_cast<std::int64_t>(ah.dilation);
      if (h < 0 || h >= ah.in) continue;
      for (int kw = 0; kw < aw.kernel; ++kw) {
        const std::int64_t w =
            ow * aw.stride - aw.padding + kw * static_cast<std::int64_t>(aw.dilation);
        if (w < 0 || w >= aw.in) continue;
        const float v = xp[(d * ah.in + h) * aw.in + w];
        if constexpr (Op == PoolOp::kMax) {
          if (v > best) best = v;
        } else {
          sum += v;
        }
      }
    }
  }
  if constexpr (Op == PoolOp::kMax) {
    y[i] = best;
  } else {
    const std::int64_t n = divisor(ad, od) * divisor(ah, oh) * divisor(aw, ow);
    y[i] = static_cast<float>(sum / static_cast<double>(n));
  }
}

// --- 1-d, stride 1: shared-memory tiles --------------------------------------------------
// A block computes kTile1d consecutive outputs of one row from its kTile1d + span inputs (span =
// dilation * (kernel - 1) <= kHalo1d), loaded once, coalesced, padding stored as the identity.

constexpr int kTile1d = 2048, kHalo1d = 256, kThreads1d = 256;

template <PoolOp Op>
__global__ void __launch_bounds__(kThreads1d)
    pool1d_tiles(const float* __restrict__ x, float* __restrict__ y, PoolAxis a,
                 std::int64_t tiles) {
  __shared__ float inputs[kTile1d + kHalo1d];
  const std::int64_t row = blockIdx.x / tiles;
  const std::int64_t first = blockIdx.x % tiles * kTile1d;  // the tile's first output
  const std::int64_t start = first - a.padding;             // the input in inputs[0]
  const int outputs = static_cast<int>(imin(kTile1d, a.out - first));
  const int needed = outputs + a.dilation * (a.kernel - 1);
  const float* xr = x + row * a.in;
#pragma unroll
  for (int j = 0; j < (kTile1d + kHalo1d) / kThreads1d; ++j) {
    const int i = j * kThreads1d + threadIdx.x;
    if (i < needed) {
      const std::int64_t p = start + i;
      inputs[i] = p >= 0 && p < a.in ? xr[p] : identity<Op>();
    }
  }
  __syncthreads();
  float* yr = y + row * a.out + first;
#pragma unroll
  for (int j = 0; j < kTile1d / kThreads1d; ++j) {
    const int i = j * kThreads1d + threadIdx.x;
    if (i < outputs) {
      float v = identity<Op>();
      for (int k = 0; k < a.kernel; ++k) v = combine<Op>(v, inputs[i + k * a.dilation]);
      if constexpr (Op == PoolOp::kAvg) v /= static_cast<float>(divisor(a, first + i));
      yr[i] = v;
    }
  }
}

// --- 2-d max, stride 1, dilation 1, a K x K window: column sweep -------------------------
// A warp owns 32 consecutive output columns of kSweepRows output rows. Per input row, lane l
// loads input column c0 + l (c0 = the warp's first window column) and lanes < K - 1 also
// c0 + 32 + l; the row window's maximum comes through shuffles, the column window's from the
// last K row maxima, kept in registers. Rows are loaded kSweepGroup at a time.

constexpr int kSweepRows = 64, kSweepThreads = 128, kSweepGroup = 8;

template <int K>
__global__ void __launch_bounds__(kSweepThreads)
    maxpool2d_sweep(const float* __restrict__ x, float* __restrict__ y, PoolAxis ah, PoolAxis aw,
                    std::int64_t row_tiles, std::int64_t col_tiles) {
  const int lane = threadIdx.x & 31;
  const std::int64_t col_tile = blockIdx.x % col_tiles;
  const std::int64_t row_tile = blockIdx.x / col_tiles % row_tiles;
  const std::int64_t plane = blockIdx.x / col_tiles / row_tiles;
  const std::int64_t ow0 = col_tile * kSweepThreads + (threadIdx.x - lane);
  if (ow0 >= aw.out) return;  // the whole warp
  const std::int64_t ow = ow0 + lane;
  const std::int64_t c0 = ow0 - aw.padding + lane, c1 = c0 + 32;
  const bool ok0 = c0 >= 0 && c0 < aw.in;
  const bool ok1 = lane < K - 1 && c1 >= 0 && c1 < aw.in;
  const std::int64_t oh0 = row_tile * kSweepRows;
  const int rows = static_cast<int>(imin(kSweepRows, ah.out - oh0)) + K - 1;
  const std::int64_t h0 = oh0 - ah.padding;
  const float* xp = x + plane * ah.in * aw.in;
  float* yp = y + (plane * ah.out + oh0) * aw.out + ow;
  float window[K];
#pragma unroll
  for (int k = 0; k < K; ++k) window[k] = -INFINITY;
  for (int r0 = 0; r0 < rows; r0 += kSweepGroup) {
    float a[kSweepGroup], b[kSweepGroup];
#pragma unroll
    for (int g = 0; g < kSweepGroup; ++g) {
      const std::int64_t h = h0 + r0 + g;
      const bool row_ok = r0 + g < rows && h >= 0 && h < ah.in;
      a[g] = row_ok && ok0 ? xp[h * aw.in + c0] : -INFINITY;
      b[g] = row_ok && ok1 ? xp[h * aw.in + c1] : -INFINITY;
    }
#pragma unroll
    for (int g = 0; g < kSweepGroup; ++g) {
      const int r = r0 + g;
      if (r >= rows) break;  // warp-uniform
      float m = a[g];
#pragma unroll
      for (int j = 1; j < K; ++j) {
        const float own = __shfl_down_sync(kFullMask, a[g], j);
        const float next = __shfl_sync(kFullMask, b[g], (lane + j) & 31);
        m = fmaxf(m, lane + j < 32 ? own : next);
      }
#pragma unroll
      for (int k = 0; k + 1 < K; ++k) window[k] = window[k + 1];
      window[K - 1] = m;
      if (r >= K - 1 && ow < aw.out) {
        float v = window[0];
#pragma unroll
        for (int k = 1; k < K; ++k) v = fmaxf(v, window[k]);
        yp[(r - (K - 1)) * aw.out] = v;
      }
    }
  }
}

// --- 2-d average, dilation 1: column sums ------------------------------------------------
// A block per output row: the column sums of its window's input rows (16-byte loads where the
// rows are aligned) into shared memory, then each output sums its window's columns there.

constexpr int kColumnThreads = 256;

template <bool Vector>
__global__ void __launch_bounds__(kColumnThreads)
    avgpool2d_columns(const float* __restrict__ x, float* __restrict__ y, PoolAxis ah,
                      PoolAxis aw) {
  extern __shared__ float4 column_sums4[];
  float* column_sums = reinterpret_cast<float*>(column_sums4);
  const std::int64_t oh = blockIdx.x % ah.out, plane = blockIdx.x / ah.out;
  const std::int64_t h_start = oh * ah.stride - ah.padding;
  const std::int64_t h_lo = imax(h_start, 0), h_hi = imin(h_start + ah.kernel, ah.in);
  const float* xp = x + plane * ah.in * aw.in;
  if constexpr (Vector) {
    for (std::int64_t q = threadIdx.x; q < aw.in / 4; q += kColumnThreads) {
      float4 s = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll 4
      for (std::int64_t h = h_lo; h < h_hi; ++h)
        s = combine<PoolOp::kAvg>(s, reinterpret_cast<const float4*>(xp + h * aw.in)[q]);
      column_sums4[q] = s;
    }
  } else {
    for (std::int64_t c = threadIdx.x; c < aw.in; c += kColumnThreads) {
      float s = 0.0f;
#pragma unroll 4
      for (std::int64_t h = h_lo; h < h_hi; ++h) s += xp[h * aw.in + c];
      column_sums[c] = s;
    }
  }
  __syncthreads();
  for (std::int64_t ow = threadIdx.x; ow < aw.out; ow += kColumnThreads) {
    const std::int64_t w_start = ow * aw.stride - aw.padding;
    const std::int64_t w_hi = imin(w_start + aw.kernel, aw.in);
    float s = 0.0f;
    for (std::int64_t w = imax(w_start, 0); w < w_hi; ++w) s += column_sums[w];
    y[(plane * ah.out + oh) * aw.out + ow] =
        s / static_cast<float>(divisor(ah, oh) * divisor(aw, ow));
  }
}

// --- Separable (3-d and anything else): shared-memory bands ------------------------------
// A block per (plane, output depth, band of up to tile_rows output rows). The band's input rows
// come chunk_rows at a time: each element combined over the depth window while loading (16-byte
// loads where aligned) into `chunk`, then pooled along the width into `pooled`; last, the height
// window from `pooled`. Max and sum are separable, and so is PyTorch's average divisor.

constexpr int kSeparableThreads = 256;

template <PoolOp Op, bool Vector>
__global__ void __launch_bounds__(kSeparableThreads)
    pool_separable(const float* __restrict__ x, float* __restrict__ y, PoolShape s, int tile_rows,
                   int chunk_rows, std::int64_t row_tiles) {
  extern __shared__ float4 shared4[];
  const PoolAxis &ad = s.axis[0], &ah = s.axis[1], &aw = s.axis[2];
  const int in_w = static_cast<int>(aw.in), out_w = static_cast<int>(aw.out);
  float* chunk = reinterpret_cast<float*>(shared4);  // chunk_rows x in_w
  float* pooled = chunk + chunk_rows * in_w;         // band rows x out_w
  const std::int64_t row_tile = blockIdx.x % row_tiles;
  const std::int64_t od = blockIdx.x / row_tiles % ad.out;
  const std::int64_t plane = blockIdx.x / row_tiles / ad.out;
  const std::int64_t oh0 = row_tile * tile_rows;
  const int out_rows = static_cast<int>(imin(tile_rows, ah.out - oh0));
  const std::int64_t h0 = oh0 * ah.stride - ah.padding;  // the band's first input row
  const int band = (out_rows - 1) * ah.stride + ah.dilation * (ah.kernel - 1) + 1;
  const std::int64_t d0 = od * ad.stride - ad.padding;
  const float* xp = x + plane * ad.in * ah.in * aw.in;
  for (int r0 = 0; r0 < band; r0 += chunk_rows) {
    const int n = r0 + chunk_rows < band ? chunk_rows : band - r0;
    if constexpr (Vector) {
      const int quads = in_w / 4;
#pragma unroll 2
      for (int i = threadIdx.x; i < n * quads; i += kSeparableThreads) {
        const std::int64_t h = h0 + r0 + i / quads;
        float4 v = make_float4(identity<Op>(), identity<Op>(), identity<Op>(), identity<Op>());
        if (h >= 0 && h < ah.in) {
          for (int kd = 0; kd < ad.kernel; ++kd) {
            const std::int64_t d = d0 + kd * static_cast<std::int64_t>(ad.dilation);
            if (d < 0 || d >= ad.in) continue;
            v = combine<Op>(
                v, reinterpret_cast<const float4*>(xp + (d * ah.in + h) * in_w)[i % quads]);
          }
        }
        shared4[i] = v;
      }
    } else {
#pragma unroll 2
      for (int i = threadIdx.x; i < n * in_w; i += kSeparableThreads) {
        const std::int64_t h = h0 + r0 + i / in_w;
        float v = identity<Op>();
        if (h >= 0 && h < ah.in) {
          for (int kd = 0; kd < ad.kernel; ++kd) {
            const std::int64_t d = d0 + kd * static_cast<std::int64_t>(ad.dilation);
            if (d < 0 || d >= ad.in) continue;
            v = combine<Op>(v, xp[(d * ah.in + h) * in_w + i % in_w]);
          }
        }
        chunk[i] = v;
      }
    }
    __syncthreads();
    for (int i = threadIdx.x; i < n * out_w; i += kSeparableThreads) {
      const int r = i / out_w, ow = i % out_w;
      const int w0 = ow * aw.stride - aw.padding;
      float v = identity<Op>();
      for (int kw = 0; kw < aw.kernel; ++kw) {
        const int w = w0 + kw * aw.dilation;
        if (w >= 0 && w < in_w) v = combine<Op>(v, chunk[r * in_w + w]);
      }
      pooled[(r0 + r) * out_w + ow] = v;
    }
    __syncthreads();
  }
  float* yp = y + ((plane * ad.out + od) * ah.out + oh0) * aw.out;
  for (int i = threadIdx.x; i < out_rows * out_w; i += kSeparableThreads) {
    const int r = i / out_w, ow = i % out_w;
    float v = identity<Op>();
    for (int kh = 0; kh < ah.kernel; ++kh) {
      const int rel = r * ah.stride + kh * ah.dilation;  // input row h0 + rel
      if (h0 + rel >= 0 && h0 + rel < ah.in) v = combine<Op>(v, pooled[rel * out_w + ow]);
    }
    if constexpr (Op == PoolOp::kAvg)
      v /= static_cast<float>(divisor(ad, od) * divisor(ah, oh0 + r) * divisor(aw, ow));
    yp[i] = v;
  }
}

// --- Launchers ---------------------------------------------------------------------------

bool absent(const PoolAxis& a) {
  return a.in == 1 && a.out == 1 && a.kernel == 1 && a.stride == 1 && a.padding == 0 &&
         a.dilation == 1;
}

void check_shape(const PoolShape& s) {
  KILN_REQUIRE(s.planes > 0, "pooling: no planes");
  for (const PoolAxis& a : s.axis) {
    KILN_REQUIRE(
        a.in > 0 && a.out > 0 && a.kernel > 0 && a.stride > 0 && a.padding >= 0 && a.dilation > 0,
        "pooling: bad axis");
  }
}

unsigned grid_of(std::int64_t blocks, const char* what) {
  KILN_REQUIRE(blocks > 0 && blocks < (1ll << 31), std::string(what) + ": too many blocks");
  return static_cast<unsigned>(blocks);
}

template <PoolOp Op>
void launch_reference(const PoolShape& s, const float* x, float* y, cudaStream_t stream) {
  const std::int64_t count = s.outputs();
  pool_reference<Op>
      <<<grid_of((count + 255) / 256, "pool reference"), 256, 0, stream>>>(x, y, s, count);
}

template <int K>
void launch_sweep(const PoolShape& s, const float* x, float* y, cudaStream_t stream) {
  const PoolAxis &ah = s.axis[1], &aw = s.axis[2];
  const std::int64_t row_tiles = (ah.out + kSweepRows - 1) / kSweepRows;
  const std::int64_t col_tiles = (aw.out + kSweepThreads - 1) / kSweepThreads;
  maxpool2d_sweep<K>
      <<<grid_of(s.planes * row_tiles * col_tiles, "max pool sweep"), kSweepThreads, 0, stream>>>(
          x, y, ah, aw, row_tiles, col_tiles);
}

template <PoolOp Op, bool Vector>
void launch_separable(const PoolShape& s, const float* x, float* y, cudaStream_t stream) {
  const PoolAxis &ad = s.axis[0], &ah = s.axis[1], &aw = s.axis[2];
  int device = 0, optin = 0;
  KILN_CUDA_CHECK(cudaGetDevice(&device));
  KILN_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  int tile_rows = static_cast<int>(imin(32, ah.out)), chunk_rows = 16;
  const auto bytes = [&] {
    const std::int64_t band = (tile_rows - 1) * static_cast<std::int64_t>(ah.stride) +
                              static_cast<std::int64_t>(ah.dilation) * (ah.kernel - 1) + 1;
    return sizeof(float) * (chunk_rows * aw.in + band * aw.out);
  };
  // Up to 64 KiB a block (3 blocks an SM on sm_90) as long as the tiles allow.
  while (bytes() > 64 * 1024 && (tile_rows > 1 || chunk_rows > 1)) {
    if (tile_rows > 1) {
      tile_rows /= 2;
    } else {
      chunk_rows /= 2;
    }
  }
  KILN_REQUIRE(bytes() <= static_cast<std::size_t>(optin) && aw.in < (1 << 24),
               "pooling: the rows do not fit in shared memory");
  const auto kernel = pool_separable<Op, Vector>;
  if (bytes() > 48 * 1024) {
    KILN_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(bytes())));
  }
  const std::int64_t row_tiles = (ah.out + tile_rows - 1) / tile_rows;
  kernel<<<grid_of(s.planes * ad.out * row_tiles, "separable pool"), kSeparableThreads, bytes(),
           stream>>>(x, y, s, tile_rows, chunk_rows, row_tiles);
}

template <PoolOp Op>
void launch_kiln(const PoolShape& s, const float* x, float* y, cudaStream_t stream) {
  const PoolAxis &ad = s.axis[0], &ah = s.axis[1], &aw = s.axis[2];
  const bool aligned = reinterpret_cast<std::uintptr_t>(x) % 16 == 0 && aw.in % 4 == 0;
  if (absent(ad) && absent(ah) && aw.stride == 1 && aw.dilation * (aw.kernel - 1) <= kHalo1d) {
    const std::int64_t tiles = (aw.out + kTile1d - 1) / kTile1d;
    pool1d_tiles<Op>
        <<<grid_of(s.planes * tiles, "1-d pool"), kThreads1d, 0, stream>>>(x, y, aw, tiles);
    return;
  }
  if (absent(ad) && Op == PoolOp::kMax && ah.kernel == aw.kernel && ah.stride == 1 &&
      aw.stride == 1 && ah.dilation == 1 && aw.dilation == 1 && aw.kernel >= 2 && aw.kernel <= 8) {
    switch (aw.kernel) {
      case 2:
        return launch_sweep<2>(s, x, y, stream);
      case 3:
        return launch_sweep<3>(s, x, y, stream);
      case 4:
        return launch_sweep<4>(s, x, y, stream);
      case 5:
        return launch_sweep<5>(s, x, y, stream);
      case 6:
        return launch_sweep<6>(s, x, y, stream);
      case 7:
        return launch_sweep<7>(s, x, y, stream);
      case 8:
        return launch_sweep<8>(s, x, y, stream);
    }
  }
  if (absent(ad) && Op == PoolOp::kAvg && ah.dilation == 1 && aw.dilation == 1 &&
      aw.in <= 12 * 1024) {
    const unsigned blocks = grid_of(s.planes * ah.out, "2-d average pool");
    const std::size_t bytes = sizeof(float) * ((aw.in + 3) / 4 * 4);
    if (aligned) {
      avgpool2d_columns<true><<<blocks, kColumnThreads, bytes, stream>>>(x, y, ah, aw);
    } else {
      avgpool2d_columns<false><<<blocks, kColumnThreads, bytes, stream>>>(x, y, ah, aw);
    }
    return;
  }
  if (aligned) {
    launch_separable<Op, true>(s, x, y, stream);
  } else {
    launch_separable<Op, false>(s, x, y, stream);
  }
}

}  // namespace

void launch_pool_reference(const PoolShape& shape, const float* x, float* y, cudaStream_t stream) {
  check_shape(shape);
  if (shape.op == PoolOp::kMax) {
    launch_reference<PoolOp::kMax>(shape, x, y, stream);
  } else {
    launch_reference<PoolOp::kAvg>(shape, x, y, stream);
  }
  KILN_CUDA_CHECK(cudaGetLastError());
}

void launch_pool_kiln(const PoolShape& shape, const float* x, float* y, cudaStream_t stream) {
  check_shape(shape);
  if (shape.op == PoolOp::kMax) {
    launch_kiln<PoolOp::kMax>(shape, x, y, stream);
  } else {
    launch_kiln<PoolOp::kAvg>(shape, x, y, stream);
  }
  KILN_CUDA_CHECK(cudaGetLastError());
}

}  // namespace kiln::problems::kb1
