// Rank layout and launch for the CLI's multi-rank subcommands (see rank_launch.hpp).
#include "comm/rank_launch.hpp"
#include "core/startup_trace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

#include "core/error.hpp"

namespace kiln::comm {
namespace {

void require_shared_allowed(const RankRequest& request, int ranks_per_gpu, const char* source) {
  if (ranks_per_gpu > 1 && !request.allow_shared_gpus) {
    throw UsageError(
        fmt::format("{} {}: {} measures speed and keeps the result, and ranks that share a GPU are "
                    "time-sliced, so their timings mean nothing; run it with one rank per GPU",
                    source, ranks_per_gpu, request.command));
  }
}

}  // namespace

RankLayout plan_ranks(const RankRequest& request, const std::optional<RankInfo>& launched,
                      int visible_gpus) {
  if (request.gpus < 0) {
    throw UsageError(fmt::format("-g {}: must be >= 1 (or 0 for every visible GPU)", request.gpus));
  }
  if (request.ranks_per_gpu < 0 || request.ranks_per_gpu > kMaxRanksPerGpu) {
    throw UsageError(fmt::format("--ranks-per-gpu {}: accepted range 1..{}", request.ranks_per_gpu,
                                 kMaxRanksPerGpu));
  }
  RankLayout layout;
  if (launched) {
    if (!request.allow_outside_launcher) {
      throw UsageError(fmt::format(
          "{} starts and supervises its own ranks (-g N); it was started by {} as rank {} of {}: "
          "run it once, without the launcher",
          request.command, launched->launcher, launched->rank, launched->world_size));
    }
    if (request.gpus != 0 && request.gpus != launched->world_size) {
      throw UsageError(fmt::format("-g {}: the launcher ({}) already started {} rank(s); omit -g",
                                   request.gpus, launched->launcher, launched->world_size));
    }
    RankInfo info = *launched;
    if (request.ranks_per_gpu > 0) info.ranks_per_gpu = request.ranks_per_gpu;
    require_shared_allowed(request, info.ranks_per_gpu,
                           request.ranks_per_gpu > 0 ? "--ranks-per-gpu" : kRanksPerGpuVariable);
    info.ranks_per_gpu = std::min(info.ranks_per_gpu, info.world_size);
    layout.world_size = info.world_size;
    layout.ranks_per_gpu = info.ranks_per_gpu;
    layout.gpus_used = 0;  // unknown: the launcher placed the ranks, maybe on several hosts
    layout.launched = info;
    return layout;
  }
  if (visible_gpus <= 0) {
    throw UsageError(fmt::format("-g {}: no CUDA GPU is visible on this host ({} needs one)",
                                 request.gpus, request.command));
  }
  const int per_gpu = std::max(request.ranks_per_gpu, 1);
  require_shared_allowed(request, per_gpu, "--ranks-per-gpu");
  const int capacity = visible_gpus * per_gpu;
  layout.world_size = request.gpus == 0 ? capacity : request.gpus;
  if (layout.world_size > capacity) {
    throw UsageError(fmt::format(
        "-g {}: this host has {} visible GPU(s), so at most {} rank(s) with {} per GPU (accepted "
        "range 1..{}){}",
        request.gpus, visible_gpus, capacity, per_gpu, capacity,
        per_gpu == 1 ? fmt::format("; --ranks-per-gpu {} runs them on one GPU for correctness "
                                   "checks (timings are not meaningful)",
                                   std::min((request.gpus + visible_gpus - 1) / visible_gpus,
                                            kMaxRanksPerGpu))
                     : std::string()));
  }
  layout.ranks_per_gpu = std::min(per_gpu, layout.world_size);
  layout.gpus_used = (layout.world_size + layout.ranks_per_gpu - 1) / layout.ranks_per_gpu;
  return layout;
}

RankLayout resolve_ranks(const RankRequest& request) {
  const std::optional<RankInfo> launched = rank_from_environment(process_environment());
  core::trace_point("counting GPUs");
  const int gpus = launched ? 0 : count_visible_gpus();
  core::trace_point("counted GPUs");
  return plan_ranks(request, launched, gpus);
}

std::string shared_gpu_note(const RankLayout& layout) {
  const std::string where =
      layout.gpus_used > 0 ? fmt::format("{} GPU(s)", layout.gpus_used) : std::string("their GPUs");
  return fmt::format(
      "# {} ranks share {}, {} per GPU (--ranks-per-gpu): the GPU time-slices them and NCCL "
      "connects them over sockets. Results check correctness; timings are NOT meaningful.",
      layout.world_size, where, layout.ranks_per_gpu);
}

int run_ranks(const RankRequest& request, const RankLayout& layout,
              const std::function<int(const RankInfo&)>& rank_main) {
  if (layout.launched) {
    if (layout.shares_gpus() && layout.launched->rank == 0) {
      std::printf("%s\n", shared_gpu_note(layout).c_str());
      std::fflush(stdout);
    }
    return rank_main(*layout.launched);
  }
  if (layout.shares_gpus()) {
    std::printf("%s\n", shared_gpu_note(layout).c_str());
    std::fflush(stdout);
  }
  LaunchOptions options = request.launch;
  options.ranks_per_gpu = layout.ranks_per_gpu;
  return launch_local_ranks(layout.world_size, rank_main, options);
}

}  // namespace kiln::comm
