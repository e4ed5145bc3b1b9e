// Host side of the judge's guards (see judge_guards.hpp): L2 state and the time floor.
#include <fmt/format.h>

#include "bench/judge_guards.hpp"

#include <algorithm>
#include "core/cuda_check.hpp"

namespace kiln::bench {

L2State read_l2_state(cudaStream_t stream) {
  L2State s;
  KILN_CUDA_CHECK(cudaDeviceGetLimit(&s.persisting_limit, cudaLimitPersistingL2CacheSize));
  cudaStreamAttrValue value{};
  KILN_CUDA_CHECK(cudaStreamGetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &value));
  s.window_bytes = value.accessPolicyWindow.num_bytes;
  s.window_base = value.accessPolicyWindow.base_ptr;
  return s;
}

std::string describe_l2_change(const L2State& before, const L2State& after) {
  if (before == after) return "";
  return fmt::format(
      "changed the L2 persisting state (state kept across calls): carve-out {} -> {} B, "
      "stream access-policy window {} -> {} B",
      before.persisting_limit, after.persisting_limit, before.window_bytes, after.window_bytes);
}

void reset_l2_state(cudaStream_t stream) {
  // Only what differs from the reset state is set: cudaDeviceSetLimit and the persisting reset
  // are costly, and a guarded call resets before every call. With no carve-out no line can
  // persist, so there is nothing to reset.
  const L2State now = read_l2_state(stream);
  if (now.persisting_limit == 0 && now.window_bytes == 0) return;
  cudaStreamAttrValue value{};
  value.accessPolicyWindow.base_ptr = nullptr;
  value.accessPolicyWindow.num_bytes = 0;
  value.accessPolicyWindow.hitRatio = 0.0f;
  value.accessPolicyWindow.hitProp = cudaAccessPropertyNormal;
  value.accessPolicyWindow.missProp = cudaAccessPropertyNormal;
  KILN_CUDA_CHECK(cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &value));
  // No persisting set-aside to reset on GPUs without one, in MIG mode (disabled there) or under
  // MPS (not settable): then a candidate cannot set one either.
  int device = 0, max_persisting = 0;
  KILN_CUDA_CHECK(cudaGetDevice(&device));
  KILN_CUDA_CHECK(
      cudaDeviceGetAttribute(&max_persisting, cudaDevAttrMaxPersistingL2CacheSize, device));
  if (max_persisting == 0) return;
  const cudaError_t limit = cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0);
  if (limit == cudaErrorNotSupported || limit == cudaErrorNotPermitted ||
      limit == cudaErrorUnsupportedLimit) {
    (void)cudaGetLastError();
    return;
  }
  KILN_CUDA_CHECK(limit);
  KILN_CUDA_CHECK(cudaCtxResetPersistingL2Cache());
}

double floor_seconds(const roofline::CostModel& model, roofline::Ceilings ceilings,
                     double l2_bytes) {
  double bytes = 0.0;
  for (const auto& phase : model.phases)
    for (const auto& stage : phase.stages) bytes += stage.hbm_bytes;
  // The bytes that can sit in L2 (written or read just before the call) at 4x the HBM rate, the
  // rest at the HBM rate: an effective bandwidth, smooth across the L2 size, so that a working
  // set just above L2 is not held to the HBM rate alone.
  if (bytes > 0.0) {
    const double hbm = ceilings.hbm_bytes_per_second;
    const double seconds =
        std::min(bytes, l2_bytes) / (4.0 * hbm) + std::max(0.0, bytes - l2_bytes) / hbm;
    ceilings.hbm_bytes_per_second = bytes / seconds;
  }
  return roofline::evaluate(model, ceilings).seconds;
}

}  // namespace kiln::bench
