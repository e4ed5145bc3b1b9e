// bench/process_device_memory on a GPU: the driver's figure for this process rises by what it
// allocates and falls back when it frees it (what a judge server's leak check relies on).
#include "bench/process_device_memory.hpp"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include "core/cuda_check.hpp"
#include "gpu_availability.hpp"

namespace kiln::bench {
namespace {

TEST(ProcessDeviceMemoryGpu, FollowsThisProcesssAllocations) {
  KILN_SKIP_UNLESS_GPUS(1);
  KILN_CUDA_CHECK(cudaFree(nullptr));  // a context, so that the process is listed
  ProcessDeviceMemory memory(0);
  const auto before = memory.read();
  if (!before) GTEST_SKIP() << "no per-process figure here: " << memory.why();
  constexpr std::size_t kBytes = std::size_t{3} << 30;
  void* block = nullptr;
  KILN_CUDA_CHECK(cudaMalloc(&block, kBytes));
  const auto during = memory.read();
  KILN_CUDA_CHECK(cudaFree(block));
  const auto after = memory.read();
  ASSERT_TRUE(during && after) << memory.why();
  EXPECT_GE(*during, *before + kBytes);
  EXPECT_LT(*after, *before + kBytes / 3) << "the freed block still counted";
}

}  // namespace
}  // namespace kiln::bench
