// cub::DeviceReduce behind CubReduce (see cub_reduce.hpp).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <climits>

#include <cub/device/device_reduce.cuh>
#include <cuda/std/functional>
#include <cuda/std/limits>

#include "benchmarks/reduce/cub_reduce.hpp"
#include "core/cuda_check.hpp"
#include "core/error.hpp"

namespace kiln::benchmarks {
namespace {

// bf16/fp16 widened to fp32 as they are read, so CUB accumulates in fp32 like kiln.
template <typename T>
struct Widen {
  __host__ __device__ float operator()(T v) const {
    if constexpr (std::is_same_v<T, __nv_bfloat16>)
      return __bfloat162float(v);
    else
      return __half2float(v);
  }
};

struct WrappingSum {
  __host__ __device__ int operator()(int a, int b) const {
    return static_cast<int>(static_cast<unsigned>(a) + static_cast<unsigned>(b));
  }
};

// Calls CUB for input type T; with storage == nullptr, only sizes the storage.
template <typename T, typename Count>
cudaError_t call_cub(kernels::ReduceOp op, void* storage, std::size_t& bytes, const void* in_ptr,
                     Count count, void* out_ptr, cudaStream_t stream) {
  const T* in = static_cast<const T*>(in_ptr);
  if constexpr (std::is_same_v<T, int>) {
    int* out = static_cast<int*>(out_ptr);
    switch (op) {
      case kernels::ReduceOp::kSum:
        return cub::DeviceReduce::Reduce(storage, bytes, in, out, count, WrappingSum{}, 0, stream);
      case kernels::ReduceOp::kMin:
        return cub::DeviceReduce::Min(storage, bytes, in, out, count, stream);
      default:
        return cub::DeviceReduce::Max(storage, bytes, in, out, count, stream);
    }
  } else if constexpr (std::is_same_v<T, float>) {
    float* out = static_cast<float*>(out_ptr);
    switch (op) {
      case kernels::ReduceOp::kSum:
        return cub::DeviceReduce::Sum(storage, bytes, in, out, count, stream);
      case kernels::ReduceOp::kMin:
        return cub::DeviceReduce::Min(storage, bytes, in, out, count, stream);
      default:
        return cub::DeviceReduce::Max(storage, bytes, in, out, count, stream);
    }
  } else {
    float* out = static_cast<float*>(out_ptr);
    switch (op) {
      case kernels::ReduceOp::kSum:
        return cub::DeviceReduce::TransformReduce(
            storage, bytes, in, out, count, cuda::std::plus<float>{}, Widen<T>{}, 0.0f, stream);
      case kernels::ReduceOp::kMin:
        return cub::DeviceReduce::TransformReduce(
            storage, bytes, in, out, count, cuda::minimum<float>{}, Widen<T>{},
            cuda::std::numeric_limits<float>::infinity(), stream);
      default:
        return cub::DeviceReduce::TransformReduce(
            storage, bytes, in, out, count, cuda::maximum<float>{}, Widen<T>{},
            -cuda::std::numeric_limits<float>::infinity(), stream);
    }
  }
}

template <typename Count>
cudaError_t dispatch_counted(core::DType dtype, kernels::ReduceOp op, void* storage,
                             std::size_t& bytes, const void* in, Count count, void* out,
                             cudaStream_t stream) {
  switch (dtype) {
    case core::DType::kInt32:
      return call_cub<int>(op, storage, bytes, in, count, out, stream);
    case core::DType::kFp32:
      return call_cub<float>(op, storage, bytes, in, count, out, stream);
    case core::DType::kBf16:
      return call_cub<__nv_bfloat16>(op, storage, bytes, in, count, out, stream);
    default:
      return call_cub<__half>(op, storage, bytes, in, count, out, stream);
  }
}

// CUB picks 32-bit offsets for an int count and 64-bit ones for int64_t: give it the narrowest.
cudaError_t dispatch(core::DType dtype, kernels::ReduceOp op, void* storage, std::size_t& bytes,
                     const void* in, std::int64_t count, void* out, cudaStream_t stream) {
  if (count <= INT32_MAX) {
    return dispatch_counted(dtype, op, storage, bytes, in, static_cast<int>(count), out, stream);
  }
  return dispatch_counted(dtype, op, storage, bytes, in, count, out, stream);
}

}  // namespace

CubReduce::CubReduce(kernels::ReduceOp op, core::DType dtype, std::int64_t max_count)
    : op_(op), dtype_(dtype), max_count_(max_count) {
  KILN_REQUIRE(max_count >= 1, "CUB reduce: max_count must be >= 1");
  // run() takes CUB's 32-bit-offset path for counts <= INT32_MAX and its 64-bit one above: two
  // different kernels, each with its own storage need. Beyond one tile CUB wants one partial per
  // block of its grid, (blocks resident per SM) x SMs x 5, and residency follows the kernel's
  // registers: on sm_90 the 64-bit DeviceReduceKernel takes 40 registers (6 blocks of 256 per SM)
  // and the 32-bit one 32 (8 per SM). Storage sized only at a count above INT32_MAX was thus too
  // small for a count below it, and CUB refused it with cudaErrorInvalidValue. So size for the
  // largest count of each path run() can take (past one tile CUB's need no longer depends on the
  // count, so INT32_MAX stands for every count of the 32-bit path).
  std::size_t bytes = 0;
  KILN_CUDA_CHECK(dispatch(dtype_, op_, nullptr, bytes, nullptr, max_count, nullptr, nullptr));
  if (max_count > INT32_MAX) {
    std::size_t narrow_bytes = 0;
    KILN_CUDA_CHECK(
        dispatch(dtype_, op_, nullptr, narrow_bytes, nullptr, INT32_MAX, nullptr, nullptr));
    bytes = std::max(bytes, narrow_bytes);
  }
  storage_ = core::DeviceBuffer(std::max<std::size_t>(bytes, 16));
}

void CubReduce::run(const void* in, std::int64_t count, void* out, cudaStream_t stream) const {
  KILN_REQUIRE(count >= 1 && count <= max_count_,
               "CUB reduce: count outside the storage it was sized for");
  // Sized for both offset paths at construction: no sizing query inside a timed region.
  std::size_t bytes = storage_.bytes();
  KILN_CUDA_CHECK(dispatch(dtype_, op_, storage_.data(), bytes, in, count, out, stream));
}

}  // namespace kiln::benchmarks
