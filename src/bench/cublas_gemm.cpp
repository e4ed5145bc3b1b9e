// cuBLAS GEMM baseline (see cublas_gemm.hpp). Row-major C = A·op(B) is computed as the
// column-major Cᵀ = op(B)ᵀ·Aᵀ, which cuBLAS takes without copies.
#include "bench/cublas_gemm.hpp"

#include "core/cublas_check.hpp"
#include "core/error.hpp"

namespace kiln::bench {

CublasGemm::CublasGemm() {
  KILN_CUBLAS_CHECK(cublasCreate(&handle_));
}

CublasGemm::~CublasGemm() {
  if (handle_ != nullptr) cublasDestroy(handle_);
}

void CublasGemm::run(int m, int n, int k, core::DType dtype, overlap::WeightLayout layout,
                     const void* a, const void* b, void* c, cudaStream_t stream) {
  if (dtype != core::DType::kBf16 && dtype != core::DType::kFp16) {
    throw UsageError("cuBLAS baseline: dtype " + core::dtype_name(dtype) + "; accepted bf16, fp16");
  }
  const cudaDataType_t type = dtype == core::DType::kBf16 ? CUDA_R_16BF : CUDA_R_16F;
  const float alpha = 1.0f, beta = 0.0f;
  KILN_CUBLAS_CHECK(cublasSetStream(handle_, stream));
  // B stored N×K row-major is K×N column-major (ld K): transpose it. K×N row-major is N×K
  // column-major (ld N): use as is.
  const bool nk = layout == overlap::WeightLayout::kNK;
  KILN_CUBLAS_CHECK(cublasGemmEx(handle_, nk ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, n, m, k,
                                 &alpha, b, type, nk ? k : n, a, type, k, &beta, c, type, n,
                                 CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

}  // namespace kiln::bench
