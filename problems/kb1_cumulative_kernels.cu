// Kernels of the cumulative kb1 problems (see kb1_cumulative_kernels.hpp).
//
// cumprod and the order of products: the reference multiplies in fp32 in row order, the
// solution in a different (blocked) order, also in fp32. Both round every product to fp32, so
// both follow fp32's absorbing values the same way: a running product that underflows to 0
// stays 0 (0 times a finite value) and one that overflows stays inf. A double product rounded
// once would not: it can come back from below fp32's range, where every fp32 scan (PyTorch's
// included) has already reached 0. Where the products are normal fp32 numbers (the first few
// hundred of a row), the two orders differ by rounding only: at most 2e-6 relative over a
// whole kb-size trial in a host emulation of both, against rtol 1e-4; below that the absolute
// tolerance (1e-4) covers any difference. The solution's partial products of a stretch of the
// row could in principle overflow where the running product does not (then 0 * inf = NaN);
// with cumprod's inputs (positive, at most 64, a geometric mean below 1) no stretch comes near
// 2^128.
#include "core/cuda_check.hpp"
#include "core/test_values.hpp"
#include "problems/kb1_cumulative_kernels.hpp"

namespace kiln::problems::kb1 {
namespace {

template <ScanOp Op>
inline constexpr bool kProduct = Op == ScanOp::kCumprod;
template <ScanOp Op>
inline constexpr bool kReverse = Op == ScanOp::kCumsumReverse;
template <ScanOp Op>
inline constexpr bool kExclusive = Op == ScanOp::kCumsumExclusive;
template <ScanOp Op>
inline constexpr bool kMasked = Op == ScanOp::kMaskedCumsum;

template <ScanOp Op>
__device__ __forceinline__ float identity() {
  return kProduct<Op> ? 1.0f : 0.0f;
}

template <ScanOp Op>
__device__ __forceinline__ float combine(float a, float b) {
  if constexpr (kProduct<Op>) {
    return a * b;
  } else {
    return a + b;
  }
}

__global__ void mask_bits(std::uint8_t* mask, std::int64_t count, std::uint64_t seed) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    mask[i] = static_cast<std::uint8_t>(
        core::mix64(seed ^ core::mix64(static_cast<std::uint64_t>(i))) >> 63);
  }
}

// One thread per row, in order. x * mask is x where the mask is set and 0 elsewhere (PyTorch's
// bool-to-float product; -0 for negative x, which adds the same).
template <ScanOp Op>
__global__ void scan_reference(const float* __restrict__ x, const std::uint8_t* __restrict__ mask,
                               float* __restrict__ y, std::int64_t rows, std::int64_t cols) {
  const std::int64_t row = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (row >= rows) return;
  const std::int64_t base = row * cols;
  if constexpr (kProduct<Op>) {
    float product = 1.0f;
    for (std::int64_t j = base; j < base + cols; ++j) {
      product *= x[j];
      y[j] = product;
    }
  } else {
    double sum = 0.0;
    for (std::int64_t k = 0; k < cols; ++k) {
      const std::int64_t j = base + (kReverse<Op> ? cols - 1 - k : k);
      double v = x[j];
      if constexpr (kMasked<Op>) v = mask[j] != 0 ? v : 0.0;
      if constexpr (kExclusive<Op>) {
        y[j] = static_cast<float>(sum);
        sum += v;
      } else {
        sum += v;
        y[j] = static_cast<float>(sum);
      }
    }
  }
}

constexpr int kThreads = 256, kWarps = kThreads / 32;
constexpr int kVectors = 4;  // vectors per thread per chunk: a chunk is kThreads * kVectors

template <int Vec>
__device__ __forceinline__ void load_vector(const float* row, std::int64_t v, float (&e)[Vec]) {
  if constexpr (Vec == 4) {
    const float4 a = reinterpret_cast<const float4*>(row)[v];
    e[0] = a.x;
    e[1] = a.y;
    e[2] = a.z;
    e[3] = a.w;
  } else {
    e[0] = row[v];
  }
}

// Multiplies by the mask as float (1 or 0), as x * mask does.
template <int Vec>
__device__ __forceinline__ void apply_mask(const std::uint8_t* row, std::int64_t v,
                                           float (&e)[Vec]) {
  if constexpr (Vec == 4) {
    const uchar4 m = reinterpret_cast<const uchar4*>(row)[v];
    e[0] *= m.x != 0 ? 1.0f : 0.0f;
    e[1] *= m.y != 0 ? 1.0f : 0.0f;
    e[2] *= m.z != 0 ? 1.0f : 0.0f;
    e[3] *= m.w != 0 ? 1.0f : 0.0f;
  } else {
    e[0] *= row[v] != 0 ? 1.0f : 0.0f;
  }
}

