// One signaling GEMM kernel: CUTLASS's sm90 TMA warp-specialized persistent GEMM, cooperative or
// ping-pong (CollectiveBuilder main loop, PersistentScheduler, GemmUniversal kernel, all
// untouched) with kiln's SignalingEpilogue plugged in through CUTLASS's operator-epilogue adapter.
// Included by one .cu file per dtype and weight layout (signaling_gemm_<dtype>_<layout>.cu), which
// instantiates make_configured_gemm: every configuration of built_gemm_configs().
#pragma once

#include <cutlass/cutlass.h>
#include <cutlass/gemm/device/gemm_universal_adapter.h>
#include <cute/tensor.hpp>
#include <cutlass/epilogue/collective/detail.hpp>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/gemm/kernel/gemm_universal.hpp>

#include <string>

#include "core/cuda_check.hpp"
#include "core/error.hpp"
#include "overlap/signaling_epilogue.cuh"
#include "overlap/signaling_gemm.hpp"
#include "overlap/sm90_claimed_tile_scheduler.cuh"
#include "overlap/sm90_gemm_parts.cuh"
#include "overlap/wide_swizzle.hpp"

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

template <class Element, WeightLayout kLayout, int kTileM, int kTileN, int kClusterM, int kClusterN,
          KernelSchedule kKernel>
class SignalingGemmImpl final : public SignalingGemm {
  // Ping-pong-swap: CUTLASS's ping-pong kernel on Cᵀ = B·Aᵀ (scheduler_frame in gemm_shape.hpp):
  // its A operand is kiln's B, its B operand kiln's A, and its tile and cluster are kiln's
  // transposed. kTileM x kTileN and the cluster are C's, as in the configuration's name.
  static constexpr bool kSwap = kKernel == KernelSchedule::kPingpongSwapAB;
  static constexpr bool kPingpong = is_pingpong(kKernel);
  static constexpr bool kSplitN = kKernel == KernelSchedule::kCooperativeSplitN;
  // CUTLASS names B's layout as a K×N matrix: N×K row-major storage is column-major K×N.
  using LayoutWeightKN =
      std::conditional_t<kLayout == WeightLayout::kNK, cutlass::layout::ColumnMajor,
                         cutlass::layout::RowMajor>;
  // Swapped: kiln's B as an (N×K) A operand is row-major when stored N×K, column-major when
  // stored K×N; kiln's A (M×K row-major) as a K×M B operand is column-major.
  using LayoutA =
      std::conditional_t<kSwap,
                         std::conditional_t<kLayout == WeightLayout::kNK, cutlass::layout::RowMajor,
                                            cutlass::layout::ColumnMajor>,
                         cutlass::layout::RowMajor>;
  using LayoutB = std::conditional_t<kSwap, cutlass::layout::ColumnMajor, LayoutWeightKN>;
  static constexpr int kKernelTileM = kSwap ? kTileN : kTileM;
  static constexpr int kKernelTileN = kSwap ? kTileM : kTileN;
  static constexpr int kKernelClusterM = kSwap ? kClusterN : kClusterM;
  static constexpr int kKernelClusterN = kSwap ? kClusterM : kClusterN;
  using CtaTile = cute::Shape<cute::Int<kTileM>, cute::Int<kTileN>, cute::Int<64>>;  // C's
  static constexpr GemmConfig kConfig{{kTileM, kTileN}, {kClusterM, kClusterN}, kKernel};
  // One CUTLASS kernel of this configuration: with CUTLASS's static persistent scheduler, or, for
  // ping-pong, with tiles claimed from a global counter at run time (sm90_claimed_tile_scheduler.
  // cuh; the plan's scheduler=claimed). Both have the same grid, tile numbering and slots.
  template <bool kClaimed>
  struct Variant {
    using Epilogue = SignalingAdapter<
        SignalingEpilogue<Element, CtaTile, kPingpong, kSplitN ? 2 : 1, kSwap, kClaimed>>;
    using Mainloop =
        Sm90Mainloop<Element, LayoutA, LayoutB, kKernelTileM, kKernelTileN, kKernelClusterM,
                     kKernelClusterN, kSwap ? KernelSchedule::kPingpong : kKernel,
                     static_cast<int>(sizeof(typename Epilogue::SharedStorage))>;
    using SchedulerTag =
        std::conditional_t<kClaimed, ClaimedTileSchedulerTag, cutlass::gemm::PersistentScheduler>;
    using Kernel = cutlass::gemm::kernel::GemmUniversal<cute::Shape<int, int, int, int>, Mainloop,
                                                        Epilogue, SchedulerTag>;
    using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;
    // The claimed scheduler's few hundred bytes of barriers and answers are not in the main
    // loop's carve-out (its stage count stays the static kernel's): they must fit in what is left.
    static_assert(Kernel::SharedStorageSize <= 232448, "over the 227 KiB of shared memory per CTA");
  };
  using Static = Variant<false>;
  // Cooperative configurations have no claimed kernel (the same type; run() refuses the option).
  using Claimed = Variant<kPingpong>;

