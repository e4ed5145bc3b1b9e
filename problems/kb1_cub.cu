// CUB library solutions of the kb1 scans and MSE (see kb1_cub.hpp).
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/permutation_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/iterator/transform_output_iterator.h>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>

#include <cuda/std/functional>

#include "core/cuda_check.hpp"
#include "problems/kb1_cub.hpp"

namespace kiln::problems::kb1 {
namespace {

using Index = std::int64_t;

// Row of linear position l, counted from the end when `reverse` (the reversed scan's keys).
struct RowOf {
  Index cols, count;
  bool reverse;
  __host__ __device__ Index operator()(Index l) const {
    return (reverse ? count - 1 - l : l) / cols;
  }
};
// x at linear position l, read from the end when `reverse`, masked for 93.
struct ValueAt {
  const float* x;
  const std::uint8_t* mask;
  Index count;
  bool reverse;
  __host__ __device__ float operator()(Index l) const {
    const Index i = reverse ? count - 1 - l : l;
    return mask != nullptr ? (mask[i] != 0 ? x[i] : 0.0f) : x[i];
  }
};
// Position l of the scan in memory: from the end for 91 (flip, scan, flip).
struct Flip {
  Index count;
  bool reverse;
  __host__ __device__ Index operator()(Index l) const { return reverse ? count - 1 - l : l; }
};
struct SquaredDifference {
  const float* p;
  const float* t;
  __host__ __device__ float operator()(Index l) const {
    const float d = p[l] - t[l];
    return d * d;
  }
};
struct DivideBy {
  double n;
  __host__ __device__ float operator()(float sum) const {
    return static_cast<float>(static_cast<double>(sum) / n);
  }
};

template <typename Run>
cudaError_t scan(ScanOp op, const float* x, const std::uint8_t* mask, float* y, Index rows,
                 Index cols, Run&& run) {
  const Index count = rows * cols;
  const bool reverse = op == ScanOp::kCumsumReverse;
  const auto keys = thrust::make_transform_iterator(thrust::counting_iterator<Index>(0),
                                                    RowOf{cols, count, reverse});
  const auto values = thrust::make_transform_iterator(
      thrust::counting_iterator<Index>(0),
      ValueAt{x, op == ScanOp::kMaskedCumsum ? mask : nullptr, count, reverse});
  const auto out = thrust::make_permutation_iterator(
      y,
      thrust::make_transform_iterator(thrust::counting_iterator<Index>(0), Flip{count, reverse}));
  return run(keys, values, out, count);
}

}  // namespace

template <typename Keys, typename Values, typename Out>
static cudaError_t dispatch_scan(ScanOp op, void* temp, std::size_t& bytes, Keys keys,
                                 Values values, Out out, Index count, cudaStream_t stream) {
  switch (op) {
    case ScanOp::kCumprod:
      return cub::DeviceScan::InclusiveScanByKey(temp, bytes, keys, values, out,
                                                 ::cuda::std::multiplies<>{}, count,
                                                 ::cuda::std::equal_to<>{}, stream);
    case ScanOp::kCumsumExclusive:
      return cub::DeviceScan::ExclusiveSumByKey(temp, bytes, keys, values, out, count,
                                                ::cuda::std::equal_to<>{}, stream);
    default:
      return cub::DeviceScan::InclusiveSumByKey(temp, bytes, keys, values, out, count,
                                                ::cuda::std::equal_to<>{}, stream);
  }
}

std::size_t cub_scan_temp_bytes(ScanOp op, std::int64_t rows, std::int64_t cols) {
  std::size_t bytes = 0;
  KILN_CUDA_CHECK(scan(op, nullptr, nullptr, nullptr, rows, cols,
                       [&](auto keys, auto values, auto out, Index count) {
                         return dispatch_scan(op, nullptr, bytes, keys, values, out, count,
                                              nullptr);
                       }));
  return bytes;
}

void launch_cub_scan(ScanOp op, const float* x, const std::uint8_t* mask, float* y,
                     std::int64_t rows, std::int64_t cols, void* temp, std::size_t temp_bytes,
                     cudaStream_t stream) {
  KILN_CUDA_CHECK(
      scan(op, x, mask, y, rows, cols, [&](auto keys, auto values, auto out, Index count) {
        return dispatch_scan(op, temp, temp_bytes, keys, values, out, count, stream);
      }));
}

std::size_t cub_mse_temp_bytes(std::int64_t count) {
  std::size_t bytes = 0;
  const auto squares = thrust::make_transform_iterator(thrust::counting_iterator<Index>(0),
                                                       SquaredDifference{nullptr, nullptr});
  const auto mean = thrust::make_transform_output_iterator(static_cast<float*>(nullptr),
                                                           DivideBy{static_cast<double>(count)});
  KILN_CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, bytes, squares, mean, count));
  return bytes;
}

void launch_cub_mse(const float* p, const float* t, float* out, std::int64_t count, void* temp,
                    std::size_t temp_bytes, cudaStream_t stream) {
  const auto squares =
      thrust::make_transform_iterator(thrust::counting_iterator<Index>(0), SquaredDifference{p, t});
  const auto mean =
      thrust::make_transform_output_iterator(out, DivideBy{static_cast<double>(count)});
  KILN_CUDA_CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, squares, mean, count, stream));
}

}  // namespace kiln::problems::kb1
