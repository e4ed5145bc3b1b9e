// The flag that every multi-rank subcommand shares beside its -g: several ranks on one GPU.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

#include "comm/launch_env.hpp"
#include "comm/rank_launch.hpp"

namespace kiln::app {

inline void add_ranks_per_gpu_flag(CLI::App* cmd, int& ranks_per_gpu) {
  cmd->add_option("--ranks-per-gpu", ranks_per_gpu,
                  "ranks that share each GPU, for correctness runs on fewer GPUs than ranks (the "
                  "GPU time-slices them, NCCL connects them over loopback sockets: timings are "
                  "not meaningful); default 1, or KILN_RANKS_PER_GPU under mpirun/srun/torchrun")
      ->check(CLI::Range(1, comm::kMaxRanksPerGpu));
}

// The launch every multi-rank benchmark shares: the options are built and checked for the flags'
// rank count first (flag errors before any GPU work), then -g / --ranks-per-gpu are resolved
// against the GPUs or the outside launcher, the options rebuilt for that world and `rank_main`
// run on every rank.
template <typename Options>
int launch_benchmark_ranks(
    const std::string& command, int gpus, int ranks_per_gpu,
    const std::function<Options(int world)>& options_for,
    const std::function<void(const Options&)>& validate,
    const std::function<int(const comm::RankInfo&, const Options&)>& rank_main) {
  validate(options_for(gpus > 0 ? gpus : 1));
  comm::RankRequest request;
  request.command = command;
  request.gpus = gpus;
  request.ranks_per_gpu = ranks_per_gpu;
  const comm::RankLayout layout = comm::resolve_ranks(request);
  const Options options = options_for(layout.world_size);
  validate(options);
  return comm::run_ranks(request, layout,
                         [&](const comm::RankInfo& info) { return rank_main(info, options); });
}

}  // namespace kiln::app
