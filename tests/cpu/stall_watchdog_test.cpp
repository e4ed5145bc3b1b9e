// The stall watchdog ends a process that stops making progress, naming the rank and the step,
// and leaves one that keeps making progress alone.
#include "core/stall_watchdog.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "core/error.hpp"

using kiln::core::StallWatchdog;

TEST(StallWatchdogDeathTest, EndsAStalledProcessNamingTheStep) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        StallWatchdog watchdog(1.0, 3);
        watchdog.progress("allgather 1M trial 2");
        std::this_thread::sleep_for(std::chrono::seconds(20));
        std::exit(0);
      },
      testing::ExitedWithCode(1),
      "rank 3: error: no progress for 1 s during 'allgather 1M trial 2'");
}

TEST(StallWatchdogDeathTest, ProgressKeepsTheProcessAlive) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        // A 1 s limit over 3 s of 100 ms steps: without progress() it would fire at 1 s; with it,
        // a step may overrun 10x on a loaded 2-core machine (0.5 s failed once beside a build).
        StallWatchdog watchdog(1.0, 0);
        for (int i = 0; i < 30; ++i) {
          watchdog.progress("step");
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        std::exit(0);
      },
      testing::ExitedWithCode(0), "");
}

TEST(StallWatchdog, RejectsANonPositiveLimit) {
  EXPECT_THROW(StallWatchdog(0.0, 0), kiln::UsageError);
  EXPECT_THROW(StallWatchdog(-1.0, 0), kiln::UsageError);
}
