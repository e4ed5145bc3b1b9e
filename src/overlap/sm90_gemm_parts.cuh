// What kiln's sm90 GEMM kernels share (the signaling GEMM, signaling_gemm_impl.cuh, and its
// CUTLASS-epilogue twin, plain_gemm_bf16_nk.cu): the main loop CUTLASS's collective builder makes
// for a configuration, and the one list that maps each of built_gemm_configs() to its template
// arguments.
#pragma once

#include <cutlass/cutlass.h>
#include <cute/tensor.hpp>
// The GMMA instructions whose widths are not powers of two (64x160 for the split-N kernel).
#include <cute/arch/mma_sm90_gmma_ext.hpp>
#include <cute/atom/mma_traits_sm90_gmma_ext.hpp>
#include <cutlass/gemm/collective/collective_builder.hpp>

#include "core/error.hpp"
#include "overlap/gemm_shape.hpp"

namespace kiln::overlap::device {

// CUTLASS's collective builder for a kTileM x kTileN (x64) tile, cluster kClusterM x kClusterN,
// cooperative or ping-pong, with as many stages as fit beside `kCarveout` bytes of epilogue
// storage. Named as the builder (not its CollectiveOp) so that a kernel choosing between it and
// SplitNCooperativeMainloop instantiates only the one it picks.
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

// CUTLASS's sm90 cooperative main loop with its two consumer warp groups side by side along N
// (a 1x2 warp-group layout) instead of the collective builder's 2x1: each warp group multiplies
// the whole CTA tile's rows by half its columns, so a CTA tile may be wider than one GMMA
// instruction (128x320 = 2 x 128x160, the tile cuBLAS runs for several of kiln's shapes). The
// pieces are the ones CUTLASS's builder assembles (cutlass/gemm/collective/builders/
// sm90_gmma_builder.inl): the GMMA op for the warp group's half, TMA (multicast) loads per cluster
// shape, swizzled shared-memory atoms, the largest stage count that fits beside `kCarveout` bytes.
template <class Element, class LayoutA, class LayoutB, int kTileM, int kTileN, int kClusterM,
          int kClusterN, int kCarveout>
struct SplitNCooperativeMainloop {
  using CtaTile = cute::Shape<cute::Int<kTileM>, cute::Int<kTileN>, cute::Int<64>>;
  using Cluster = cute::Shape<cute::Int<kClusterM>, cute::Int<kClusterN>, cute::_1>;
  static constexpr cute::GMMA::Major kMajorA =
      cutlass::gemm::collective::detail::gmma_ss_tag_to_major_A<Element, LayoutA>();
  static constexpr cute::GMMA::Major kMajorB =
      cutlass::gemm::collective::detail::gmma_ss_tag_to_major_B<Element, LayoutB>();
  // The GMMA instruction as wide as the warp group's half, named here: CUTLASS's ss_op_selector
  // offers widths that are not powers of two only under CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED,
  // which would widen its choices for every other kernel too. kiln builds halves of 160 columns
  // (128x320 tiles) and 96 (192x192), cuBLAS's tiles that the builder does not offer.
  static constexpr bool kHalf = std::is_same_v<Element, cutlass::half_t>;
  static_assert(kTileN / 2 == 160 || kTileN / 2 == 96, "split-N halves of 160 or 96 columns");
  // (96: 192x192 tiles, which compile without spills but need a slot layout for 192-row tiles.)
  using GroupMma = std::conditional_t<
      kTileN / 2 == 160,
      std::conditional_t<kHalf, cute::SM90::GMMA::MMA_64x160x16_F32F16F16_SS<kMajorA, kMajorB>,
                         cute::SM90::GMMA::MMA_64x160x16_F32BF16BF16_SS<kMajorA, kMajorB>>,
      std::conditional_t<kHalf, cute::SM90::GMMA::MMA_64x96x16_F32F16F16_SS<kMajorA, kMajorB>,
                         cute::SM90::GMMA::MMA_64x96x16_F32BF16BF16_SS<kMajorA, kMajorB>>>;
  using TiledMma = decltype(cute::make_tiled_mma(
      GroupMma{}, cute::Layout<cute::Shape<cute::_1, cute::_2, cute::_1>>{}));
  using CopyA = decltype(cutlass::gemm::collective::detail::sm90_cluster_shape_to_tma_atom(
      cute::Int<kClusterN>{}));
  using CopyB = decltype(cutlass::gemm::collective::detail::sm90_cluster_shape_to_tma_atom(
      cute::Int<kClusterM>{}));
  using SmemAtomA = decltype(cutlass::gemm::collective::detail::ss_smem_selector<
                             kMajorA, Element, cute::Int<kTileM>, cute::Int<64>>());
  // B's atom chosen for one warp group's half, so that each half is whole atoms (with B stored
  // K x N, a 160-column half takes 64-byte swizzled atoms where the whole width would take 128).
  using SmemAtomB = decltype(cutlass::gemm::collective::detail::ss_smem_selector<
                             kMajorB, Element, cute::Int<kTileN / 2>, cute::Int<64>>());
  static constexpr int kStages = cutlass::gemm::collective::detail::compute_stage_count_or_override<
      cutlass::gemm::collective::detail::sm90_smem_capacity_bytes, Element, Element, CtaTile>(
      cutlass::gemm::collective::StageCountAutoCarveout<kCarveout>{});
  using CollectiveOp = cutlass::gemm::collective::CollectiveMma<
      cutlass::gemm::MainloopSm90TmaGmmaWarpSpecialized<
          kStages, Cluster, cutlass::gemm::KernelTmaWarpSpecializedCooperative>,
      CtaTile, Element, cutlass::detail::TagToStrideA_t<LayoutA>, Element,
      cutlass::detail::TagToStrideB_t<LayoutB>, TiledMma, CopyA, SmemAtomA, void, cute::identity,
      CopyB, SmemAtomB, void, cute::identity>;
};

// The main loop of a configuration: the builder's, or the split-N one for kernel=coop-n.
template <class Element, class LayoutA, class LayoutB, int kTileM, int kTileN, int kClusterM,
          int kClusterN, KernelSchedule kKernel, int kCarveout>
using Sm90Mainloop = typename std::conditional_t<
    kKernel == KernelSchedule::kCooperativeSplitN,
    SplitNCooperativeMainloop<Element, LayoutA, LayoutB, kTileM, kTileN, kClusterM, kClusterN,
                              kCarveout>,
    Sm90MainloopBuilder<Element, LayoutA, LayoutB, kTileM, kTileN, kClusterM, kClusterN, kKernel,
                        kCarveout>>::CollectiveOp;

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
  // clang-format on
  throw UsageError(what + " " + gemm_config_name(c) + ": no kernel compiled for it");
}

}  // namespace kiln::overlap::device