 public:
  SignalingGemmImpl() = default;
  SignalingGemmImpl(const SignalingGemmImpl&) = delete;
  SignalingGemmImpl& operator=(const SignalingGemmImpl&) = delete;
  ~SignalingGemmImpl() override {
    if (claim_counter_ != nullptr) cudaFree(claim_counter_);  // no throw from a destructor
  }

  core::DType dtype() const override { return kDTypeOf<Element>; }
  WeightLayout weight_layout() const override { return kLayout; }
  GemmConfig config() const override { return kConfig; }

  LaunchGeometry geometry(const GemmShape& shape, const ScheduleOptions& schedule,
                          int device_sms) const override {
    // CUTLASS encodes the main loop's TMA descriptors here too (on null pointers, which the driver
    // accepts); without a current context the driver refuses them and CUTLASS prints a descriptor
    // dump per call (seen in a test's child process): make sure the primary context exists.
    KILN_CUDA_CHECK(cudaFree(nullptr));
    // Claimed tiles: the same grid as the static kernel's, and its slot count at swizzle 1 (the
    // band order has no padding; arguments() asks for that), so the static kernel answers for both.
    using Kernel = typename Static::Kernel;
    typename Static::Gemm::Arguments args =
        arguments<Static>(shape, nullptr, nullptr, {}, schedule, device_sms);
    const typename Kernel::Params params = widened<Static>(
        Kernel::to_underlying_arguments(args, nullptr), shape, schedule, args.hw_info.sm_count);
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
    if (!schedule.claimed_tiles) {
      launch<Static>(gemm_static_, shape, a, b, targets, schedule, device_sms, stream);
    } else if constexpr (kPingpong) {
      launch<Claimed>(gemm_claimed_, shape, a, b, targets, schedule, device_sms, stream);
    } else {
      throw UsageError(
          "signaling GEMM: scheduler=claimed is built for the ping-pong kernels only, "
          "not " +
          gemm_config_name(kConfig));
    }
  }

