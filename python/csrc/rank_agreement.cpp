// Agreement across a group's ranks on a step that they take together (see rank_agreement.hpp).
#include "rank_agreement.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nccl.h>

#include <algorithm>

#include "core/cuda_check.hpp"

namespace kiln::torch_ops {

std::vector<int> RankReports::failed_ranks() const {
  std::vector<int> ranks;
  for (std::size_t r = 0; r < outcomes.size(); ++r) {
    if (outcomes[r] != Outcome::kOk) ranks.push_back(static_cast<int>(r));
  }
  return ranks;
}

RankAgreement::RankAgreement(comm::Communicator& comm, std::size_t max_values)
    : comm_(comm),
      per_rank_(1 + max_values),
      buffer_(sizeof(std::int32_t) * per_rank_ * comm.size()),
      host_(per_rank_ * comm.size(), 0) {}

RankReports RankAgreement::exchange(const StepReport& mine, const std::string& what) {
  if (mine.values.size() + 1 > per_rank_) {
    throw Error(fmt::format("{}: {} values to agree on, at most {}", what, mine.values.size(),
                            per_rank_ - 1));
  }
  const int world = comm_.size(), rank = comm_.rank();
  std::fill(host_.begin(), host_.end(), 0);
  std::int32_t* own = host_.data() + per_rank_ * rank;
  own[0] = static_cast<std::int32_t>(mine.outcome);
  std::copy(mine.values.begin(), mine.values.end(), own + 1);
  if (world > 1) {
    auto* device = buffer_.as<std::int32_t>();
    const std::size_t bytes = sizeof(std::int32_t) * host_.size();
    KILN_CUDA_CHECK(cudaMemcpyAsync(device, host_.data(), bytes, cudaMemcpyHostToDevice, stream_));
    comm_.call(what, [&] {  // in place: each rank's part already sits at its own offset
      return ncclAllGather(device + per_rank_ * rank, device, per_rank_, ncclInt32, comm_.get(),
                           stream_);
    });
    comm_.wait(stream_, what);
    KILN_CUDA_CHECK(cudaMemcpyAsync(host_.data(), device, bytes, cudaMemcpyDeviceToHost, stream_));
    stream_.synchronize();
  }
  RankReports reports;
  for (int r = 0; r < world; ++r) {
    const std::int32_t* part = host_.data() + per_rank_ * r;
    reports.outcomes.push_back(static_cast<Outcome>(part[0]));
    reports.values.emplace_back(part + 1, part + per_rank_);
  }
  return reports;
}

RankReports RankAgreement::require_all(const StepReport& mine, const std::string& what) {
  RankReports reports = exchange(mine, what);
  const std::vector<int> failed = reports.failed_ranks();
  if (failed.empty()) return reports;
  const bool all_usage = std::all_of(failed.begin(), failed.end(), [&](int r) {
    return reports.outcomes[r] == Outcome::kUsageError;
  });
  const std::string ranks = fmt::format("{}", fmt::join(failed, ", "));
  const std::string message =
      mine.outcome != Outcome::kOk
          ? fmt::format("{} ({} failed on rank(s) {} of the group; every rank raises)", mine.error,
                        what, ranks)
          : fmt::format(
                "{} failed on rank(s) {} of the group (their error says why); this rank raises "
                "too, so that the ranks stay in step",
                what, ranks);
  if (all_usage) throw UsageError(message);
  throw Error(message);
}

}  // namespace kiln::torch_ops
