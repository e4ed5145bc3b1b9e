// Signaling GEMM kernels: bf16, weights stored K×N (C = A·B).
#include "overlap/signaling_gemm_impl.cuh"

namespace kiln::overlap::device {
std::unique_ptr<SignalingGemm> make_bf16_kn(TileShape tile) {
  if (tile == TileShape{128, 256})
    return std::make_unique<SignalingGemmImpl<cutlass::bfloat16_t, WeightLayout::kKN, 128, 256>>();
  return std::make_unique<SignalingGemmImpl<cutlass::bfloat16_t, WeightLayout::kKN, 128, 128>>();
}
}  // namespace kiln::overlap::device
