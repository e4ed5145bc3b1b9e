// Kernels of the element-wise kb1 problems (activations 19-32 and 88, matrix-scalar 5): y = f(x)
// element by element, fp32.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace kiln::problems::kb1 {

enum class UnaryOp {
  kScale314,  // 5: x * 3.14
  kRelu,
  kLeakyRelu,  // slope 0.01
  kSigmoid,
  kTanh,
  kSwish,
  kGelu,  // exact (erf)
  kSelu,
  kHardSigmoid,
  kSoftplus,  // beta 1, threshold 20
  kSoftsign,
  kElu,  // alpha 1
  kHardTanh,
  kNewGelu,  // minGPT's tanh approximation
};

// The reference: one element per thread, scalar loads.
void launch_unary_reference(UnaryOp op, const float* x, float* y, std::int64_t count,
                            cudaStream_t stream);
// kiln's solution: 16-byte loads and stores in a grid-stride loop sized to the SMs, scalar
// head and tail for any alignment.
void launch_unary_kiln(UnaryOp op, const float* x, float* y, std::int64_t count,
                       cudaStream_t stream);
// The same function on the host, in double (the reference's own check).
double unary_host(UnaryOp op, double x);

}  // namespace kiln::problems::kb1
