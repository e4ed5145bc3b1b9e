// One signaling GEMM kernel: CUTLASS's sm90 TMA warp-specialized cooperative persistent GEMM
// (CollectiveBuilder main loop, PersistentScheduler, GemmUniversal kernel, all untouched) with
// kiln's SignalingEpilogue plugged in through CUTLASS's operator-epilogue adapter. Included by
// one .cu file per dtype and weight layout (signaling_gemm_<dtype>_<layout>.cu).
#pragma once

#include <cute/tensor.hpp>
#include <cutlass/cutlass.h>
#include <cutlass/epilogue/collective/detail.hpp>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/gemm/device/gemm_universal_adapter.h>
#include <cutlass/gemm/kernel/gemm_universal.hpp>

#include <string>

#include "core/cuda_check.hpp"
#include "core/error.hpp"
#include "overlap/signaling_epilogue.cuh"
#include "overlap/signaling_gemm.hpp"

namespace kiln::overlap::device {

template <class Element>
constexpr core::DType kDTypeOf = core::DType::kBf16;
template <>
inline constexpr core::DType kDTypeOf<cutlass::half_t> = core::DType::kFp16;

// A packed (mode0 x mode1 x 1) stride of CUTLASS's kind: the static-1 mode is the contiguous one.
template <class Stride>
Stride packed_stride(int mode0, int mode1) {
  Stride stride{};
  if constexpr (cute::is_static<std::remove_cvref_t<decltype(cute::get<1>(stride))>>::value) {
    cute::get<0>(stride) = mode1;
  } else {
    cute::get<1>(stride) = mode0;
  }
  cute::get<2>(stride) = static_cast<int64_t>(mode0) * mode1;
  return stride;
}

template <class Element, WeightLayout kLayout, int kTileM, int kTileN>
class SignalingGemmImpl final : public SignalingGemm {
  using LayoutA = cutlass::layout::RowMajor;
  // CUTLASS names B's layout as a K×N matrix: N×K row-major storage is column-major K×N.
  using LayoutB = std::conditional_t<kLayout == WeightLayout::kNK, cutlass::layout::ColumnMajor,
                                     cutlass::layout::RowMajor>;
  using CtaTile = cute::Shape<cute::Int<kTileM>, cute::Int<kTileN>, cute::Int<64>>;
  using Cluster = cute::Shape<cute::_2, cute::_1, cute::_1>;
  using Epilogue = cutlass::epilogue::collective::detail::Sm90TmaWarpSpecializedAdapter<
      SignalingEpilogue<Element, CtaTile>>;
  using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Element, LayoutA, 8, Element, LayoutB, 8,
      float, CtaTile, Cluster,
      cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(
          sizeof(typename Epilogue::SharedStorage))>,
      cutlass::gemm::KernelTmaWarpSpecializedCooperative>::CollectiveOp;
  using Kernel = cutlass::gemm::kernel::GemmUniversal<cute::Shape<int, int, int, int>, Mainloop,
                                                      Epilogue, cutlass::gemm::PersistentScheduler>;
  using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;
  using RasterOptions = typename Kernel::TileScheduler::RasterOrderOptions;

 public:
  core::DType dtype() const override { return kDTypeOf<Element>; }
  WeightLayout weight_layout() const override { return kLayout; }
  TileShape tile() const override { return {kTileM, kTileN}; }

  LaunchGeometry geometry(const GemmShape& shape, const ScheduleOptions& schedule,
                          int device_sms) const override {
    typename Gemm::Arguments args = arguments(shape, nullptr, nullptr, {}, schedule, device_sms);
    const typename Kernel::Params params = Kernel::to_underlying_arguments(args, nullptr);
    const dim3 grid = Kernel::get_grid_shape(params);
    LaunchGeometry g;
    g.grid_ctas = static_cast<int>(grid.x * grid.y * grid.z);
    g.slots = static_cast<int>(params.scheduler.blocks_per_problem_);
    g.tiles_m = (shape.m + kTileM - 1) / kTileM;
    g.tiles_n = (shape.n + kTileN - 1) / kTileN;
    return g;
  }

