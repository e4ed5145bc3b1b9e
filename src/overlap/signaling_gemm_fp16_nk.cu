// Signaling GEMM kernels: fp16, weights stored N×K (C = A·Bᵀ).
#include "overlap/signaling_gemm_impl.cuh"

namespace kiln::overlap::device {
std::unique_ptr<SignalingGemm> make_fp16_nk(const GemmConfig& config) {
  return make_configured_gemm<cutlass::half_t, WeightLayout::kNK>(config);
}
}  // namespace kiln::overlap::device
