// Picks the compiled signaling GEMM for a dtype, weight layout and tile.
#include "overlap/signaling_gemm.hpp"

#include "core/error.hpp"

namespace kiln::overlap {
namespace device {
// Defined in signaling_gemm_<dtype>_<layout>.cu.
std::unique_ptr<SignalingGemm> make_bf16_nk(TileShape tile);
std::unique_ptr<SignalingGemm> make_bf16_kn(TileShape tile);
std::unique_ptr<SignalingGemm> make_fp16_nk(TileShape tile);
std::unique_ptr<SignalingGemm> make_fp16_kn(TileShape tile);
}  // namespace device

std::unique_ptr<SignalingGemm> make_signaling_gemm(core::DType dtype, WeightLayout layout,
                                                   TileShape tile) {
  if (!(tile == TileShape{128, 256}) && !(tile == TileShape{128, 128})) {
    throw UsageError("tile " + tile_name(tile) + " is not built; accepted: 128x256, 128x128");
  }
  const bool nk = layout == WeightLayout::kNK;
  switch (dtype) {
    case core::DType::kBf16:
      return nk ? device::make_bf16_nk(tile) : device::make_bf16_kn(tile);
    case core::DType::kFp16:
      return nk ? device::make_fp16_nk(tile) : device::make_fp16_kn(tile);
    default:
      throw UsageError("the signaling GEMM takes bf16 or fp16 inputs, not " +
                       core::dtype_name(dtype));
  }
}

}  // namespace kiln::overlap
