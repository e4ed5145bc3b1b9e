// Screened timing (bench/screened_timing.hpp) on a GPU: a steady kernel is settled after
// kSettledCalls timed calls and stops there; a kernel whose calls alternate between two lengths
// takes every call asked for; a call of a second or more, or one far off the pace, is the only
// sample.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <functional>
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

// Screened samples of calls that each sleep `sleep_ns(call index)`, and how many calls were made.
struct Screened {
  std::vector<float> samples;
  int calls = 0;
};
Screened screen_sleeps(comm::Communicator& comm, cudaStream_t stream,
                       const std::function<std::uint64_t(int)>& sleep_ns, const char* what,
                       double pace_seconds, std::string& failure) {
  Screened out;
  out.samples = bench::screened_samples(
      comm, stream, 3, 10, 8u << 20,
      [&] {
        core::enqueue_sleep(sleep_ns(out.calls++), stream);
        return std::string();
      },
      failure, what, pace_seconds);
  std::fprintf(stderr, "%s: %zu samples, %d calls\n", what, out.samples.size(), out.calls);
  return out;
}

TEST(ScreenedTimingGpu, SteadyCallsStopEarlyUnsteadyOnesTakeEveryCall) {
  KILN_SKIP_UNLESS_GPUS(1);
  const int rc = kiln::testing::launch_test_ranks(1, [](const comm::RankInfo& info) {
    comm::Communicator comm(info, 60.0);
    core::Stream stream;
    int failures = 0;
    std::string failure;
    // One call first, so that no timed case pays the sleep kernel's loading.
    core::enqueue_sleep(1000, stream.get());
    KILN_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    // 2 ms a call, every call (the sleep overshoots by up to ~4 us: 0.2%): settled after the
    // first call, 3 warm-up calls and kSettledCalls timed ones.
    const Screened steady = screen_sleeps(
        comm, stream.get(), [](int) { return 2000000; }, "steady", 0.0, failure);
    if (steady.samples.size() != static_cast<std::size_t>(bench::kSettledCalls) ||
        steady.calls != 1 + 3 + bench::kSettledCalls)
      ++failures;
    // 2 and 3 ms in turn: never within 2%, so all 10 timed calls.
    const Screened unsteady = screen_sleeps(
        comm, stream.get(), [](int i) { return i % 2 ? 3000000 : 2000000; }, "unsteady", 0.0,
        failure);
    if (unsteady.samples.size() != 10 || unsteady.calls != 14) ++failures;
    // A first call of over a second: the only sample.
    const Screened slow = screen_sleeps(
        comm, stream.get(), [](int) { return 1100000000ull; }, "slow", 0.0, failure);
    if (slow.samples.size() != 1 || slow.calls != 1 || slow.samples[0] < 1.0e6f) ++failures;
    // Against a 200-us pace, a 5-ms call is far off it (over 10 x 0.2 + 1 ms): the only sample.
    const Screened far = screen_sleeps(
        comm, stream.get(), [](int) { return 5000000; }, "far off the pace", 200e-6, failure);
    if (far.samples.size() != 1 || far.calls != 1) ++failures;
    if (!failure.empty()) ++failures;
    return failures;
  });
  EXPECT_EQ(rc, 0);
}

}  // namespace