template <int Vec>
__device__ __forceinline__ void store_vector(float* row, std::int64_t v, const float (&e)[Vec]) {
  if constexpr (Vec == 4) {
    reinterpret_cast<float4*>(row)[v] = make_float4(e[0], e[1], e[2], e[3]);
  } else {
    row[v] = e[0];
  }
}

template <int Vec>
__device__ __forceinline__ void reverse(float (&e)[Vec]) {
#pragma unroll
  for (int k = 0; k < Vec / 2; ++k) {
    const float t = e[k];
    e[k] = e[Vec - 1 - k];
    e[Vec - 1 - k] = t;
  }
}

// One block per row (blockIdx.x). The row is `vectors` = cols / Vec vectors of Vec elements;
// the scan visits them in "scan order" (the row's order, or its reverse for kReverse): scan
// position s is vector s (or vectors - 1 - s), its elements in order (or reversed). A chunk is
// kVectors * kThreads consecutive scan positions; thread t holds positions first + i * kThreads
// + t (i < kVectors), so a warp's loads of one i are consecutive 16-byte vectors.
template <ScanOp Op, int Vec>
__global__ void __launch_bounds__(kThreads)
    scan_rows(const float* __restrict__ x, const std::uint8_t* __restrict__ mask,
              float* __restrict__ y, std::int64_t cols) {
  __shared__ float warp_totals[2][kVectors][kWarps];
  const std::int64_t offset = static_cast<std::int64_t>(blockIdx.x) * cols;
  const float* x_row = x + offset;
  float* y_row = y + offset;
  const std::uint8_t* mask_row = kMasked<Op> ? mask + offset : nullptr;
  const std::int64_t vectors = cols / Vec;
  const int lane = static_cast<int>(threadIdx.x % 32), warp = static_cast<int>(threadIdx.x / 32);
  float carry = identity<Op>();  // the scan of every earlier chunk
  int parity = 0;
  for (std::int64_t first = 0; first < vectors; first += kThreads * kVectors, parity ^= 1) {
    // Each vector's inclusive scan, in scan order; identity past the row's end.
    float local[kVectors][Vec];
#pragma unroll
    for (int i = 0; i < kVectors; ++i) {
      const std::int64_t s = first + i * kThreads + threadIdx.x;
      float e[Vec];
#pragma unroll
      for (int k = 0; k < Vec; ++k) e[k] = identity<Op>();
      if (s < vectors) {
        const std::int64_t v = kReverse<Op> ? vectors - 1 - s : s;
        load_vector<Vec>(x_row, v, e);
        if constexpr (kMasked<Op>) apply_mask<Vec>(mask_row, v, e);
        if constexpr (kReverse<Op>) reverse<Vec>(e);
      }
      local[i][0] = e[0];
#pragma unroll
      for (int k = 1; k < Vec; ++k) local[i][k] = combine<Op>(local[i][k - 1], e[k]);
    }
    // The warp's inclusive scan of the vector totals (Hillis-Steele over shuffles), the four
    // independent scans interleaved.
    float inclusive[kVectors], exclusive[kVectors];
#pragma unroll
    for (int i = 0; i < kVectors; ++i) inclusive[i] = local[i][Vec - 1];
#pragma unroll
    for (int o = 1; o < 32; o *= 2) {
#pragma unroll
      for (int i = 0; i < kVectors; ++i) {
        const float up = __shfl_up_sync(0xffffffffu, inclusive[i], o);
        if (lane >= o) inclusive[i] = combine<Op>(up, inclusive[i]);
      }
    }
#pragma unroll
    for (int i = 0; i < kVectors; ++i) {
      exclusive[i] = __shfl_up_sync(0xffffffffu, inclusive[i], 1);
      if (lane == 0) exclusive[i] = identity<Op>();
      if (lane == 31) warp_totals[parity][i][warp] = inclusive[i];
    }
    // One barrier per chunk: a thread writing this buffer again (two chunks on) has passed the
    // next chunk's barrier, which every thread reaches only after reading this one.
    __syncthreads();
    // Every thread walks the chunk's warp totals in scan order (the same operations in the same
    // order in every thread, so all agree on the carry bit for bit).
    float prefix[kVectors];
    float running = carry;
#pragma unroll
    for (int i = 0; i < kVectors; ++i) {
      prefix[i] = identity<Op>();
#pragma unroll
      for (int w = 0; w < kWarps; ++w) {
        if (w == warp) prefix[i] = running;
        running = combine<Op>(running, warp_totals[parity][i][w]);
      }
    }
    carry = running;
#pragma unroll
    for (int i = 0; i < kVectors; ++i) {
      const std::int64_t s = first + i * kThreads + threadIdx.x;
      if (s >= vectors) continue;
      const float before = combine<Op>(prefix[i], exclusive[i]);  // scan of everything earlier
      float out[Vec];
#pragma unroll
      for (int k = 0; k < Vec; ++k) {
        if constexpr (kExclusive<Op>) {
          out[k] = k == 0 ? before : combine<Op>(before, local[i][k - 1]);
        } else {
          out[k] = combine<Op>(before, local[i][k]);
        }
      }
      if constexpr (kReverse<Op>) reverse<Vec>(out);
      store_vector<Vec>(y_row, kReverse<Op> ? vectors - 1 - s : s, out);
    }
  }
}

