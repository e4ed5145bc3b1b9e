// Kernels of the pooling kb1 problems (41-46): max and average pooling of an fp32 tensor of
// `planes` = batch * channels planes of 1, 2 or 3 spatial dimensions, with PyTorch's semantics
// (nn.MaxPool1d/2d/3d, nn.AvgPool1d/2d/3d; ceil_mode False, count_include_pad True).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace kiln::problems::kb1 {

enum class PoolOp { kMax, kAvg };

// One spatial axis. out = floor((in + 2 padding - dilation (kernel - 1) - 1) / stride) + 1 (0
// when the window does not fit); output o's window starts at input o * stride - padding and
// takes every dilation-th element.
struct PoolAxis {
  std::int64_t in = 1, out = 1;
  int kernel = 1, stride = 1, padding = 0, dilation = 1;
};

inline PoolAxis pool_axis(std::int64_t in, int kernel, int stride, int padding, int dilation) {
  const std::int64_t room =
      in + 2 * padding - static_cast<std::int64_t>(dilation) * (kernel - 1) - 1;
  return {in, room < 0 ? 0 : room / stride + 1, kernel, stride, padding, dilation};
}

// A pooling of a (planes, D, H, W) tensor into (planes, D', H', W'), both contiguous. 1-d and 2-d
// pooling leave the leading axes at their default (size 1, window 1).
struct PoolShape {
  PoolOp op = PoolOp::kMax;
  std::int64_t planes = 0;
  PoolAxis axis[3];  // depth, height, width (the length of 1-d pooling is the width)
  std::int64_t in_plane() const { return axis[0].in * axis[1].in * axis[2].in; }
  std::int64_t out_plane() const { return axis[0].out * axis[1].out * axis[2].out; }
  std::int64_t inputs() const { return planes * in_plane(); }
  std::int64_t outputs() const { return planes * out_plane(); }
};

// Reference: one thread per output, the window in order (depth, height, width) skipping padded
// positions; max keeps the first strict maximum, average sums in double and divides by
// PyTorch's count_include_pad divisor.
void launch_pool_reference(const PoolShape& shape, const float* x, float* y, cudaStream_t stream);
// kiln: by shape (see kb1_pooling_kernels.cu) - 1-d stride 1: shared-memory tiles of 2048
// outputs per row; 2-d max stride 1: a warp sweeps 32 columns down the rows with shuffles for
// the row window and registers for the column window; 2-d average: column sums of each window
// row band with 16-byte loads, then the row windows from shared memory; otherwise (3-d): a
// block per output depth and band of output rows combines the depth window while loading rows
// into shared memory, then pools along the width and the height there. fp32 accumulation.
void launch_pool_kiln(const PoolShape& shape, const float* x, float* y, cudaStream_t stream);

}  // namespace kiln::problems::kb1
