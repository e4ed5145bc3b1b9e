// CUTLASS's sm90 GEMMs with CUTLASS's own TMA epilogue, bf16, B stored N×K (see plain_gemm.hpp).
// The main loop is the signaling GEMM's (sm90_gemm_parts.cuh); only the epilogue differs.
#include <cutlass/cutlass.h>
#include <cutlass/gemm/device/gemm_universal_adapter.h>
#include <cute/tensor.hpp>
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/gemm/kernel/gemm_universal.hpp>

#include <algorithm>
#include <string>

#include "core/cuda_check.hpp"
#include "core/device_buffer.hpp"
#include "core/error.hpp"
#include "overlap/plain_gemm.hpp"
#include "overlap/sm90_gemm_parts.cuh"
#include "overlap/wide_swizzle.hpp"

namespace kiln::overlap {
namespace {

using device::dispatch_built_config;
using device::Sm90Mainloop;

template <int kTileM, int kTileN, int kClusterM, int kClusterN, KernelSchedule kKernel>
class PlainImpl final : public PlainCutlassGemm {
  using Element = cutlass::bfloat16_t;
  using LayoutA = cutlass::layout::RowMajor;
  using LayoutB = cutlass::layout::ColumnMajor;  // N×K row-major storage
  using LayoutC = cutlass::layout::RowMajor;
  using CtaTile = cute::Shape<cute::Int<kTileM>, cute::Int<kTileN>, cute::Int<64>>;
  using Cluster = cute::Shape<cute::Int<kClusterM>, cute::Int<kClusterN>, cute::_1>;
  static constexpr bool kPingpong = kKernel == KernelSchedule::kPingpong;
  using EpilogueSchedule = std::conditional_t<kPingpong, cutlass::epilogue::TmaWarpSpecialized,
                                              cutlass::epilogue::TmaWarpSpecializedCooperative>;
  using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, CtaTile, Cluster,
      cutlass::epilogue::collective::EpilogueTileAuto, float, float, void, LayoutC, 8, Element,
      LayoutC, 8, EpilogueSchedule>::CollectiveOp;
  using Mainloop =
      Sm90Mainloop<Element, LayoutA, LayoutB, kTileM, kTileN, kClusterM, kClusterN, kKernel,
                   static_cast<int>(sizeof(typename Epilogue::SharedStorage))>;
  using Kernel = cutlass::gemm::kernel::GemmUniversal<cute::Shape<int, int, int, int>, Mainloop,
                                                      Epilogue, cutlass::gemm::PersistentScheduler>;
  using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;
  using RasterOptions = typename Kernel::TileScheduler::RasterOrderOptions;

 public:
  GemmConfig config() const override { return {{kTileM, kTileN}, {kClusterM, kClusterN}, kKernel}; }

