// The one interleaved timer (core::time_rounds) on a GPU: the launch order it promises, one time
// per timed iteration per round, and times that tell a large copy from a small one.
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "comm/local_launcher.hpp"
#include "core/device_buffer.hpp"
#include "core/event_timer.hpp"
#include "core/stats.hpp"
#include "core/stream.hpp"
#include "gpu_availability.hpp"

namespace {

using namespace kiln;

int check_time_rounds(const comm::RankInfo&) {
  core::Stream stream;
  core::DeviceBuffer big(256u << 20), small(8u << 20);
  std::vector<std::pair<int, int>> calls;
  const core::RoundsOptions options{3, 4, 3};
  const auto pooled = core::time_rounds(
      stream.get(), 2,
      [&](int v, int i) {
        calls.emplace_back(v, i);
        core::DeviceBuffer& b = v == 0 ? big : small;
        KILN_CUDA_CHECK(cudaMemsetAsync(b.data(), v + 1, b.bytes(), stream.get()));
      },
      options);
  int failures = 0;
  // Round r: variant r % 2 first; warm-up 3 before the first round, 2 later; then 4 timed.
  std::vector<std::pair<int, int>> expected;
  for (int round = 0; round < 3; ++round) {
    for (int v : core::round_order(2, round)) {
      for (int w = 0; w < (round == 0 ? 3 : 2); ++w) expected.emplace_back(v, w);
      for (int k = 0; k < 4; ++k) expected.emplace_back(v, k);
    }
  }
  if (calls != expected) {
    std::fprintf(stderr, "launch order differs from round_order\n");
    ++failures;
  }
  if (pooled.size() != 2 || pooled[0].size() != 12 || pooled[1].size() != 12) {
    std::fprintf(stderr, "expected 12 times per variant\n");
    return failures + 1;
  }
  const double big_us = core::summarize(std::span<const float>(pooled[0])).median;
  const double small_us = core::summarize(std::span<const float>(pooled[1])).median;
  std::fprintf(stderr, "memset 256 MiB %.1f us, 8 MiB %.1f us\n", big_us, small_us);
  // 32x the bytes: far more than twice the time on any GPU.
  if (!(big_us > 2.0 * small_us && small_us > 0)) ++failures;
  return failures == 0 ? 0 : 1;
}

TEST(TimingGpu, TimeRoundsInterleavesAndTimesEveryIteration) {
  KILN_SKIP_UNLESS_GPUS(1);
  EXPECT_EQ(comm::launch_local_ranks(1, check_time_rounds), 0);
}

}  // namespace
