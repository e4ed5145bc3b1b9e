// The tuner's comm=ce2 group alone (see two_phase_curve.hpp).
#include "tune/two_phase_curve.hpp"

#include <fmt/format.h>

#include "core/cuda_check.hpp"
#include "core/error.hpp"
#include "core/stream.hpp"
#include "overlap/group_wait.hpp"
#include "overlap/part_sum.hpp"

namespace kiln::tune {

namespace {
constexpr std::size_t kVector = 16;  // sum_parts' granule: 8 two-byte elements
// Distinct from the runtime's exchanges (0 and 2000) in the spin kernel's wait labels.
constexpr int kScatterLabels = 4000, kGatherLabels = 6000;
}  // namespace

TwoPhaseGroupAlone::TwoPhaseGroupAlone(comm::Communicator& comm, std::size_t largest_bytes,
                                       core::DType dtype, int device_sms)
    : rank_(comm.rank()), world_(comm.size()), device_sms_(device_sms), dtype_(dtype), comm_(comm) {
  if (world_ > overlap::PartList::kMaxParts) {
    throw UsageError(fmt::format("comm=ce2 curve: needs at most {} ranks, got {}",
                                 overlap::PartList::kMaxParts, world_));
  }
  if (core::dtype_size(dtype) != 2) throw UsageError("comm=ce2 curve: bf16 or fp16 only");
  const std::size_t region = part_bytes(largest_bytes);
  scatter_ = std::make_unique<overlap::CopyEngineExchange>(comm, region, kScatterLabels);
  gather_ = std::make_unique<overlap::CopyEngineExchange>(comm, region, kGatherLabels);
  reduced_ = core::DeviceBuffer(region);
  // The runtime's choice: stream memory waits where the driver has them.
  const overlap::WaitMethod method = overlap::choose_wait_method(core::Stream());
  scatter_->set_wait_method(method, overlap::kDefaultCounterWaitSeconds);
  gather_->set_wait_method(method, overlap::kDefaultCounterWaitSeconds);
  // A communicator wait that times out (a peer gone or stalled) names the flags this rank still
  // waits for and raises them, so that the stream waits end and the process can exit.
  stall_reporter_ = comm_.add_stall_reporter([this]() -> std::string {
    if (epoch_ == 0) return "";
    std::string report;
    for (auto* exchange : {scatter_.get(), gather_.get()}) {
      const std::string flags = exchange->release_stuck_flags(epoch_, epoch_);
      if (!flags.empty())
        report += (report.empty() ? "" : "; ") +
                  std::string(exchange == gather_.get() ? "second phase: " : "first phase: ") +
                  flags;
    }
    if (report.empty()) return report;
    forced_ = true;
    return fmt::format(
        "tuner's comm=ce2 curve on rank {} (epoch {}): {}; raised to release the "
        "waits",
        rank_, epoch_, report);
  });
}

TwoPhaseGroupAlone::~TwoPhaseGroupAlone() {
  comm_.remove_stall_reporter(stall_reporter_);
}

std::size_t TwoPhaseGroupAlone::part_bytes(std::size_t bytes) const {
  const std::size_t part = bytes / static_cast<std::size_t>(world_) / kVector * kVector;
  return part > 0 ? part : kVector;
}

void TwoPhaseGroupAlone::enqueue(const void* send, std::size_t bytes, cudaStream_t stream) {
  const std::size_t part = part_bytes(bytes);
  if (forced_) throw UsageError("comm=ce2 curve: a stalled run raised its flags; no more runs");
  if (part > scatter_->region_bytes()) {
    throw UsageError(fmt::format("comm=ce2 curve: a group of {} B exceeds the {} B prepared", bytes,
                                 scatter_->region_bytes() * world_));
  }
  ++epoch_;
  const char* from = static_cast<const char*>(send);
  // Phase 1: the part each peer owns, to that peer.
  scatter_->wait_until_peers_freed(epoch_, stream);
  for (int step = 1; step < world_; ++step) {
    const int owner = (rank_ + step) % world_;
    scatter_->copy_to(owner, 0, from + owner * part, part, stream);
  }
  scatter_->announce_arrival(epoch_, stream);
  scatter_->wait_for_arrivals(epoch_, stream);
  // The owner's sum, in rank order with its own part in place (the runtime's order).
  overlap::PartList parts;
  parts.count = world_;
  for (int r = 0; r < world_; ++r)
    parts.parts[r] =
        r == rank_ ? static_cast<const void*>(from + rank_ * part) : scatter_->local_region(r);
  overlap::sum_parts(parts, static_cast<std::int64_t>(part / core::dtype_size(dtype_)), dtype_,
                     reduced_.data(), device_sms_, stream);
  scatter_->announce_freed(epoch_, stream);
  // Phase 2: the sum to every peer.
  gather_->wait_until_peers_freed(epoch_, stream);
  for (int step = 1; step < world_; ++step)
    gather_->copy_to((rank_ + step) % world_, 0, reduced_.data(), part, stream);
  gather_->announce_arrival(epoch_, stream);
  gather_->wait_for_arrivals(epoch_, stream);
  gather_->announce_freed(epoch_, stream);
}

}  // namespace kiln::tune
