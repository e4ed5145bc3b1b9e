// Largest differences of two bf16 device buffers (see relative_difference.hpp).
#include <cuda_bf16.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>

#include "core/cuda_check.hpp"
#include "core/relative_difference.hpp"

namespace kiln::core {
namespace {

constexpr unsigned long long kNone = std::numeric_limits<unsigned long long>::max();

struct Result {
  unsigned max_difference_bits;  // a non-negative float's bits order like the float
  unsigned max_want_bits;
  unsigned long long first_nonfinite_got;
  unsigned long long first_nonfinite_want;
};

struct Partial {
  float difference = 0.0f, want = 0.0f;
  unsigned long long nonfinite_got = kNone, nonfinite_want = kNone;

  __device__ void add(float w, float g, unsigned long long index) {
    const bool want_ok = isfinite(w), got_ok = isfinite(g);
    if (!want_ok && index < nonfinite_want) nonfinite_want = index;
    if (!got_ok && index < nonfinite_got) nonfinite_got = index;
    if (want_ok) want = fmaxf(want, fabsf(w));
    if (want_ok && got_ok) difference = fmaxf(difference, fabsf(g - w));
  }
};

// 8 elements a 16-byte load where both buffers allow it, one at a time otherwise; each warp
// combines its threads' partials and its first lane publishes them with one atomic each.
__global__ void relative_difference_kernel(const __nv_bfloat16* want, const __nv_bfloat16* got,
                                           std::size_t count, bool vectors, Result* result) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t first = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  Partial p;
  std::size_t done = 0;
  if (vectors) {
    const std::size_t words = count / 8;
    for (std::size_t v = first; v < words; v += stride) {
      const uint4 wv = reinterpret_cast<const uint4*>(want)[v];
      const uint4 gv = reinterpret_cast<const uint4*>(got)[v];
      const auto* w = reinterpret_cast<const __nv_bfloat16*>(&wv);
      const auto* g = reinterpret_cast<const __nv_bfloat16*>(&gv);
#pragma unroll
      for (int i = 0; i < 8; ++i) p.add(__bfloat162float(w[i]), __bfloat162float(g[i]), v * 8 + i);
    }
    done = words * 8;
  }
  for (std::size_t i = done + first; i < count; i += stride)
    p.add(__bfloat162float(want[i]), __bfloat162float(got[i]), i);
  for (int offset = 16; offset > 0; offset /= 2) {
    p.difference = fmaxf(p.difference, __shfl_down_sync(0xffffffffu, p.difference, offset));
    p.want = fmaxf(p.want, __shfl_down_sync(0xffffffffu, p.want, offset));
    p.nonfinite_got = min(p.nonfinite_got, __shfl_down_sync(0xffffffffu, p.nonfinite_got, offset));
    p.nonfinite_want =
        min(p.nonfinite_want, __shfl_down_sync(0xffffffffu, p.nonfinite_want, offset));
  }
  if (threadIdx.x % 32 == 0) {
    atomicMax(&result->max_difference_bits, __float_as_uint(p.difference));
    atomicMax(&result->max_want_bits, __float_as_uint(p.want));
    if (p.nonfinite_got != kNone) atomicMin(&result->first_nonfinite_got, p.nonfinite_got);
    if (p.nonfinite_want != kNone) atomicMin(&result->first_nonfinite_want, p.nonfinite_want);
  }
}

}  // namespace

RelativeDifferenceMeter::RelativeDifferenceMeter() : result_(sizeof(Result)) {}

RelativeDifference RelativeDifferenceMeter::measure_bf16(const void* want, const void* got,
                                                         std::size_t count, cudaStream_t stream) {
  RelativeDifference out;
  if (count == 0) return out;
  auto* result = static_cast<Result*>(result_.data());
  const Result start{0u, 0u, kNone, kNone};
  KILN_CUDA_CHECK(cudaMemcpyAsync(result, &start, sizeof(start), cudaMemcpyHostToDevice, stream));
  const bool vectors = reinterpret_cast<std::uintptr_t>(want) % 16 == 0 &&
                       reinterpret_cast<std::uintptr_t>(got) % 16 == 0;
  const std::size_t work = vectors ? count / 8 + 8 : count;
  const int blocks = static_cast<int>(std::min<std::size_t>(2048, (work + 255) / 256));
  relative_difference_kernel<<<blocks, 256, 0, stream>>>(static_cast<const __nv_bfloat16*>(want),
                                                         static_cast<const __nv_bfloat16*>(got),
                                                         count, vectors, result);
  KILN_CUDA_CHECK_LAUNCH();
  Result host{};
  KILN_CUDA_CHECK(cudaMemcpyAsync(&host, result, sizeof(host), cudaMemcpyDeviceToHost, stream));
  KILN_CUDA_CHECK(cudaStreamSynchronize(stream));
  float difference = 0.0f, max_want = 0.0f;
  std::memcpy(&difference, &host.max_difference_bits, sizeof(float));
  std::memcpy(&max_want, &host.max_want_bits, sizeof(float));
  out.max_abs_difference = difference;
  out.max_abs_want = max_want;
  if (host.first_nonfinite_got != kNone) out.first_nonfinite_got = host.first_nonfinite_got;
  if (host.first_nonfinite_want != kNone) out.first_nonfinite_want = host.first_nonfinite_want;
  return out;
}

}  // namespace kiln::core
