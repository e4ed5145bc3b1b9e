// The owner's reduction of comm=ce2 (see part_sum.hpp): 16-byte loads of every part, an fp32 sum
// in list order, one rounding. A grid-stride loop over a grid of at most two CTAs per SM: beside a
// persistent GEMM only the free SMs take CTAs, and the rest wait for them.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <string>

#include "core/cuda_check.hpp"
#include "core/error.hpp"
#include "core/half_float.cuh"
#include "overlap/part_sum.hpp"

namespace kiln::overlap {
namespace {

constexpr int kThreads = 256;
constexpr int kVector = 8;  // elements per 16-byte access

template <typename T>
__global__ void __launch_bounds__(kThreads)
    sum_parts_kernel(PartList in, std::int64_t vectors, T* out) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t v = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
       v < vectors; v += stride) {
    float x[kVector];
#pragma unroll
    for (int e = 0; e < kVector; ++e) x[e] = 0.0f;
    for (int p = 0; p < in.count; ++p) {
      const uint4 raw = reinterpret_cast<const uint4*>(in.parts[p])[v];
      const T* values = reinterpret_cast<const T*>(&raw);
#pragma unroll
      for (int e = 0; e < kVector; ++e) x[e] += core::to_float(values[e]);
    }
    uint4 packed;
    T* y = reinterpret_cast<T*>(&packed);
#pragma unroll
    for (int e = 0; e < kVector; ++e) y[e] = core::from_float<T>(x[e]);
    reinterpret_cast<uint4*>(out)[v] = packed;
  }
}

bool aligned16(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
}

}  // namespace

void sum_parts(const PartList& in, std::int64_t elements, core::DType dtype, void* out,
               int device_sms, cudaStream_t stream) {
  if (in.count < 1 || in.count > PartList::kMaxParts) {
    throw UsageError("sum_parts: " + std::to_string(in.count) + " parts; accepted 1.." +
                     std::to_string(PartList::kMaxParts));
  }
  if (dtype != core::DType::kBf16 && dtype != core::DType::kFp16) {
    throw UsageError("sum_parts: dtype " + core::dtype_name(dtype) + "; accepted bf16, fp16");
  }
  if (elements < 0 || elements % kVector != 0) {
    throw UsageError("sum_parts: " + std::to_string(elements) +
                     " elements; must be a multiple of 8");
  }
  for (int p = 0; p < in.count; ++p) {
    if (in.parts[p] == nullptr || !aligned16(in.parts[p])) {
      throw UsageError("sum_parts: part " + std::to_string(p) + " is null or not 16-byte aligned");
    }
  }
  if (out == nullptr || !aligned16(out)) {
    throw UsageError("sum_parts: the output is null or not 16-byte aligned");
  }
  if (device_sms < 1) {
    throw UsageError("sum_parts: device_sms " + std::to_string(device_sms) + "; must be >= 1");
  }
  if (elements == 0) return;
  const int sms = device_sms;
  const std::int64_t vectors = elements / kVector;
  const std::int64_t wanted = (vectors + kThreads - 1) / kThreads;
  const int grid = static_cast<int>(wanted < 2 * sms ? wanted : 2 * sms);
  if (dtype == core::DType::kBf16) {
    sum_parts_kernel<__nv_bfloat16>
        <<<grid, kThreads, 0, stream>>>(in, vectors, static_cast<__nv_bfloat16*>(out));
  } else {
    sum_parts_kernel<__half><<<grid, kThreads, 0, stream>>>(in, vectors, static_cast<__half*>(out));
  }
  KILN_CUDA_CHECK_LAUNCH();
}

}  // namespace kiln::overlap
