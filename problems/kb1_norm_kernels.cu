// Kernels of the normalisation kb1 problems (see kb1_norm_kernels.hpp).
#include <cfloat>
#include <cmath>

#include "core/cuda_check.hpp"
#include "problems/kb1_norm_kernels.hpp"

namespace kiln::problems::kb1 {
namespace {

constexpr int kThreads = 256;

// Op-specific statistic pair: softmax (running max, sum of exp(x - max)); L1 (sum |x|, -);
// L2 and RMS (sum x^2, -); standardize (sum x, sum x^2).
struct Partial {
  double a, b;
};

template <NormOp Op>
inline constexpr bool kIsSoftmax = Op == NormOp::kSoftmax || Op == NormOp::kLogSoftmax;

template <NormOp Op, typename T>
__device__ __forceinline__ void start(T& a, T& b) {
  a = kIsSoftmax<Op> ? -INFINITY : T(0);
  b = T(0);
}

template <NormOp Op, typename T>
__device__ __forceinline__ void accumulate(T& a, T& b, T x) {
  if constexpr (kIsSoftmax<Op>) {
    if (x > a) {
      b = b * exp(a - x) + T(1);
      a = x;
    } else {
      b += exp(x - a);
    }
  } else if constexpr (Op == NormOp::kL1) {
    a += fabs(x);
  } else if constexpr (Op == NormOp::kL2 || Op == NormOp::kRms) {
    a += x * x;
  } else {
    a += x;
    b += x * x;
  }
}

template <NormOp Op>
__device__ __forceinline__ Partial combine(Partial p, Partial q) {
  if constexpr (kIsSoftmax<Op>) {
    if (p.a == -INFINITY) return q;
    if (q.a == -INFINITY) return p;
    const double m = p.a > q.a ? p.a : q.a;
    return {m, p.b * exp(p.a - m) + q.b * exp(q.a - m)};
  } else {
    return {p.a + q.a, p.b + q.b};
  }
}

// The two factors the map applies (see map_one).
template <NormOp Op>
__device__ __forceinline__ Partial finish(Partial s, double length, double eps) {
  switch (Op) {
    case NormOp::kSoftmax:
      return {s.a, s.b};
    case NormOp::kLogSoftmax:
      return {s.a, log(s.b)};
    case NormOp::kL1:
      return {s.a / length, 0.0};
    case NormOp::kL2:
      return {sqrt(s.a), 0.0};
    case NormOp::kRms:
      return {sqrt(s.a / length + eps), 0.0};
    case NormOp::kStandardize: {
      const double mean = s.a / length;
      const double var = s.b / length - mean * mean;
      return {mean, 1.0 / sqrt((var > 0.0 ? var : 0.0) + eps)};
    }
  }
  return s;
}

template <NormOp Op, typename T>
__device__ __forceinline__ T map_one(T x, T f0, T f1) {
  if constexpr (Op == NormOp::kSoftmax) return exp(x - f0) / f1;
  if constexpr (Op == NormOp::kLogSoftmax) return x - f0 - f1;
  if constexpr (Op == NormOp::kStandardize) return (x - f0) * f1;
  return x / f0;
}

// Block-wide combine of one Partial per thread (blockDim.x == kThreads); thread 0 gets it.
template <NormOp Op>
__device__ Partial block_combine(Partial p) {
  __shared__ Partial shared[kThreads];
  shared[threadIdx.x] = p;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half)
      shared[threadIdx.x] = combine<Op>(shared[threadIdx.x], shared[threadIdx.x + half]);
    __syncthreads();
  }
  return shared[0];
}

// One block per (segment, chunk): the chunk's statistics, accumulated per thread in T.
template <NormOp Op, typename T>
__global__ void chunk_stats(const float* x, NormShape shape, std::int64_t chunk,
                            std::int64_t chunks, Partial* partials) {
  const std::int64_t block = blockIdx.x + static_cast<std::int64_t>(gridDim.x) * blockIdx.y;
  if (block >= shape.segments() * chunks) return;
  const std::int64_t s = block / chunks, c = block % chunks;
  const std::int64_t length = shape.segment_length();
  const std::int64_t begin = c * chunk, end = begin + chunk < length ? begin + chunk : length;
  T a, b;
  start<Op>(a, b);
  for (std::int64_t j = begin + threadIdx.x; j < end; j += blockDim.x)
    accumulate<Op>(a, b, static_cast<T>(x[shape.offset(s, j)]));
  const Partial total = block_combine<Op>({static_cast<double>(a), static_cast<double>(b)});
  if (threadIdx.x == 0) partials[block] = total;
}

// One thread per segment: its chunks in order, then the map's factors.
template <NormOp Op>
__global__ void finish_segments(const Partial* partials, std::int64_t chunks, NormShape shape,
                                Partial* factors) {
  const std::int64_t s = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (s >= shape.segments()) return;
  Partial total = partials[s * chunks];
  for (std::int64_t c = 1; c < chunks; ++c) total = combine<Op>(total, partials[s * chunks + c]);
  factors[s] = finish<Op>(total, static_cast<double>(shape.segment_length()), shape.eps);
}

__device__ __forceinline__ std::int64_t segment_of(const NormShape& shape, std::int64_t e) {
  if (shape.axes == SegmentAxes::kMiddle) return (e / (shape.q * shape.r)) * shape.r + e % shape.r;
  return (e / shape.r) % shape.q;
}

