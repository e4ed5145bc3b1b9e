// Internal interface between the reduction's host dispatch (reduce.cu) and the kernels, which are
// instantiated once per input type in reduce_<dtype>.cu so that they compile in parallel.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/dtype.hpp"
#include "kernels/reduce_variant.hpp"

namespace kiln::kernels::detail {

// One pass over an input: the launch shape and where its results go.
struct PassArgs {
  ReduceLaunch launch;
  Workspace workspace = Workspace::kShared;
  Addressing addressing = Addressing::kSequential;
  WarpTail tail = WarpTail::kWarp;
  Completion completion = Completion::kMultiPass;
  void* scratch = nullptr;      // workspace=global: launch.blocks x block accumulator values
  void* partials = nullptr;     // multipass, lastblock: one value per block
  unsigned* counter = nullptr;  // lastblock
  void* out = nullptr;          // atomic, lastblock: the result
};

// The pass kernel of `variant` for `dtype` (input elements) and `op`.
void launch_pass(core::DType dtype, ReduceOp op, const ReduceVariant& variant, const void* in,
                 const PassArgs& args, cudaStream_t stream);
// Blocks of that kernel resident per SM.
int pass_blocks_per_sm(core::DType dtype, ReduceOp op, const ReduceVariant& variant);
// One block per row.
void launch_rows(core::DType dtype, ReduceOp op, const ReduceVariant& variant, const void* in,
                 std::int64_t rows, std::int64_t cols, void* out, cudaStream_t stream);

// Per input type (reduce_<dtype>.cu).
#define KILN_REDUCE_DECLARE(NAME)                                                    \
  void launch_pass_##NAME(ReduceOp op, const ReduceVariant& variant, const void* in, \
                          const PassArgs& args, cudaStream_t stream);                \
  int pass_blocks_per_sm_##NAME(ReduceOp op, const ReduceVariant& variant);          \
  void launch_rows_##NAME(ReduceOp op, const ReduceVariant& variant, const void* in, \
                          std::int64_t rows, std::int64_t cols, void* out, cudaStream_t stream);
KILN_REDUCE_DECLARE(int32)
KILN_REDUCE_DECLARE(fp32)
KILN_REDUCE_DECLARE(bf16)
KILN_REDUCE_DECLARE(fp16)
#undef KILN_REDUCE_DECLARE

}  // namespace kiln::kernels::detail
