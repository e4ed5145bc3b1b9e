#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "core/cuda_check.hpp"
#include "core/error.hpp"
#include "core/fill.hpp"
#include "core/test_values.hpp"

namespace kiln::core {
namespace {

template <typename T>
__device__ T from_float(float value) {
  return static_cast<T>(value);
}
template <>
__device__ __nv_bfloat16 from_float<__nv_bfloat16>(float value) {
  return __float2bfloat16(value);
}
template <>
__device__ __half from_float<__half>(float value) {
  return __float2half(value);
}

template <typename T>
__global__ void fill_test_values_kernel(T* out, std::uint64_t count, std::uint64_t seed, int rank) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
       i < count; i += stride) {
    out[i] = from_float<T>(static_cast<float>(test_value(seed, rank, i)));
  }
}

// One kernel for the rate-measurement fills; the distribution is uniform across the launch.
template <typename T>
__global__ void fill_random_kernel(T* out, std::uint64_t count, std::uint64_t seed, bool normal) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
       i < count; i += stride) {
    out[i] = from_float<T>(normal ? normal_value(seed, i) : uniform_value(seed, i));
  }
}

unsigned grid_for(std::uint64_t count) {
  const std::uint64_t blocks = (count + 255) / 256;
  return static_cast<unsigned>(blocks < 65536 ? (blocks == 0 ? 1 : blocks) : 65536);
}

template <template <typename> class Launch>
void dispatch(DType dtype, auto&&... args) {
  switch (dtype) {
    case DType::kBf16:
      Launch<__nv_bfloat16>{}(args...);
      break;
    case DType::kFp16:
      Launch<__half>{}(args...);
      break;
    case DType::kFp32:
      Launch<float>{}(args...);
      break;
    case DType::kInt32:
      Launch<int>{}(args...);
      break;
  }
}

template <typename T>
struct LaunchTestValues {
  void operator()(void* buffer, std::uint64_t count, std::uint64_t seed, int rank,
                  cudaStream_t stream) const {
    fill_test_values_kernel<T>
        <<<grid_for(count), 256, 0, stream>>>(static_cast<T*>(buffer), count, seed, rank);
    KILN_CUDA_CHECK_LAUNCH();
  }
};

template <typename T>
struct LaunchRandom {
  void operator()(void* buffer, std::uint64_t count, std::uint64_t seed, bool normal,
                  cudaStream_t stream) const {
    fill_random_kernel<T>
        <<<grid_for(count), 256, 0, stream>>>(static_cast<T*>(buffer), count, seed, normal);
    KILN_CUDA_CHECK_LAUNCH();
  }
};

}  // namespace

void fill_test_values(void* buffer, DType dtype, std::uint64_t count, std::uint64_t seed, int rank,
                      cudaStream_t stream) {
  if (count == 0) return;
  dispatch<LaunchTestValues>(dtype, buffer, count, seed, rank, stream);
}

void fill_uniform(void* buffer, DType dtype, std::uint64_t count, std::uint64_t seed,
                  cudaStream_t stream) {
  if (count == 0) return;
  dispatch<LaunchRandom>(dtype, buffer, count, seed, false, stream);
}

void fill_normal(void* buffer, DType dtype, std::uint64_t count, std::uint64_t seed,
                 cudaStream_t stream) {
  if (count == 0) return;
  if (dtype == DType::kInt32) throw UsageError("fill_normal: int32 has no normal values");
  dispatch<LaunchRandom>(dtype, buffer, count, seed, true, stream);
}

ValueDistribution parse_value_distribution(const std::string& text, const std::string& argument) {
  if (text == "uniform") return ValueDistribution::kUniform;
  if (text == "normal") return ValueDistribution::kNormal;
  throw UsageError(argument + ": '" + text + "'; accepted: uniform (in [-1, 1)), normal (N(0, 1))");
}

std::string value_distribution_name(ValueDistribution distribution) {
  return distribution == ValueDistribution::kNormal ? "normal" : "uniform";
}

void fill_random(void* buffer, DType dtype, std::uint64_t count, std::uint64_t seed,
                 ValueDistribution distribution, cudaStream_t stream) {
  if (distribution == ValueDistribution::kNormal) {
    fill_normal(buffer, dtype, count, seed, stream);
  } else {
    fill_uniform(buffer, dtype, count, seed, stream);
  }
}

void poison(void* buffer, std::uint64_t bytes, cudaStream_t stream) {
  if (bytes == 0) return;
  KILN_CUDA_CHECK(cudaMemsetAsync(buffer, 0x7F, bytes, stream));
}

}  // namespace kiln::core
