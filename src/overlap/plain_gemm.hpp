// The signaling GEMM's twin with CUTLASS's own epilogue (its sm90 TMA warp-specialized epilogue
// from the epilogue CollectiveBuilder, storing row-major C): the same main loop, tile, cluster,
// schedule and scheduler, without kiln's slot-ordered stores and signals. `kiln overlap gemm`
// times it beside the signaling GEMM and cuBLAS, so that a gap to cuBLAS splits into what CUTLASS's
// kernel costs and what kiln's epilogue adds (issue 17). Built for bf16 with B stored N×K only:
// a measuring instrument, not a product.
#pragma once

#include <cuda_runtime.h>

#include <memory>

#include "core/dtype.hpp"
#include "overlap/gemm_shape.hpp"

namespace kiln::overlap {

class PlainCutlassGemm {
 public:
  virtual ~PlainCutlassGemm() = default;
  virtual GemmConfig config() const = 0;
  // c (row-major M×N) = a·op(b). Throws kiln::UsageError when CUTLASS cannot run the shape.
  virtual void run(const GemmShape& shape, const void* a, const void* b, void* c,
                   const ScheduleOptions& schedule, int device_sms, cudaStream_t stream) = 0;
};

// Whether make_plain_cutlass_gemm builds a twin for these: bf16, layout nk, and `config` one of
// built_gemm_configs() other than kernel=coop-n and kernel=pingpong-swap (see
// plain_gemm_bf16_nk.cu).
bool has_plain_cutlass_twin(core::DType dtype, WeightLayout layout, const GemmConfig& config);
// Throws kiln::UsageError unless has_plain_cutlass_twin.
std::unique_ptr<PlainCutlassGemm> make_plain_cutlass_gemm(core::DType dtype, WeightLayout layout,
                                                          const GemmConfig& config);

}  // namespace kiln::overlap
