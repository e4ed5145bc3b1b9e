// Signaling GEMM kernels: bf16, weights stored K×N (C = A·B).
#include "overlap/signaling_gemm_impl.cuh"

namespace kiln::overlap::device {
std::unique_ptr<SignalingGemm> make_bf16_kn(const GemmConfig& config) {
  return make_configured_gemm<cutlass::bfloat16_t, WeightLayout::kKN>(config);
}
}  // namespace kiln::overlap::device
