// Signaling GEMM kernels: bf16, weights stored N×K (C = A·Bᵀ).
#include "overlap/signaling_gemm_impl.cuh"

namespace kiln::overlap::device {
std::unique_ptr<SignalingGemm> make_bf16_nk(const GemmConfig& config) {
  return make_configured_gemm<cutlass::bfloat16_t, WeightLayout::kNK>(config);
}
}  // namespace kiln::overlap::device
