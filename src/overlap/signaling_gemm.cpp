// Picks the compiled signaling GEMM for a dtype, weight layout and configuration.
#include "overlap/signaling_gemm.hpp"

#include "core/error.hpp"

namespace kiln::overlap {
namespace device {
// Defined in signaling_gemm_<dtype>_<layout>.cu.
std::unique_ptr<SignalingGemm> make_bf16_nk(const GemmConfig& config);
std::unique_ptr<SignalingGemm> make_bf16_kn(const GemmConfig& config);
std::unique_ptr<SignalingGemm> make_fp16_nk(const GemmConfig& config);
std::unique_ptr<SignalingGemm> make_fp16_kn(const GemmConfig& config);
}  // namespace device

std::unique_ptr<SignalingGemm> make_signaling_gemm(core::DType dtype, WeightLayout layout,
                                                   const GemmConfig& config) {
  check_gemm_config_built(config, "signaling GEMM");
  const bool nk = layout == WeightLayout::kNK;
  switch (dtype) {
    case core::DType::kBf16:
      return nk ? device::make_bf16_nk(config) : device::make_bf16_kn(config);
    case core::DType::kFp16:
      return nk ? device::make_fp16_nk(config) : device::make_fp16_kn(config);
    default:
      throw UsageError("the signaling GEMM takes bf16 or fp16 inputs, not " +
                       core::dtype_name(dtype));
  }
}

}  // namespace kiln::overlap
