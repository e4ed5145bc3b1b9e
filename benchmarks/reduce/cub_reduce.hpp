// The CUB baseline of `kiln reduce bench`: cub::DeviceReduce from the toolkit's CCCL, with its
// temporary storage allocated once, outside any timed region.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/device_buffer.hpp"
#include "core/dtype.hpp"
#include "kernels/reduce_variant.hpp"

namespace kiln::benchmarks {

class CubReduce {
 public:
  // Ready for inputs of any count in 1 .. `max_count`, on either side of 2^31.
  CubReduce(kernels::ReduceOp op, core::DType dtype, std::int64_t max_count);
  // out = op over in[0 .. count) in the result type of kernels::reduce (int32 or fp32).
  void run(const void* in, std::int64_t count, void* out, cudaStream_t stream) const;

 private:
  kernels::ReduceOp op_;
  core::DType dtype_;
  std::int64_t max_count_;
  core::DeviceBuffer storage_;
};

}  // namespace kiln::benchmarks