  void run(const GemmShape& shape, const void* a, const void* b, void* c,
           const ScheduleOptions& schedule, int device_sms, cudaStream_t stream) override {
    if (schedule.claimed_tiles) {
      throw UsageError(
          "plain CUTLASS GEMM: scheduler=claimed is not built (CUTLASS's static "
          "scheduler only)");
    }
    using StrideA = typename Kernel::StrideA;
    using StrideB = typename Kernel::StrideB;
    using StrideD = typename Kernel::StrideD;
    StrideA stride_a{};
    cute::get<0>(stride_a) = shape.k;
    cute::get<2>(stride_a) = static_cast<int64_t>(shape.m) * shape.k;
    StrideB stride_b{};
    cute::get<0>(stride_b) = shape.k;
    cute::get<2>(stride_b) = static_cast<int64_t>(shape.n) * shape.k;
    StrideD stride_d{};
    cute::get<0>(stride_d) = shape.n;
    cute::get<2>(stride_d) = static_cast<int64_t>(shape.m) * shape.n;
    cutlass::KernelHardwareInfo hw;
    KILN_CUDA_CHECK(cudaGetDevice(&hw.device_id));
    hw.sm_count =
        schedule.cta_cap > 0 && schedule.cta_cap < device_sms ? schedule.cta_cap : device_sms;
    typename Kernel::TileSchedulerArguments scheduler;
    scheduler.max_swizzle_size = schedule.swizzle;
    scheduler.raster_order =
        schedule.raster_along_n ? RasterOptions::AlongN : RasterOptions::AlongM;
    typename Gemm::Arguments args{
        cutlass::gemm::GemmUniversalMode::kGemm,
        {shape.m, shape.n, shape.k, 1},
        {static_cast<const Element*>(a), stride_a, static_cast<const Element*>(b), stride_b},
        {{1.0f, 0.0f}, nullptr, stride_d, static_cast<Element*>(c), stride_d},
        hw,
        scheduler};
    const cutlass::Status can = gemm_.can_implement(args);
    if (can != cutlass::Status::kSuccess) {
      throw UsageError("plain CUTLASS GEMM: cannot run " + shape_name(shape) + ": " +
                       cutlassGetStatusString(can));
    }
    const std::size_t workspace_bytes = Gemm::get_workspace_size(args);
    if (workspace_bytes > workspace_.bytes()) workspace_ = core::DeviceBuffer(workspace_bytes);
    cutlass::Status status = gemm_.initialize(args, workspace_.data(), stream);
    if (status == cutlass::Status::kSuccess) {
      // The same tile order as kiln's kernel for swizzles past 8 (overlap/wide_swizzle.hpp): the
      // adapter launches its own parameters, widened in place (it owns them; params() is const
      // only to callers that should not).
      auto& params = const_cast<typename Kernel::Params&>(gemm_.params());
      widen_scheduler_swizzle(params.scheduler, shape, {kTileM, kTileN}, {kClusterM, kClusterN},
                              schedule, hw.sm_count);
      status = gemm_.run(stream);
    }
    if (status != cutlass::Status::kSuccess) {
      throw Error(std::string("plain CUTLASS GEMM: ") + cutlassGetStatusString(status) + " (" +
                  cudaGetErrorString(cudaGetLastError()) + ")");
    }
  }

 private:
  Gemm gemm_;
  core::DeviceBuffer workspace_;
};

}  // namespace

bool has_plain_cutlass_twin(core::DType dtype, WeightLayout layout, const GemmConfig& config) {
  const auto& built = built_gemm_configs();
  return dtype == core::DType::kBf16 && layout == WeightLayout::kNK &&
         std::find(built.begin(), built.end(), config) != built.end() &&
         config.kernel != KernelSchedule::kCooperativeSplitN &&
         config.kernel != KernelSchedule::kPingpongSwapAB;
}

std::unique_ptr<PlainCutlassGemm> make_plain_cutlass_gemm(core::DType dtype, WeightLayout layout,
                                                          const GemmConfig& c) {
  if (dtype != core::DType::kBf16 || layout != WeightLayout::kNK) {
    throw UsageError("the plain CUTLASS GEMM is built for bf16 with B stored NxK only");
  }
  check_gemm_config_built(c, "plain CUTLASS GEMM");
  return dispatch_built_config(
      c, "plain CUTLASS GEMM", [](auto tag) -> std::unique_ptr<PlainCutlassGemm> {
        using T = decltype(tag);
        if constexpr (T::kKernel == KernelSchedule::kCooperativeSplitN) {
          throw UsageError(
              "the plain CUTLASS GEMM has no kernel=coop-n twin (CUTLASS's epilogue "
              "builder assumes warp groups stacked along M)");
        } else if constexpr (T::kKernel == KernelSchedule::kPingpongSwapAB) {
          throw UsageError(
              "the plain CUTLASS GEMM has no kernel=pingpong-swap twin (it would need a "
              "column-major D)");
        } else {
          return std::make_unique<
              PlainImpl<T::kTileM, T::kTileN, T::kClusterM, T::kClusterN, T::kKernel>>();
        }
      });
}

}  // namespace kiln::overlap