  void run(const GemmShape& shape, const void* a, const void* b, const EpilogueTargets& targets,
           const ScheduleOptions& schedule, int device_sms, cudaStream_t stream) override {
    typename Gemm::Arguments args = arguments(shape, a, b, targets, schedule, device_sms);
    const cutlass::Status can = gemm_.can_implement(args);
    if (can != cutlass::Status::kSuccess) {
      throw UsageError("signaling GEMM: CUTLASS cannot run " + std::to_string(shape.m) + "x" +
                       std::to_string(shape.n) + "x" + std::to_string(shape.k) + ": " +
                       cutlassGetStatusString(can));
    }
    // GemmUniversalAdapter::run reads cudaGetLastError() after its launch and reports anything
    // left there as its own failure; NCCL's initialisation leaves cudaErrorInvalidDeviceFunction
    // from probing kernels absent for this arch. Clear it so only this launch is judged.
    (void)cudaGetLastError();
    // This kernel needs no workspace (static persistent scheduler, no-smem epilogue).
    const cutlass::Status status = gemm_.run(args, nullptr, stream);
    if (status != cutlass::Status::kSuccess) {
      throw Error(std::string("signaling GEMM launch failed: ") + cutlassGetStatusString(status));
    }
    KILN_CUDA_CHECK_LAUNCH();
  }

 private:
  typename Gemm::Arguments arguments(const GemmShape& shape, const void* a, const void* b,
                                     const EpilogueTargets& targets,
                                     const ScheduleOptions& schedule, int device_sms) const {
    using StrideA = typename Kernel::StrideA;
    using StrideB = typename Kernel::StrideB;
    const StrideA stride_a = packed_stride<StrideA>(shape.m, shape.k);  // A indexed (M, K)
    const StrideB stride_b = packed_stride<StrideB>(shape.n, shape.k);  // B indexed (N, K)
    typename Epilogue::Arguments epilogue;
    epilogue.slots = static_cast<Element*>(targets.slots);
    epilogue.slot_of_tile = targets.slot_of_tile;
    epilogue.group_counters = targets.group_counters;
    epilogue.wave_group = targets.wave_group;
    epilogue.group_first_slot = targets.group_first_slot;
    epilogue.group_slot_count = targets.group_slot_count;
    epilogue.slot_done_ns = targets.slot_done_ns;
    epilogue.geometry = targets.geometry;
    epilogue.raster_along_n = schedule.raster_along_n ? 1 : 0;

    cutlass::KernelHardwareInfo hw;
    KILN_CUDA_CHECK(cudaGetDevice(&hw.device_id));
    hw.sm_count = schedule.cta_cap > 0 && schedule.cta_cap < device_sms ? schedule.cta_cap
                                                                        : device_sms;
    typename Kernel::TileSchedulerArguments scheduler;
    scheduler.max_swizzle_size = schedule.swizzle;
    scheduler.raster_order =
        schedule.raster_along_n ? RasterOptions::AlongN : RasterOptions::AlongM;

    typename Gemm::Arguments args{cutlass::gemm::GemmUniversalMode::kGemm,
                                  {shape.m, shape.n, shape.k, 1},
                                  {static_cast<const Element*>(a), stride_a,
                                   static_cast<const Element*>(b), stride_b},
                                  epilogue,
                                  hw,
                                  scheduler};
    // The epilogue's slot is the scheduler's linear index; it needs the grid size the kernel
    // will launch with, which CUTLASS derives from these same arguments.
    const typename Kernel::Params params = Kernel::to_underlying_arguments(args, nullptr);
    const dim3 grid = Kernel::get_grid_shape(params);
    args.epilogue.grid_ctas = static_cast<int>(grid.x * grid.y * grid.z);
    return args;
  }

  Gemm gemm_;
};

}  // namespace kiln::overlap::device
