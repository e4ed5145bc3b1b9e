// The one way a multi-rank subcommand gets its ranks: kiln's own `-g N` launcher, or the ranks an
// outside launcher (mpirun, srun, torchrun) started, optionally several ranks on each GPU
// (`--ranks-per-gpu`, for correctness runs on a machine with fewer GPUs than ranks).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "comm/launch_env.hpp"
#include "comm/local_launcher.hpp"

namespace kiln::comm {

struct RankRequest {
  std::string command;    // "kiln bench suite": named in errors
  int gpus = 0;           // -g: ranks to start; 0 = every visible GPU times ranks_per_gpu
  int ranks_per_gpu = 0;  // --ranks-per-gpu; 0 = not given (1, or KILN_RANKS_PER_GPU under a
                          // launcher)
  bool allow_shared_gpus = true;       // false where the result is a speed measurement that is kept
  bool allow_outside_launcher = true;  // false where kiln must supervise the ranks itself
  LaunchOptions launch;                // grace period and time limit of kiln's own launcher
};

struct RankLayout {
  int world_size = 1;
  int ranks_per_gpu = 1;  // effective: never more than world_size
  int gpus_used = 1;
  std::optional<RankInfo> launched;  // this process's rank, when an outside launcher started it
  bool shares_gpus() const { return ranks_per_gpu > 1; }
};

// Host logic (unit-tested): checks -g and --ranks-per-gpu against the outside launcher's ranks or
// the visible GPUs and returns the layout. Throws kiln::UsageError naming the flag and the
// accepted range (also when no GPU is visible).
RankLayout plan_ranks(const RankRequest& request, const std::optional<RankInfo>& launched,
                      int visible_gpus);

// plan_ranks for this process: reads the launcher's environment, else counts the visible GPUs in
// a short-lived child (this process stays free of CUDA so that it can fork ranks).
RankLayout resolve_ranks(const RankRequest& request);

// The line every shared-GPU run prints once: timings taken so are not meaningful.
std::string shared_gpu_note(const RankLayout& layout);

// Runs `rank_main` on the layout's ranks: on this process's rank under an outside launcher, else
// on forked ranks (launch_local_ranks). Prints shared_gpu_note once (rank 0 / the launcher).
int run_ranks(const RankRequest& request, const RankLayout& layout,
              const std::function<int(const RankInfo&)>& rank_main);

}  // namespace kiln::comm
