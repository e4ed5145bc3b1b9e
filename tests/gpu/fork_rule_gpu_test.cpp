// The fork rule on a GPU: a process that initialized CUDA is refused when it launches ranks, with
// the cause named, instead of each rank failing with "initialization error" (H200, 2026-11-29: a
// GPU test's ranks failed so after an earlier test in the same process had made a context).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "comm/local_launcher.hpp"
#include "core/cuda_check.hpp"
#include "core/error.hpp"
#include "gpu_availability.hpp"

namespace {

using namespace kiln;

TEST(ForkRuleGpu, RanksFromAProcessThatInitializedCudaAreRefusedWithTheCause) {
  KILN_SKIP_UNLESS_GPUS(1);
  // In a rank (this test process stays CUDA-free for the tests after it): make a context, then
  // try to launch ranks from there.
  const int rc = kiln::testing::launch_test_ranks(1, [](const comm::RankInfo&) {
    KILN_CUDA_CHECK(cudaFree(nullptr));
    try {
      (void)comm::launch_local_ranks(1, [](const comm::RankInfo&) { return 0; });
    } catch (const Error& e) {
      const std::string what = e.what();
      std::fprintf(stderr, "refused: %s\n", what.c_str());
      return what.find("initialized CUDA before forking") != std::string::npos ? 0 : 2;
    }
    std::fprintf(stderr, "ranks were launched from a process with a CUDA context\n");
    return 1;
  });
  EXPECT_EQ(rc, 0);
}

}  // namespace
