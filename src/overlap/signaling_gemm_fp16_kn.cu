// Signaling GEMM kernels: fp16, weights stored K×N (C = A·B).
#include "overlap/signaling_gemm_impl.cuh"

namespace kiln::overlap::device {
std::unique_ptr<SignalingGemm> make_fp16_kn(const GemmConfig& config) {
  return make_configured_gemm<cutlass::half_t, WeightLayout::kKN>(config);
}
}  // namespace kiln::overlap::device