template <NormOp Op, typename T>
__global__ void map_elements(const float* x, float* y, NormShape shape, const Partial* factors) {
  const std::int64_t count = shape.p * shape.q * shape.r;
  for (std::int64_t e = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; e < count;
       e += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const Partial f = factors[segment_of(shape, e)];
    y[e] = static_cast<float>(
        map_one<Op, T>(static_cast<T>(x[e]), static_cast<T>(f.a), static_cast<T>(f.b)));
  }
}

// kiln, kMiddle with R > 1 and short segments (RMSNorm over 64 channels): a thread per
// segment, neighbours on neighbouring r, so every access is coalesced; statistics and map in
// one pass over the segment twice (the second from cache).
template <NormOp Op>
__global__ void strided_segments(const float* x, float* y, NormShape shape) {
  const std::int64_t s = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (s >= shape.segments()) return;
  float a, b;
  start<Op>(a, b);
  for (std::int64_t j = 0; j < shape.q; ++j) accumulate<Op>(a, b, x[shape.offset(s, j)]);
  const Partial f = finish<Op>({a, b}, static_cast<double>(shape.q), shape.eps);
  const float f0 = static_cast<float>(f.a), f1 = static_cast<float>(f.b);
  for (std::int64_t j = 0; j < shape.q; ++j) {
    const std::int64_t o = shape.offset(s, j);
    y[o] = map_one<Op, float>(x[o], f0, f1);
  }
}

dim3 grid_of(std::int64_t blocks) {
  // Up to 2^31 - 1 blocks along x, the rest along y.
  const std::int64_t x = blocks < 2147483647 ? (blocks > 0 ? blocks : 1) : 2147483647;
  return dim3(static_cast<unsigned>(x), static_cast<unsigned>((blocks + x - 1) / x));
}

int sms() {
  int count = 0, device = 0;
  KILN_CUDA_CHECK(cudaGetDevice(&device));
  KILN_CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
  return count;
}

std::int64_t chunk_for(bool kiln) {
  return kiln ? 16384 : 65536;
}

template <NormOp Op>
void launch(bool kiln, const NormShape& shape, const float* x, float* y, double* scratch,
            cudaStream_t stream) {
  KILN_REQUIRE(shape.p > 0 && shape.q > 0 && shape.r > 0, "norm: empty tensor");
  const std::int64_t segments = shape.segments();
  if (kiln && shape.axes == SegmentAxes::kMiddle && shape.r > 1 && shape.q <= 1024) {
    strided_segments<Op>
        <<<static_cast<unsigned>((segments + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
            x, y, shape);
    KILN_CUDA_CHECK(cudaGetLastError());
    return;
  }
  const std::int64_t chunk = chunk_for(kiln);
  const std::int64_t chunks = (shape.segment_length() + chunk - 1) / chunk;
  Partial* partials = reinterpret_cast<Partial*>(scratch);
  Partial* factors = partials + segments * chunks;
  if (kiln) {
    chunk_stats<Op, float>
        <<<grid_of(segments * chunks), kThreads, 0, stream>>>(x, shape, chunk, chunks, partials);
  } else {
    chunk_stats<Op, double>
        <<<grid_of(segments * chunks), kThreads, 0, stream>>>(x, shape, chunk, chunks, partials);
  }
  finish_segments<Op>
      <<<static_cast<unsigned>((segments + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
          partials, chunks, shape, factors);
  const std::int64_t count = shape.p * shape.q * shape.r;
  if (kiln) {
    const std::int64_t wanted = (count + kThreads - 1) / kThreads;
    const int blocks = static_cast<int>(wanted < sms() * 16 ? wanted : sms() * 16);
    map_elements<Op, float><<<blocks, kThreads, 0, stream>>>(x, y, shape, factors);
  } else {
    map_elements<Op, double><<<grid_of((count + kThreads - 1) / kThreads).x, kThreads, 0, stream>>>(
        x, y, shape, factors);
  }
  KILN_CUDA_CHECK(cudaGetLastError());
}

void dispatch(NormOp op, bool kiln, const NormShape& shape, const float* x, float* y,
              double* scratch, cudaStream_t stream) {
  switch (op) {
    case NormOp::kSoftmax:
      return launch<NormOp::kSoftmax>(kiln, shape, x, y, scratch, stream);
    case NormOp::kLogSoftmax:
      return launch<NormOp::kLogSoftmax>(kiln, shape, x, y, scratch, stream);
    case NormOp::kL1:
      return launch<NormOp::kL1>(kiln, shape, x, y, scratch, stream);
    case NormOp::kL2:
      return launch<NormOp::kL2>(kiln, shape, x, y, scratch, stream);
    case NormOp::kRms:
      return launch<NormOp::kRms>(kiln, shape, x, y, scratch, stream);
    case NormOp::kStandardize:
      return launch<NormOp::kStandardize>(kiln, shape, x, y, scratch, stream);
  }
}

}  // namespace

std::int64_t norm_scratch_doubles(const NormShape& shape, bool kiln) {
  const std::int64_t chunk = chunk_for(kiln);
  const std::int64_t chunks = (shape.segment_length() + chunk - 1) / chunk;
  return 2 * shape.segments() * (chunks + 1);
}

void launch_norm_reference(NormOp op, const NormShape& shape, const float* x, float* y,
                           double* scratch, cudaStream_t stream) {
  dispatch(op, false, shape, x, y, scratch, stream);
}

void launch_norm_kiln(NormOp op, const NormShape& shape, const float* x, float* y, double* scratch,
                      cudaStream_t stream) {
  dispatch(op, true, shape, x, y, scratch, stream);
}

}  // namespace kiln::problems::kb1
