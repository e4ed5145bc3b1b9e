// The -g N launcher's supervision, without a GPU: ranks are plain forked processes here.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "comm/local_launcher.hpp"

using kiln::comm::launch_local_ranks;
using kiln::comm::RankInfo;

TEST(LocalLauncher, EveryRankSeesItsOwnEnvironment) {
  const int code = launch_local_ranks(3, [](const RankInfo& info) {
    const char* rank = std::getenv("KILN_RANK");
    const char* size = std::getenv("KILN_WORLD_SIZE");
    const char* comm_id = std::getenv("NCCL_COMM_ID");
    const bool ok = rank && size && comm_id && std::stoi(rank) == info.rank &&
                    std::stoi(size) == 3 && std::string(comm_id).rfind("127.0.0.1:", 0) == 0;
    return ok ? 0 : 10 + info.rank;
  });
  EXPECT_EQ(code, 0);
}

TEST(LocalLauncher, ReportsTheFirstFailingRanksCode) {
  const int code =
      launch_local_ranks(2, [](const RankInfo& info) { return info.rank == 1 ? 7 : 0; });
  EXPECT_EQ(code, 7);
}

TEST(LocalLauncher, AnExceptionInARankBecomesExitCodeOne) {
  const int code =
      launch_local_ranks(1, [](const RankInfo&) -> int { throw std::runtime_error("boom"); });
  EXPECT_EQ(code, 1);
}

TEST(LocalLauncher, AKilledRankEndsTheOthersPromptly) {
  const auto start = std::chrono::steady_clock::now();
  kiln::comm::LaunchOptions options;
  options.grace_seconds = 1.0;
  const int code = launch_local_ranks(
      3,
      [](const RankInfo& info) {
        if (info.rank == 1) {
          std::this_thread::sleep_for(std::chrono::milliseconds(200));
          kill(getpid(), SIGKILL);
        }
        // The others would wait forever, as ranks stuck in a collective do.
        for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
        return 0;
      },
      options);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(code, 128 + SIGKILL);
  EXPECT_LT(seconds, 10.0);
}

TEST(LocalLauncher, DescribesHowAChildEnded) {
  EXPECT_EQ(kiln::comm::describe_wait_status(3 << 8), "exited with status 3");
  EXPECT_NE(kiln::comm::describe_wait_status(SIGKILL).find("signal 9"), std::string::npos);
}

TEST(LocalLauncher, RanksPastTheTimeLimitAreStoppedWith124) {
  const auto start = std::chrono::steady_clock::now();
  kiln::comm::LaunchOptions options;
  options.grace_seconds = 1.0;
  options.time_limit_seconds = 1.0;
  const int code = launch_local_ranks(
      2,
      [](const RankInfo&) {
        for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
        return 0;
      },
      options);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(code, 124);
  EXPECT_GE(seconds, 1.0);
  EXPECT_LT(seconds, 8.0);
}

TEST(LocalLauncher, RanksWithinTheTimeLimitAreUntouched) {
  kiln::comm::LaunchOptions options;
  options.time_limit_seconds = 30.0;
  EXPECT_EQ(launch_local_ranks(
                2, [](const RankInfo&) { return 0; }, options),
            0);
}

// Without a driver (a CPU machine like CI's) there is no GPU: 0, not an error. With a driver that
// fails, count_visible_gpus throws instead (not testable here).
TEST(CountVisibleGpus, NoDriverInstalledMeansNoGpu) {
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (driver != nullptr) {
    dlclose(driver);
    GTEST_SKIP() << "a CUDA driver is installed here";
  }
  EXPECT_EQ(kiln::comm::count_visible_gpus(), 0);
}
