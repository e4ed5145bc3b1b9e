// Signaling GEMM kernels: fp16, weights stored K×N (C = A·B).
#include "overlap/signaling_gemm_impl.cuh"

namespace kiln::overlap::device {
std::unique_ptr<SignalingGemm> make_fp16_kn(TileShape tile) {
  if (tile == TileShape{128, 256})
    return std::make_unique<SignalingGemmImpl<cutlass::half_t, WeightLayout::kKN, 128, 256>>();
  return std::make_unique<SignalingGemmImpl<cutlass::half_t, WeightLayout::kKN, 128, 128>>();
}
}  // namespace kiln::overlap::device
