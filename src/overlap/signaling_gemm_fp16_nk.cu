// Signaling GEMM kernels: fp16, weights stored N×K (C = A·Bᵀ).
#include "overlap/signaling_gemm_impl.cuh"

namespace kiln::overlap::device {
std::unique_ptr<SignalingGemm> make_fp16_nk(TileShape tile) {
  if (tile == TileShape{128, 256})
    return std::make_unique<SignalingGemmImpl<cutlass::half_t, WeightLayout::kNK, 128, 256>>();
  return std::make_unique<SignalingGemmImpl<cutlass::half_t, WeightLayout::kNK, 128, 128>>();
}
}  // namespace kiln::overlap::device
