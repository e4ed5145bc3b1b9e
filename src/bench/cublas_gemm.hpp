// cuBLAS GEMM in kiln's convention (row-major A M×K, B stored N×K or K×N, row-major C M×N,
// fp32 accumulation): the baseline the signaling GEMM is held to.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "core/dtype.hpp"
#include "overlap/gemm_shape.hpp"

namespace kiln::bench {

class CublasGemm {
 public:
  CublasGemm();
  ~CublasGemm();
  CublasGemm(const CublasGemm&) = delete;
  CublasGemm& operator=(const CublasGemm&) = delete;

  // c (ldc = n) = a · op(b) for the rows [0, m) of a and c; `m` may be a chunk of the full shape.
  void run(int m, int n, int k, core::DType dtype, overlap::WeightLayout layout, const void* a,
           const void* b, void* c, cudaStream_t stream);

 private:
  cublasHandle_t handle_ = nullptr;
};

}  // namespace kiln::bench
