// What kiln's sm90 GEMM kernels share (the signaling GEMM, signaling_gemm_impl.cuh, and its
// CUTLASS-epilogue twin, plain_gemm_bf16_nk.cu): the main loop CUTLASS's collective builder makes
// for a configuration, and the one list that maps each of built_gemm_configs() to its template
// arguments.
#pragma once

#include <cutlass/cutlass.h>
#include <cute/tensor.hpp>
// The GMMA instructions whose widths are not powers of two (64x144, 64x160, 64x176).
#include <cute/arch/mma_sm90_gmma_ext.hpp>
#include <cute/atom/mma_traits_sm90_gmma_ext.hpp>
#include <cutlass/gemm/collective/collective_builder.hpp>

#include "core/error.hpp"
#include "overlap/gemm_shape.hpp"
#ifdef KILN_MAINLOOP_TRACE
#include "overlap/sm90_mainloop_trace.cuh"
#endif

namespace kiln::overlap::device {

// CUTLASS's collective builder for a kTileM x kTileN (x64) tile, cluster kClusterM x kClusterN,
// cooperative or ping-pong, with as many stages as fit beside `kCarveout` bytes of epilogue
// storage. Named as the builder (not its CollectiveOp) so that a kernel choosing between it and
// ExplicitGmmaMainloop instantiates only the one it picks.
template <class Element, class LayoutA, class LayoutB, int kTileM, int kTileN, int kClusterM,
          int kClusterN, KernelSchedule kKernel, int kCarveout>
using Sm90MainloopBuilder = cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Element, LayoutA, 8, Element, LayoutB, 8,
    float, cute::Shape<cute::Int<kTileM>, cute::Int<kTileN>, cute::Int<64>>,
    cute::Shape<cute::Int<kClusterM>, cute::Int<kClusterN>, cute::_1>,
    cutlass::gemm::collective::StageCountAutoCarveout<kCarveout>,
    std::conditional_t<kKernel == KernelSchedule::kPingpong,
                       cutlass::gemm::KernelTmaWarpSpecializedPingpong,
                       cutlass::gemm::KernelTmaWarpSpecializedCooperative>>;

// The GMMA instruction of an explicit warp-group width (one 64-row atom by kGroupN columns, fp32
// accumulators, both operands in shared memory), for ExplicitGmmaMainloop. Only the widths below
// are built; any other fails to compile here.
template <int kGroupN, class Element, cute::GMMA::Major kMajorA, cute::GMMA::Major kMajorB>
struct ExplicitGmmaOp;
#define KILN_EXPLICIT_GMMA_OP(N)                                                     \
  template <cute::GMMA::Major kMajorA, cute::GMMA::Major kMajorB>                    \
  struct ExplicitGmmaOp<N, cutlass::half_t, kMajorA, kMajorB> {                      \
    using type = cute::SM90::GMMA::MMA_64x##N##x16_F32F16F16_SS<kMajorA, kMajorB>;   \
  };                                                                                 \
  template <cute::GMMA::Major kMajorA, cute::GMMA::Major kMajorB>                    \
  struct ExplicitGmmaOp<N, cutlass::bfloat16_t, kMajorA, kMajorB> {                  \
    using type = cute::SM90::GMMA::MMA_64x##N##x16_F32BF16BF16_SS<kMajorA, kMajorB>; \
  };
KILN_EXPLICIT_GMMA_OP(96)
KILN_EXPLICIT_GMMA_OP(144)
KILN_EXPLICIT_GMMA_OP(160)
KILN_EXPLICIT_GMMA_OP(176)
#undef KILN_EXPLICIT_GMMA_OP

// CUTLASS's sm90 main loop with the GMMA instruction named here instead of chosen by the
// collective builder, for the tiles whose warp-group width is not one of the builder's (CUTLASS's
// ss_op_selector offers widths that are not powers of two only under
// CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED, which would widen its choices for every other kernel too):
//  - kernel=coop-n: the cooperative kernel with its two consumer warp groups side by side along N
//    (a 1x2 warp-group layout) instead of the builder's 2x1: each warp group multiplies the whole
//    CTA tile's rows by half its columns, so a CTA tile may be wider than one GMMA instruction
//    (128x320 = 2 x 128x160, the tile cuBLAS runs for several of kiln's shapes);
//  - ping-pong 128x160 and 128x176: one warp group per tile, as the builder makes it, with the
//    widths of cuBLAS's 5-stage ping-pong-style kernels (176x128 and 160x128 in cuBLAS's
//    column-major terms; run 7's Nsight Compute profile, docs/results/2026-11-24-gemm-configs/);
//  - ping-pong 128x144: at N = 8192 and M = 4096 its 57 column tiles fill 14 waves of 132 SMs
//    as evenly as cuBLAS's 128x168 (nvjet_sm90_tst_168x128_64x5) fills 12: the same SM-tile area
//    per SM, where 128x192 takes 4.7% more and 128x128 1.6% more
//    (docs/results/2026-11-30j-wave-fit/).
// The pieces are the ones CUTLASS's builder assembles (cutlass/gemm/collective/builders/
// sm90_gmma_builder.inl): the GMMA op for one warp group's width, TMA (multicast) loads per cluster
// shape, swizzled shared-memory atoms, the largest stage count that fits beside `kCarveout` bytes.
template <class Element, class LayoutA, class LayoutB, int kTileM, int kTileN, int kClusterM,
          int kClusterN, KernelSchedule kKernel, int kCarveout>
struct ExplicitGmmaMainloop {
  using CtaTile = cute::Shape<cute::Int<kTileM>, cute::Int<kTileN>, cute::Int<64>>;
  using Cluster = cute::Shape<cute::Int<kClusterM>, cute::Int<kClusterN>, cute::_1>;
  static constexpr bool kSplitN = kKernel == KernelSchedule::kCooperativeSplitN;
  static_assert(kSplitN || kKernel == KernelSchedule::kPingpong,
                "explicit GMMA widths for coop-n and ping-pong only");
  static constexpr int kGroupN = kSplitN ? kTileN / 2 : kTileN;  // one warp group's columns
  static constexpr cute::GMMA::Major kMajorA =
      cutlass::gemm::collective::detail::gmma_ss_tag_to_major_A<Element, LayoutA>();
  static constexpr cute::GMMA::Major kMajorB =
      cutlass::gemm::collective::detail::gmma_ss_tag_to_major_B<Element, LayoutB>();
  // (96: coop-n 192x192, which compiles without spills but needs a slot layout for 192-row tiles.)
  using GroupMma = typename ExplicitGmmaOp<kGroupN, Element, kMajorA, kMajorB>::type;
  // Ping-pong: one warp group covers the tile (its rows in 64-row atoms, as the builder's 1x1x1).
  using WarpGroups = cute::Layout<cute::Shape<cute::_1, cute::Int<kSplitN ? 2 : 1>, cute::_1>>;
  using TiledMma = decltype(cute::make_tiled_mma(GroupMma{}, WarpGroups{}));
  using CopyA = decltype(cutlass::gemm::collective::detail::sm90_cluster_shape_to_tma_atom(
      cute::Int<kClusterN>{}));
  using CopyB = decltype(cutlass::gemm::collective::detail::sm90_cluster_shape_to_tma_atom(
      cute::Int<kClusterM>{}));
  using SmemAtomA = decltype(cutlass::gemm::collective::detail::ss_smem_selector<
                             kMajorA, Element, cute::Int<kTileM>, cute::Int<64>>());
  // B's atom chosen for one warp group's width, so that each group's columns are whole atoms
  // (with B stored K x N, a 160-column half takes 64-byte swizzled atoms where the whole width
  // would take 128; 144 and 176 columns take 32-byte ones). Widths that are not a multiple of 16
  // (168, 200) do not compile: with B stored N x K, CuTe cannot slice one pipeline stage out of
  // a swizzled buffer whose stage is not a whole number of the swizzle's 16-row repeats (tried on
  // the CPU machine, 2026-11-30j).
  using SmemAtomB = decltype(cutlass::gemm::collective::detail::ss_smem_selector<
                             kMajorB, Element, cute::Int<kGroupN>, cute::Int<64>>());
  static constexpr int kStages = cutlass::gemm::collective::detail::compute_stage_count_or_override<
      cutlass::gemm::collective::detail::sm90_smem_capacity_bytes, Element, Element, CtaTile>(
      cutlass::gemm::collective::StageCountAutoCarveout<kCarveout>{});
  using Schedule = std::conditional_t<kSplitN, cutlass::gemm::KernelTmaWarpSpecializedCooperative,
                                      cutlass::gemm::KernelTmaWarpSpecializedPingpong>;
  using CollectiveOp = cutlass::gemm::collective::CollectiveMma<
      cutlass::gemm::MainloopSm90TmaGmmaWarpSpecialized<kStages, Cluster, Schedule>, CtaTile,
      Element, cutlass::detail::TagToStrideA_t<LayoutA>, Element,
      cutlass::detail::TagToStrideB_t<LayoutB>, TiledMma, CopyA, SmemAtomA, void, cute::identity,
      CopyB, SmemAtomB, void, cute::identity>;
};

// Whether a configuration's main loop names its GMMA instruction (ExplicitGmmaMainloop) rather
// than taking the collective builder's.
constexpr bool uses_explicit_gmma(int tile_n, KernelSchedule kernel) {
  return kernel == KernelSchedule::kCooperativeSplitN ||
         (kernel == KernelSchedule::kPingpong && (tile_n == 144 || tile_n == 160 || tile_n == 176));
}

// CUTLASS's main loop of a configuration: the builder's, or the explicit one (coop-n, wide
// ping-pong).
template <class Element, class LayoutA, class LayoutB, int kTileM, int kTileN, int kClusterM,
          int kClusterN, KernelSchedule kKernel, int kCarveout>
using Sm90CutlassMainloop = typename std::conditional_t<
    uses_explicit_gmma(kTileN, kKernel),
    ExplicitGmmaMainloop<Element, LayoutA, LayoutB, kTileM, kTileN, kClusterM, kClusterN, kKernel,
                         kCarveout>,
    Sm90MainloopBuilder<Element, LayoutA, LayoutB, kTileM, kTileN, kClusterM, kClusterN, kKernel,
                        kCarveout>>::CollectiveOp;

#ifdef KILN_MAINLOOP_TRACE
// Diagnostic build: ping-pong main loops with clock reads (sm90_mainloop_trace.cuh).
template <class Element, class LayoutA, class LayoutB, int kTileM, int kTileN, int kClusterM,
          int kClusterN, KernelSchedule kKernel, int kCarveout>
using Sm90Mainloop = std::conditional_t<
    kKernel == KernelSchedule::kPingpong,
    TracedMainloop<Sm90CutlassMainloop<Element, LayoutA, LayoutB, kTileM, kTileN, kClusterM,
                                       kClusterN, kKernel, kCarveout>>,
    Sm90CutlassMainloop<Element, LayoutA, LayoutB, kTileM, kTileN, kClusterM, kClusterN, kKernel,
                        kCarveout>>;
#else
template <class Element, class LayoutA, class LayoutB, int kTileM, int kTileN, int kClusterM,
          int kClusterN, KernelSchedule kKernel, int kCarveout>
using Sm90Mainloop = Sm90CutlassMainloop<Element, LayoutA, LayoutB, kTileM, kTileN, kClusterM,
                                         kClusterN, kKernel, kCarveout>;
#endif

// A configuration as types, for the `make` of dispatch_built_config.
template <int kTileM_, int kTileN_, int kClusterM_, int kClusterN_, KernelSchedule kKernel_>
struct ConfigTag {
  static constexpr int kTileM = kTileM_, kTileN = kTileN_, kClusterM = kClusterM_,
                       kClusterN = kClusterN_;
  static constexpr KernelSchedule kKernel = kKernel_;
};

// Returns make(ConfigTag<tile m, tile n, cluster m, cluster n, schedule>{}) for the
// configuration equal to `c`: the compiled counterpart of built_gemm_configs() (gemm_shape.cpp;
// tests/cpu checks that the two agree). Throws kiln::UsageError naming `what` for any other.
template <class Make>
auto dispatch_built_config(const GemmConfig& c, const std::string& what, Make&& make) {
  using enum KernelSchedule;
  const auto is = [&](int tm, int tn, int cm, int cn, KernelSchedule k) {
    return c == GemmConfig{{tm, tn}, {cm, cn}, k};
  };
  // clang-format off
  if (is(128, 256, 2, 1, kCooperative)) return make(ConfigTag<128, 256, 2, 1, kCooperative>{});
  if (is(128, 128, 2, 1, kCooperative)) return make(ConfigTag<128, 128, 2, 1, kCooperative>{});
  if (is(256, 128, 2, 1, kCooperative)) return make(ConfigTag<256, 128, 2, 1, kCooperative>{});
  if (is(256, 128, 1, 2, kCooperative)) return make(ConfigTag<256, 128, 1, 2, kCooperative>{});
  if (is(128, 256, 1, 2, kCooperative)) return make(ConfigTag<128, 256, 1, 2, kCooperative>{});
  if (is(128, 256, 1, 1, kCooperative)) return make(ConfigTag<128, 256, 1, 1, kCooperative>{});
  if (is(256, 128, 1, 1, kCooperative)) return make(ConfigTag<256, 128, 1, 1, kCooperative>{});
  if (is(128, 128, 2, 1, kPingpong))    return make(ConfigTag<128, 128, 2, 1, kPingpong>{});
  if (is(128, 128, 1, 2, kPingpong))    return make(ConfigTag<128, 128, 1, 2, kPingpong>{});
  if (is(64, 256, 1, 1, kPingpong))     return make(ConfigTag<64, 256, 1, 1, kPingpong>{});
  if (is(256, 192, 2, 1, kCooperative)) return make(ConfigTag<256, 192, 2, 1, kCooperative>{});
  if (is(256, 192, 1, 2, kCooperative)) return make(ConfigTag<256, 192, 1, 2, kCooperative>{});
  if (is(128, 320, 2, 1, kCooperativeSplitN)) return make(ConfigTag<128, 320, 2, 1, kCooperativeSplitN>{});
  if (is(128, 192, 1, 2, kPingpong))    return make(ConfigTag<128, 192, 1, 2, kPingpong>{});
  if (is(128, 192, 2, 1, kPingpong))    return make(ConfigTag<128, 192, 2, 1, kPingpong>{});
  if (is(128, 160, 2, 1, kPingpong))    return make(ConfigTag<128, 160, 2, 1, kPingpong>{});
  if (is(128, 160, 1, 2, kPingpong))    return make(ConfigTag<128, 160, 1, 2, kPingpong>{});
  if (is(128, 176, 2, 1, kPingpong))    return make(ConfigTag<128, 176, 2, 1, kPingpong>{});
  if (is(128, 176, 1, 2, kPingpong))    return make(ConfigTag<128, 176, 1, 2, kPingpong>{});
  if (is(128, 144, 2, 1, kPingpong))    return make(ConfigTag<128, 144, 2, 1, kPingpong>{});
  if (is(128, 144, 1, 2, kPingpong))    return make(ConfigTag<128, 144, 1, 2, kPingpong>{});
  if (is(192, 128, 2, 1, kPingpong))    return make(ConfigTag<192, 128, 2, 1, kPingpong>{});
  if (is(192, 128, 1, 2, kPingpong))    return make(ConfigTag<192, 128, 1, 2, kPingpong>{});
  if (is(144, 128, 1, 2, kPingpongSwapAB)) return make(ConfigTag<144, 128, 1, 2, kPingpongSwapAB>{});
  if (is(160, 128, 1, 2, kPingpongSwapAB)) return make(ConfigTag<160, 128, 1, 2, kPingpongSwapAB>{});
  // clang-format on
  throw UsageError(what + " " + gemm_config_name(c) + ": no kernel compiled for it");
}

}  // namespace kiln::overlap::device
