// Screened timing (bench/screened_timing.hpp) on a GPU: a steady kernel is settled after
// kSettledCalls timed calls and stops there; a kernel whose calls alternate between two lengths
// takes every call asked for; a call of a second or more, or one far off the pace, is the only
// sample.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "bench/screened_timing.hpp"
#include "comm/communicator.hpp"
#include "comm/local_launcher.hpp"
#include "core/cuda_check.hpp"
#include "core/sleep.hpp"
#include "core/stream.hpp"
#include "gpu_availability.hpp"

namespace {

using namespace kiln;

TEST(ScreenedTimingGpu, SteadyCallsStopEarlyUnsteadyOnesTakeEveryCall) {
  KILN_SKIP_UNLESS_GPUS(1);
  const int rc = kiln::testing::launch_test_ranks(1, [](const comm::RankInfo& info) {
    comm::Communicator comm(info, 60.0);
    core::Stream stream;
    int failures = 0, call_count = 0;
    std::string failure;
    const std::size_t l2 = 8u << 20;
    // 2 ms a call, every call (the sleep overshoots by up to ~4 us: 0.2%). One call first, so that
    // no timed case pays the sleep kernel's loading.
    core::enqueue_sleep(1000, stream.get());
    KILN_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    const auto steady = bench::screened_samples(
        comm, stream.get(), 3, 10, l2,
        [&] {
          ++call_count;
          core::enqueue_sleep(2000000, stream.get());
          return std::string();
        },
        failure, "steady");
    std::fprintf(stderr, "steady: %zu samples, %d calls\n", steady.size(), call_count);
    if (steady.size() != static_cast<std::size_t>(bench::kSettledCalls)) ++failures;
    if (call_count != 1 + 3 + bench::kSettledCalls) ++failures;
    // 2 and 3 ms in turn: never within 2%, so all 10 timed calls.
    call_count = 0;
    const auto unsteady = bench::screened_samples(
        comm, stream.get(), 3, 10, l2,
        [&] {
          core::enqueue_sleep(call_count++ % 2 ? 3000000 : 2000000, stream.get());
          return std::string();
        },
        failure, "unsteady");
    std::fprintf(stderr, "unsteady: %zu samples, %d calls\n", unsteady.size(), call_count);
    if (unsteady.size() != 10 || call_count != 14) ++failures;
    // A first call of over a second: the only sample.
    call_count = 0;
    const auto slow = bench::screened_samples(
        comm, stream.get(), 3, 10, l2,
        [&] {
          ++call_count;
          core::enqueue_sleep(1100000000ull, stream.get());
          return std::string();
        },
        failure, "slow");
    if (slow.size() != 1 || call_count != 1 || slow[0] < 1.0e6f) ++failures;
    // Against a 200-us pace, a 5-ms call is far off it (over 10 x 0.2 + 1 ms): the only sample.
    call_count = 0;
    const auto far = bench::screened_samples(
        comm, stream.get(), 3, 10, l2,
        [&] {
          ++call_count;
          core::enqueue_sleep(5000000, stream.get());
          return std::string();
        },
        failure, "far off the pace", 200e-6);
    std::fprintf(stderr, "far off the pace: %zu samples, %d calls\n", far.size(), call_count);
    if (far.size() != 1 || call_count != 1) ++failures;
    if (!failure.empty()) ++failures;
    return failures;
  });
  EXPECT_EQ(rc, 0);
}

}  // namespace