 private:
  template <class V>
  void launch(typename V::Gemm& gemm, const GemmShape& shape, const void* a, const void* b,
              const EpilogueTargets& targets, const ScheduleOptions& schedule, int device_sms,
              cudaStream_t stream) {
    using Kernel = typename V::Kernel;
    typename V::Gemm::Arguments args = arguments<V>(shape, a, b, targets, schedule, device_sms);
    // The claimed scheduler's counter first: its can_implement refuses a launch without one.
    if constexpr (!std::is_same_v<V, Static>) {
      ensure_claim_counter(stream);
      args.scheduler.claim_counter = claim_counter_;
    }
    const cutlass::Status can = gemm.can_implement(args);
    if (can != cutlass::Status::kSuccess) {
      throw UsageError("signaling GEMM: CUTLASS cannot run " + std::to_string(shape.m) + "x" +
                       std::to_string(shape.n) + "x" + std::to_string(shape.k) + ": " +
                       cutlassGetStatusString(can));
    }
    // CUTLASS prepares the parameters (TMA descriptors, scheduler) and the shared-memory
    // attribute; the launch is kiln's own so that a failure names CUDA's reason and the grid
    // (GemmUniversalAdapter::run reports only kErrorInternal, and also fails on any stale error
    // left in cudaGetLastError, e.g. by NCCL's initialisation). No workspace: static persistent
    // scheduler, no-smem epilogue.
    const cutlass::Status init = gemm.initialize(args, nullptr, stream);
    if (init != cutlass::Status::kSuccess) {
      throw Error(std::string("signaling GEMM: CUTLASS initialisation failed: ") +
                  cutlassGetStatusString(init));
    }
    const typename Kernel::Params params =
        widened<V>(gemm.params(), shape, schedule, args.hw_info.sm_count);
    const dim3 grid = Kernel::get_grid_shape(params);
    if (grid.x % kKernelClusterM != 0 || grid.y % kKernelClusterN != 0) {
      throw Error("signaling GEMM: grid " + std::to_string(grid.x) + "x" + std::to_string(grid.y) +
                  " is not a multiple of the " + std::to_string(kKernelClusterM) + "x" +
                  std::to_string(kKernelClusterN) + " cluster (CTA cap " +
                  std::to_string(schedule.cta_cap) + ")");
    }
    cudaLaunchAttribute cluster{};
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = kKernelClusterM;
    cluster.val.clusterDim.y = kKernelClusterN;
    cluster.val.clusterDim.z = 1;
    cudaLaunchConfig_t config{};
    config.gridDim = grid;
    config.blockDim = Kernel::get_block_shape();
    config.dynamicSmemBytes = Kernel::SharedStorageSize;
    config.stream = stream;
    config.attrs = &cluster;
    config.numAttrs = 1;
    void* kernel_args[] = {const_cast<typename Kernel::Params*>(&params)};
    const cudaError_t launched = cudaLaunchKernelExC(
        &config, reinterpret_cast<const void*>(&cutlass::device_kernel<Kernel>), kernel_args);
    if (launched != cudaSuccess) {
      throw Error("signaling GEMM launch (grid " + std::to_string(grid.x) + "x" +
                  std::to_string(grid.y) + "x" + std::to_string(grid.z) + ", block " +
                  std::to_string(config.blockDim.x) + ", " +
                  std::to_string(config.dynamicSmemBytes) +
                  " B shared) failed: " + cudaGetErrorString(launched));
    }
  }

  // The claimed scheduler's counter on the current device: zeroed once (each launch leaves it at
  // zero again).
  void ensure_claim_counter(cudaStream_t stream) {
    int device = 0;
    KILN_CUDA_CHECK(cudaGetDevice(&device));
    if (claim_counter_ != nullptr && claim_device_ == device) return;
    if (claim_counter_ != nullptr) KILN_CUDA_CHECK(cudaFree(claim_counter_));
    claim_counter_ = nullptr;
    KILN_CUDA_CHECK(cudaMalloc(&claim_counter_, sizeof(unsigned)));
    claim_device_ = device;
    KILN_CUDA_CHECK(cudaMemsetAsync(claim_counter_, 0, sizeof(unsigned), stream));
  }

  // CUTLASS's parameters with the scheduler's swizzle widened past 8 where the plan asks for it
  // (overlap/wide_swizzle.hpp); every launch, geometry and slot count goes through this.
  template <class V>
  static typename V::Kernel::Params widened(typename V::Kernel::Params params,
                                            const GemmShape& shape, const ScheduleOptions& schedule,
                                            int sm_count) {
    if (schedule.claimed_tiles) return params;  // the band order has no swizzle to widen
    const SchedulerFrame frame = scheduler_frame(shape, kConfig);
    widen_scheduler_swizzle(params.scheduler, frame.problem, frame.tile, frame.cluster, schedule,
                            sm_count);
    return params;
  }

