// The owner's reduction of comm=ce2 and the chunked ReduceScatter's sum (see part_sum.hpp):
// 16-byte loads of every part, an fp32 sum in list order, one rounding. The part count is a
// template parameter, so that a thread can issue all its parts' loads before the first add
// instead of relying on the compiler to unroll a loop of runtime length. A
// grid-stride loop over a grid of at most `ctas_per_sm` CTAs per SM: beside a persistent GEMM
// only the free SMs take CTAs, and the rest wait for them.
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

template <typename T, int kParts>
__global__ void __launch_bounds__(kThreads)
    sum_parts_kernel(PartList in, std::int64_t vectors, T* out) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t v = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
       v < vectors; v += stride) {
    uint4 raw[kParts];
#pragma unroll
    for (int p = 0; p < kParts; ++p) raw[p] = reinterpret_cast<const uint4*>(in.parts[p])[v];
    float x[kVector];
#pragma unroll
    for (int e = 0; e < kVector; ++e) x[e] = 0.0f;
#pragma unroll
    for (int p = 0; p < kParts; ++p) {
      const T* values = reinterpret_cast<const T*>(&raw[p]);
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

template <typename T>
void launch_sum(const PartList& in, std::int64_t vectors, T* out, int grid, cudaStream_t stream) {
  switch (in.count) {
#define KILN_SUM_PARTS_CASE(n)                                               \
  case n:                                                                    \
    sum_parts_kernel<T, n><<<grid, kThreads, 0, stream>>>(in, vectors, out); \
    break;
    KILN_SUM_PARTS_CASE(1)
    KILN_SUM_PARTS_CASE(2)
    KILN_SUM_PARTS_CASE(3)
    KILN_SUM_PARTS_CASE(4)
    KILN_SUM_PARTS_CASE(5)
    KILN_SUM_PARTS_CASE(6)
    KILN_SUM_PARTS_CASE(7)
    KILN_SUM_PARTS_CASE(8)
#undef KILN_SUM_PARTS_CASE
    default:
      throw UsageError("sum_parts: " + std::to_string(in.count) + " parts; accepted 1..8");
  }
}

bool aligned16(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
}

}  // namespace

void sum_parts(const PartList& in, std::int64_t elements, core::DType dtype, void* out,
               int device_sms, cudaStream_t stream, int ctas_per_sm) {
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
  if (ctas_per_sm < 1 || ctas_per_sm > kMaxCtasPerSm) {
    throw UsageError("sum_parts: ctas_per_sm " + std::to_string(ctas_per_sm) + "; accepted 1.." +
                     std::to_string(kMaxCtasPerSm));
  }
  if (elements == 0) return;
  const std::int64_t vectors = elements / kVector;
  const std::int64_t wanted = (vectors + kThreads - 1) / kThreads;
  const std::int64_t most = static_cast<std::int64_t>(ctas_per_sm) * device_sms;
  const int grid = static_cast<int>(wanted < most ? wanted : most);
  if (dtype == core::DType::kBf16) {
    launch_sum(in, vectors, static_cast<__nv_bfloat16*>(out), grid, stream);
  } else {
    launch_sum(in, vectors, static_cast<__half*>(out), grid, stream);
  }
  KILN_CUDA_CHECK_LAUNCH();
}

}  // namespace kiln::overlap
