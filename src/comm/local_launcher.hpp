// kiln's own `-g N` launcher: one process per GPU on this host, forked before any CUDA call.
// The launcher supervises its ranks: when one dies or fails, it says which and how, and ends the
// others so nothing is left hanging in a collective.
#pragma once

#include <functional>
#include <string>

#include "comm/launch_env.hpp"

namespace kiln::comm {

struct LaunchOptions {
  // After the first rank fails, how long the others get to finish on their own (their watchdogs
  // print what they were waiting for) before they are sent SIGTERM, then SIGKILL.
  double grace_seconds = 3.0;
  // Wall-clock limit for the whole launch (0: none): past it every rank still running is told
  // so, sent SIGTERM, then SIGKILL; the launch then returns 124 (as timeout(1) does).
  double time_limit_seconds = 0.0;
  // Ranks that share each GPU (RankInfo::ranks_per_gpu; exported as KILN_RANKS_PER_GPU).
  int ranks_per_gpu = 1;
};

// Forks `world_size` ranks, each running `rank_main(info)` and exiting with its return value
// (an exception escaping rank_main is printed and becomes exit code 1). Sets KILN_RANK,
// KILN_WORLD_SIZE, KILN_LOCAL_RANK, KILN_RANKS_PER_GPU and NCCL_COMM_ID (127.0.0.1 and a free
// port) in each child.
// Returns 0 when every rank returned 0, else the first failing rank's code (128 + signal when a
// signal ended it). The calling process must not have initialised CUDA.
int launch_local_ranks(int world_size, const std::function<int(const RankInfo&)>& rank_main,
                       const LaunchOptions& options = {});

// Number of CUDA devices visible, counted in a short-lived child process so that the caller stays
// free of CUDA (a process that initialised CUDA cannot fork working ranks). 0 when there is no
// device or no driver installed; throws kiln::Error naming CUDA's error when CUDA is installed but
// fails (an old driver, a device in a bad state): that is not "no GPU".
int count_visible_gpus();

// A free TCP port on loopback, asked of the kernel (for NCCL_COMM_ID). A small race remains
// (another program may take it before rank 0 listens); NCCL then fails to bind and says so.
int free_loopback_port();

// Describes how a child ended, e.g. "was killed by signal 9 (Killed)" or "exited with status 1".
std::string describe_wait_status(int status);

}  // namespace kiln::comm
