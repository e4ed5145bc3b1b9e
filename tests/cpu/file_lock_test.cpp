// core::ExclusiveFileLock: held while the object lives, released with it, exclusive between two
// holders in one process (each opens its own descriptor), and a clear error for a path that
// cannot be opened. The judge's turn on a GPU (evolve/candidate_evaluator.cpp) is one.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>

#include "core/error.hpp"
#include "core/file_lock.hpp"

namespace kiln::core {
namespace {

std::string lock_path(const char* name) {
  return (std::filesystem::path(::testing::TempDir()) / name).string();
}

TEST(ExclusiveFileLock, HeldWhileAliveReleasedAfter) {
  const std::string path = lock_path("kiln_file_lock_alive.lock");
  EXPECT_FALSE(ExclusiveFileLock::held_elsewhere(path));
  {
    const ExclusiveFileLock lock(path);
    EXPECT_TRUE(std::filesystem::exists(path));
    EXPECT_TRUE(ExclusiveFileLock::held_elsewhere(path));
  }
  EXPECT_FALSE(ExclusiveFileLock::held_elsewhere(path));
}

TEST(ExclusiveFileLock, ASecondHolderWaitsForTheFirst) {
  const std::string path = lock_path("kiln_file_lock_wait.lock");
  std::optional<ExclusiveFileLock> first(std::in_place, path);
  std::atomic<bool> second_holds{false};
  std::thread second([&] {
    const ExclusiveFileLock lock(path);
    second_holds = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(second_holds.load());  // still waiting: the first holds the lock
  first.reset();
  second.join();
  EXPECT_TRUE(second_holds.load());
}

TEST(ExclusiveFileLock, AnUnopenablePathIsAnErrorNamingIt) {
  const std::string path = lock_path("no_such_folder/x.lock");
  try {
    const ExclusiveFileLock lock(path);
    FAIL() << "no error for " << path;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kiln::core
