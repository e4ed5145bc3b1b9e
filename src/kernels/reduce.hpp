// kiln::kernels::reduce: sum, min or max of a 1-D array, or of every row of a 2-D row-major
// tensor, by any valid ReduceVariant (reduce_variant.hpp). int32 accumulates in int32 with
// two's-complement wrap-around (exact, as CUB's int32 sum); fp32, bf16 and fp16 accumulate in
// fp32. Results are of the accumulator type: int32 for int32 input, fp32 otherwise. 64-bit
// indexing: any count, any element-aligned start.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "core/device_buffer.hpp"
#include "core/dtype.hpp"
#include "kernels/reduce_variant.hpp"

namespace kiln::kernels {

// The accumulator (and result) type of reducing `dtype`: kInt32 or kFp32.
core::DType reduce_result_dtype(core::DType dtype);

// Blocks of the variant's pass kernel resident on the current device at once (persistent grid).
std::int64_t reduce_resident_blocks(const ReduceVariant& variant, core::DType dtype, ReduceOp op);

// A workspace for reduce(): sized for up to `count` elements, zeroed once on allocation (the
// completion counter must start at zero; every call leaves it so).
class ReduceWorkspace {
 public:
  // `op`: the operation it will serve (the kernel's occupancy sizes a persistent grid).
  ReduceWorkspace(const ReduceVariant& variant, core::DType dtype, std::int64_t count,
                  ReduceOp op = ReduceOp::kSum);
  void* data() const { return buffer_.data(); }
  std::size_t bytes() const { return buffer_.bytes(); }
  std::int64_t count() const { return count_; }

 private:
  core::DeviceBuffer buffer_;
  std::int64_t count_ = 0;
};

// out (device, one value of the result type) = op over in[0 .. count). count >= 1. Enqueued on
// `stream`; no synchronisation. Throws kiln::UsageError for an invalid variant (with the reason),
// count < 1, a misaligned pointer or a workspace made for fewer elements or another variant.
void reduce(const ReduceVariant& variant, ReduceOp op, core::DType dtype, const void* in,
            std::int64_t count, void* out, const ReduceWorkspace& workspace, cudaStream_t stream);

// out[r] = op over in[r*cols .. (r+1)*cols), r < rows, one block per row. Uses the variant's
// block, tail, unroll, items and vector knobs (the grid is one block per row; workspace must be
// shared).
void reduce_rows(const ReduceVariant& variant, ReduceOp op, core::DType dtype, const void* in,
                 std::int64_t rows, std::int64_t cols, void* out, cudaStream_t stream);

}  // namespace kiln::kernels
