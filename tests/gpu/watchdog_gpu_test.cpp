// The watchdog on real GPUs: when one rank stops calling collectives, the others must abort their
// communicator within the timeout and raise kiln::TimeoutError naming the rank and the operation.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "comm/collective.hpp"
#include "comm/communicator.hpp"
#include "core/device_buffer.hpp"
#include "core/error.hpp"
#include "core/stream.hpp"
#include "gpu_availability.hpp"

namespace {

using kiln::comm::NcclMode;

// Rank 1 joins, then sleeps instead of calling the allreduce; rank 0 must time out in ~2 s.
int rank_main(const kiln::comm::RankInfo& info, NcclMode mode) {
  constexpr double kTimeout = 2.0;
  kiln::comm::Communicator comm(info, kTimeout, mode);
  kiln::core::Stream stream;
  kiln::core::DeviceBuffer buffer(1 << 20);
  if (comm.rank() == 1) {
    std::this_thread::sleep_for(std::chrono::seconds(30));  // the launcher ends this rank
    return 0;
  }
  const auto start = std::chrono::steady_clock::now();
  try {
    const auto counts = kiln::comm::counts_for(kiln::comm::CollectiveOp::kAllReduce, buffer.bytes(),
                                               4, comm.size());
    kiln::comm::enqueue_collective(comm, kiln::comm::CollectiveOp::kAllReduce, buffer.data(),
                                   buffer.data(), counts, kiln::core::DType::kFp32, stream);
    comm.wait(stream, "allreduce under test");
  } catch (const kiln::TimeoutError& error) {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::string text = error.what();
    const bool named = text.find("rank 0") != std::string::npos &&
                       text.find("allreduce under test") != std::string::npos;
    std::fprintf(stderr, "rank 0 timed out after %.1f s: %s\n", seconds, text.c_str());
    return named && seconds >= kTimeout && seconds < kTimeout + 5.0 ? 42 : 2;
  }
  return 3;  // completed although its peer never called: impossible for a real allreduce
}

void expect_timeout(NcclMode mode) {
  kiln::comm::LaunchOptions options;
  options.grace_seconds = 0.5;
  const int code = kiln::comm::launch_local_ranks(
      2, [mode](const kiln::comm::RankInfo& info) { return rank_main(info, mode); }, options);
  EXPECT_EQ(code, 42) << "42: rank 0 raised TimeoutError in time naming itself and the operation";
}

}  // namespace

TEST(WatchdogGpu, AbortsWhenAPeerStopsCallingBlockingDataPath) {
  KILN_SKIP_UNLESS_GPUS(2);
  expect_timeout(NcclMode::kBlockingDataPath);
}

TEST(WatchdogGpu, AbortsWhenAPeerStopsCallingNonBlocking) {
  KILN_SKIP_UNLESS_GPUS(2);
  expect_timeout(NcclMode::kNonBlocking);
}