template <ScanOp Op>
void launch(bool kiln, const float* x, const std::uint8_t* mask, float* y, std::int64_t rows,
            std::int64_t cols, cudaStream_t stream) {
  KILN_REQUIRE(rows > 0 && cols > 0, "scan: empty tensor");
  KILN_REQUIRE(!kMasked<Op> || mask != nullptr, "masked cumsum: no mask");
  if (kiln) {
    KILN_REQUIRE(rows < (1ll << 31), "scan: more than 2^31 - 1 rows");
    const auto aligned = [](const void* p, std::uintptr_t to) {
      return reinterpret_cast<std::uintptr_t>(p) % to == 0;
    };
    // Rows of 4k elements keep 16-byte (mask: 4-byte) alignment from row to row.
    const bool vec4 =
        cols % 4 == 0 && aligned(x, 16) && aligned(y, 16) && (!kMasked<Op> || aligned(mask, 4));
    const unsigned blocks = static_cast<unsigned>(rows);
    if (vec4) {
      scan_rows<Op, 4><<<blocks, kThreads, 0, stream>>>(x, mask, y, cols);
    } else {
      scan_rows<Op, 1><<<blocks, kThreads, 0, stream>>>(x, mask, y, cols);
    }
  } else {
    const std::int64_t blocks = (rows + 63) / 64;
    scan_reference<Op><<<static_cast<unsigned>(blocks), 64, 0, stream>>>(x, mask, y, rows, cols);
  }
  KILN_CUDA_CHECK(cudaGetLastError());
}

void dispatch(ScanOp op, bool kiln, const float* x, const std::uint8_t* mask, float* y,
              std::int64_t rows, std::int64_t cols, cudaStream_t stream) {
  switch (op) {
    case ScanOp::kCumsum:
      return launch<ScanOp::kCumsum>(kiln, x, mask, y, rows, cols, stream);
    case ScanOp::kCumprod:
      return launch<ScanOp::kCumprod>(kiln, x, mask, y, rows, cols, stream);
    case ScanOp::kCumsumReverse:
      return launch<ScanOp::kCumsumReverse>(kiln, x, mask, y, rows, cols, stream);
    case ScanOp::kCumsumExclusive:
      return launch<ScanOp::kCumsumExclusive>(kiln, x, mask, y, rows, cols, stream);
    case ScanOp::kMaskedCumsum:
      return launch<ScanOp::kMaskedCumsum>(kiln, x, mask, y, rows, cols, stream);
  }
}

}  // namespace

void fill_mask(std::uint8_t* mask, std::int64_t count, std::uint64_t seed, cudaStream_t stream) {
  const std::int64_t wanted = (count + 255) / 256;
  const int blocks = static_cast<int>(wanted < 1 ? 1 : (wanted > 65536 ? 65536 : wanted));
  mask_bits<<<blocks, 256, 0, stream>>>(mask, count, seed);
  KILN_CUDA_CHECK(cudaGetLastError());
}

void launch_scan_reference(ScanOp op, const float* x, const std::uint8_t* mask, float* y,
                           std::int64_t rows, std::int64_t cols, cudaStream_t stream) {
  dispatch(op, false, x, mask, y, rows, cols, stream);
}

void launch_scan_kiln(ScanOp op, const float* x, const std::uint8_t* mask, float* y,
                      std::int64_t rows, std::int64_t cols, cudaStream_t stream) {
  dispatch(op, true, x, mask, y, rows, cols, stream);
}

}  // namespace kiln::problems::kb1
