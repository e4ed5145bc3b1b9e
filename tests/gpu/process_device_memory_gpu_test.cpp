// bench/process_device_memory on a GPU: the driver's figure for this process rises by what it
// allocates and falls back when it frees it (what a judge server's leak check relies on).
// The body runs in a forked rank like every other GPU test: a test process that made a CUDA
// context itself could not fork working ranks for the tests after it (the one fork rule,
// comm/local_launcher.hpp).
#include "bench/process_device_memory.hpp"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdio>

#include "core/cuda_check.hpp"
#include "gpu_availability.hpp"

namespace kiln::bench {
namespace {

constexpr int kNoFigure = 77;  // the rank's exit status when the driver gives no per-process figure

TEST(ProcessDeviceMemoryGpu, FollowsThisProcesssAllocations) {
  KILN_SKIP_UNLESS_GPUS(1);
  const int rc = kiln::testing::launch_test_ranks(1, [](const comm::RankInfo&) {
    KILN_CUDA_CHECK(cudaFree(nullptr));  // a context, so that the process is listed
    ProcessDeviceMemory memory(0);
    const auto before = memory.read();
    if (!before) {
      std::fprintf(stderr, "no per-process figure here: %s\n", memory.why().c_str());
      return kNoFigure;
    }
    constexpr std::size_t kBytes = std::size_t{3} << 30;
    void* block = nullptr;
    KILN_CUDA_CHECK(cudaMalloc(&block, kBytes));
    const auto during = memory.read();
    KILN_CUDA_CHECK(cudaFree(block));
    const auto after = memory.read();
    if (!during || !after) {
      std::fprintf(stderr, "no figure during or after: %s\n", memory.why().c_str());
      return 1;
    }
    std::fprintf(stderr, "before %zu, during %zu, after %zu bytes\n", *before, *during, *after);
    int failures = 0;
    if (*during < *before + kBytes) ++failures;      // the block counted
    if (*after >= *before + kBytes / 3) ++failures;  // the freed block no longer counted
    return failures;
  });
  if (rc == kNoFigure) GTEST_SKIP() << "no per-process figure here (the rank's log says why)";
  EXPECT_EQ(rc, 0);
}

}  // namespace
}  // namespace kiln::bench
