// What kiln's sm90 GEMM kernels share (the signaling GEMM, signaling_gemm_impl.cuh, and its
// CUTLASS-epilogue twin, plain_gemm_bf16_nk.cu): the main loop CUTLASS's collective builder makes
// for a configuration, and the one list that maps each of built_gemm_configs() to its template
// arguments.
#pragma once

#include <cutlass/cutlass.h>
#include <cute/tensor.hpp>
#include <cutlass/gemm/collective/collective_builder.hpp>

#include "core/error.hpp"
#include "overlap/gemm_shape.hpp"

namespace kiln::overlap::device {

// The main loop of a kTileM x kTileN (x64) tile, cluster kClusterM x kClusterN, cooperative or
// ping-pong, with as many stages as fit beside `kCarveout` bytes of epilogue storage.
template <class Element, class LayoutA, class LayoutB, int kTileM, int kTileN, int kClusterM,
          int kClusterN, KernelSchedule kKernel, int kCarveout>
using Sm90Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Element, LayoutA, 8, Element, LayoutB, 8,
    float, cute::Shape<cute::Int<kTileM>, cute::Int<kTileN>, cute::Int<64>>,
    cute::Shape<cute::Int<kClusterM>, cute::Int<kClusterN>, cute::_1>,
    cutlass::gemm::collective::StageCountAutoCarveout<kCarveout>,
    std::conditional_t<kKernel == KernelSchedule::kPingpong,
                       cutlass::gemm::KernelTmaWarpSpecializedPingpong,
                       cutlass::gemm::KernelTmaWarpSpecializedCooperative>>::CollectiveOp;

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
  // clang-format on
  throw UsageError(what + " " + gemm_config_name(c) + ": no kernel compiled for it");
}

}  // namespace kiln::overlap::device
