// NCCL communicators limited to the free SMs (see limited_communicator.hpp).
#include "overlap/limited_communicator.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"

namespace kiln::overlap {

LimitedCommunicator::LimitedCommunicator(comm::Communicator& parent, int max_ctas)
    : max_ctas_(max_ctas) {
  if (max_ctas < 1) throw UsageError(fmt::format("NCCL CTA limit {}: must be >= 1", max_ctas));
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  // NCCL's channel count tops out at 32 on this machine class; more free SMs than that need no
  // limit.
  config.maxCTAs = std::min(max_ctas, 32);
  config.minCTAs = std::min(config.maxCTAs, 4);
  parent.call(fmt::format("communicator split (max {} CTAs)", max_ctas),
              [&] { return ncclCommSplit(parent.get(), 0, parent.rank(), &comm_, &config); });
}

LimitedCommunicator::~LimitedCommunicator() {
  if (comm_ != nullptr) ncclCommDestroy(comm_);
}

int collective_ctas_for(const Plan& plan, const LaunchGeometry& launch, int device_sms) {
  if (plan.copy_engine || plan.schedule.cta_cap <= 0) return 0;
  return std::max(device_sms - launch.grid_ctas, 0);
}

LimitedCommunicator* LimitedCommunicatorPool::get(int max_ctas) {
  if (max_ctas < 1) return nullptr;
  auto& slot = by_ctas_[max_ctas];
  if (!slot) slot = std::make_unique<LimitedCommunicator>(parent_, max_ctas);
  return slot.get();
}

}  // namespace kiln::overlap
