// GPU tests run their GPU work in forked ranks. A test of N ranks runs on N GPUs where there are
// that many, else with several ranks sharing each GPU (the --ranks-per-gpu mode: correctness, not
// speed), and skips with one line only where no GPU is visible. KILN_TEST_RANKS_PER_GPU overrides
// the choice: 0 never shares (too few GPUs then skips), k >= 1 puts up to k ranks on each GPU.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

#include "comm/launch_env.hpp"
#include "comm/local_launcher.hpp"

namespace kiln::testing {

inline int visible_gpus() {
  static const int count =
      comm::count_visible_gpus();  // counted in a child: this process stays CUDA-free
  return count;
}

// Ranks per GPU for a test of `world` ranks here; 0 when it cannot run.
inline int test_ranks_per_gpu(int world) {
  const int gpus = visible_gpus();
  if (gpus < 1) return 0;
  const int needed = (world + gpus - 1) / gpus;
  if (const char* forced = std::getenv("KILN_TEST_RANKS_PER_GPU")) {
    const int k = std::atoi(forced);
    if (k <= 0) return needed == 1 ? 1 : 0;
    return k >= needed ? std::min(k, world) : 0;
  }
  return std::min(needed, comm::kMaxRanksPerGpu);
}

inline std::string skip_reason(int world) {
  return "needs " + std::to_string(world) + " rank(s): " + std::to_string(visible_gpus()) +
         " GPU(s) visible, KILN_TEST_RANKS_PER_GPU=" +
         (std::getenv("KILN_TEST_RANKS_PER_GPU") ? std::getenv("KILN_TEST_RANKS_PER_GPU")
                                                 : "(unset)");
}

// Launches `world` ranks as this host allows (call after KILN_SKIP_UNLESS_RANKS(world)).
inline int launch_test_ranks(int world, const std::function<int(const comm::RankInfo&)>& body,
                             comm::LaunchOptions options = {}) {
  options.ranks_per_gpu = std::max(test_ranks_per_gpu(world), 1);
  if (options.ranks_per_gpu > 1) {
    std::printf("[ SHARED   ] %d ranks, %d per GPU, on %d visible GPU(s)\n", world,
                options.ranks_per_gpu, visible_gpus());
    std::fflush(stdout);
  }
  return comm::launch_local_ranks(world, body, options);
}

// The flag that gives `kiln ... -g world` the same layout ("" when every rank has its own GPU).
inline std::string ranks_per_gpu_flag(int world) {
  const int k = test_ranks_per_gpu(world);
  return k > 1 ? " --ranks-per-gpu " + std::to_string(k) : std::string();
}

}  // namespace kiln::testing

// A test whose GPU work runs on one rank.
#define KILN_SKIP_UNLESS_GPUS(n)                                                        \
  do {                                                                                  \
    if (::kiln::testing::visible_gpus() < (n))                                          \
      GTEST_SKIP() << "needs " << (n) << " GPU(s), " << ::kiln::testing::visible_gpus() \
                   << " visible";                                                       \
  } while (0)

// A test of n ranks: runs wherever launch_test_ranks can place them.
#define KILN_SKIP_UNLESS_RANKS(n)                      \
  do {                                                 \
    if (::kiln::testing::test_ranks_per_gpu(n) == 0)   \
      GTEST_SKIP() << ::kiln::testing::skip_reason(n); \
  } while (0)
