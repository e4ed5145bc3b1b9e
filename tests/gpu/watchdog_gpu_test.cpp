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

using kiln::comm::CollectiveOp;
using kiln::comm::NcclMode;

constexpr double kTimeout = 2.0;
constexpr int kTimedOutAsExpected = 42;

void allreduce(kiln::comm::Communicator& comm, kiln::core::DeviceBuffer& buffer,
               cudaStream_t stream) {
  const auto counts =
      kiln::comm::counts_for(CollectiveOp::kAllReduce, buffer.bytes(), 4, comm.size());
  kiln::comm::enqueue_collective(comm, CollectiveOp::kAllReduce, buffer.data(), buffer.data(),
                                 counts, kiln::core::DType::kFp32, stream);
  comm.wait(stream, "allreduce under test");
}

// Rank 1 stops calling collectives (after one joint allreduce when `warm`); rank 0 must give up
// within the timeout: kiln::TimeoutError naming the rank and the allreduce, or (a blocking NCCL
// call stuck connecting to the silent peer) the watchdog thread ending the process with exit 1.
int rank_main(const kiln::comm::RankInfo& info, NcclMode mode, bool warm) {
  kiln::comm::Communicator comm(info, kTimeout, mode);
  kiln::core::Stream stream;
  kiln::core::DeviceBuffer buffer(1 << 20);
  if (warm) allreduce(comm, buffer, stream);
  if (comm.rank() == 1) {
    std::this_thread::sleep_for(std::chrono::seconds(30));  // the launcher ends this rank
    return 0;
  }
  try {
    allreduce(comm, buffer, stream);
  } catch (const kiln::TimeoutError& error) {
    const std::string text = error.what();
    std::fprintf(stderr, "rank 0 timed out: %s\n", text.c_str());
    const bool named =
        text.find("rank 0") != std::string::npos && text.find("allreduce") != std::string::npos;
    return named ? kTimedOutAsExpected : 2;
  }
  return 3;  // completed although its peer never called: impossible for a real allreduce
}

// Returns the launcher's exit code; fails the test when the ranks took far longer than the timeout.
int run_two_ranks(NcclMode mode, bool warm) {
  kiln::comm::LaunchOptions options;
  options.grace_seconds = 0.5;
  const auto start = std::chrono::steady_clock::now();
  const int code = kiln::testing::launch_test_ranks(
      2, [=](const kiln::comm::RankInfo& info) { return rank_main(info, mode, warm); }, options);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, kTimeout + 10.0) << "the ranks took too long to give up";
  return code;
}

}  // namespace

TEST(WatchdogGpu, WaitTimesOutWhenAPeerStopsBlockingDataPath) {
  KILN_SKIP_UNLESS_RANKS(2);
  EXPECT_EQ(run_two_ranks(NcclMode::kBlockingDataPath, true), kTimedOutAsExpected);
}

TEST(WatchdogGpu, WaitTimesOutWhenAPeerStopsNonBlocking) {
  KILN_SKIP_UNLESS_RANKS(2);
  EXPECT_EQ(run_two_ranks(NcclMode::kNonBlocking, true), kTimedOutAsExpected);
}

TEST(WatchdogGpu, FirstCallToASilentPeerEndsWithinTheTimeout) {
  KILN_SKIP_UNLESS_RANKS(2);
  // Non-blocking: the call's ncclInProgress is polled and times out as an exception.
  EXPECT_EQ(run_two_ranks(NcclMode::kNonBlocking, false), kTimedOutAsExpected);
  // Blocking: NCCL blocks inside the call while connecting; the watchdog thread exits the process
  // with status 1 (or the wait times out, if the call returned).
  const int code = run_two_ranks(NcclMode::kBlockingDataPath, false);
  EXPECT_TRUE(code == 1 || code == kTimedOutAsExpected) << "exit code " << code;
}