  template <class V>
  typename V::Gemm::Arguments arguments(const GemmShape& shape, const void* a, const void* b,
                                        const EpilogueTargets& targets,
                                        const ScheduleOptions& schedule, int device_sms) const {
    using Kernel = typename V::Kernel;
    using RasterOptions = typename Kernel::TileScheduler::RasterOrderOptions;
    using StrideA = typename Kernel::StrideA;
    using StrideB = typename Kernel::StrideB;
    // The kernel's own problem: C's, or Cᵀ's with the operands exchanged.
    const GemmShape problem = scheduler_frame(shape, kConfig).problem;
    const int kernel_m = problem.m, kernel_n = problem.n;
    const void* kernel_a = kSwap ? b : a;
    const void* kernel_b = kSwap ? a : b;
    const StrideA stride_a = packed_stride<StrideA>(kernel_m, shape.k);  // A indexed (M, K)
    const StrideB stride_b = packed_stride<StrideB>(kernel_n, shape.k);  // B indexed (N, K)
    typename V::Epilogue::Arguments epilogue;
    epilogue.slots = static_cast<Element*>(targets.slots);
    epilogue.slot_of_tile = targets.slot_of_tile;
    epilogue.group_counters = targets.group_counters;
    epilogue.wave_group = targets.wave_group;
    epilogue.group_first_slot = targets.group_first_slot;
    epilogue.group_slot_count = targets.group_slot_count;
    epilogue.slot_done_ns = targets.slot_done_ns;
    epilogue.geometry = targets.geometry;
    epilogue.column_groups = targets.column_groups;
    epilogue.raster_along_n = schedule.raster_along_n ? 1 : 0;
    epilogue.deferred_signal = targets.deferred_signal ? 1 : 0;
    epilogue.debug_signal_delay_ns = targets.debug_signal_delay_ns;

    cutlass::KernelHardwareInfo hw;
    KILN_CUDA_CHECK(cudaGetDevice(&hw.device_id));
    hw.sm_count =
        schedule.cta_cap > 0 && schedule.cta_cap < device_sms ? schedule.cta_cap : device_sms;
    typename Kernel::TileSchedulerArguments scheduler;
    // Claimed tiles take the swizzle as their band width (band_order.hpp) and CUTLASS's parameters
    // without swizzle, so that no padding tile becomes a work item.
    scheduler.max_swizzle_size = schedule.claimed_tiles ? 1 : schedule.swizzle;
    if constexpr (!std::is_same_v<V, Static>) {
      scheduler.band = schedule.swizzle;
      scheduler.serpentine = schedule.serpentine ? 1 : 0;
    }
    scheduler.raster_order =
        schedule.raster_along_n ? RasterOptions::AlongN : RasterOptions::AlongM;

    typename V::Gemm::Arguments args{cutlass::gemm::GemmUniversalMode::kGemm,
                                     {kernel_m, kernel_n, shape.k, 1},
                                     {static_cast<const Element*>(kernel_a), stride_a,
                                      static_cast<const Element*>(kernel_b), stride_b},
                                     epilogue,
                                     hw,
                                     scheduler};
    // The epilogue's slot is the scheduler's linear index; it needs the grid size the kernel
    // will launch with, which CUTLASS derives from these same arguments.
    const typename Kernel::Params params =
        widened<V>(Kernel::to_underlying_arguments(args, nullptr), shape, schedule, hw.sm_count);
    const dim3 grid = Kernel::get_grid_shape(params);
    args.epilogue.grid_ctas = static_cast<int>(grid.x * grid.y * grid.z);
    if constexpr (!std::is_same_v<V, Static>) args.epilogue.claimed_order = params.scheduler.order;
    return args;
  }

  typename Static::Gemm gemm_static_;
  typename Claimed::Gemm gemm_claimed_;
  unsigned* claim_counter_ = nullptr;
  int claim_device_ = -1;
};

// Every configuration of built_gemm_configs(), for one dtype and weight layout.
template <class Element, WeightLayout kLayout>
std::unique_ptr<SignalingGemm> make_configured_gemm(const GemmConfig& c) {
  return dispatch_built_config(c, "signaling GEMM", [](auto tag) -> std::unique_ptr<SignalingGemm> {
    using T = decltype(tag);
    return std::make_unique<SignalingGemmImpl<Element, kLayout, T::kTileM, T::kTileN, T::kClusterM,
                                              T::kClusterN, T::kKernel>>();
  });
}

}  // namespace kiln::overlap::device
