// tests/gpu/child_process.hpp: the GPU tests' plain child process (the body's code comes back, a
// throw is 1, a signal 128 + its number, and nothing the child does reaches the parent's memory).
#include "../gpu/child_process.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <stdexcept>

namespace {

TEST(ChildProcess, ReturnsTheBodysCodeAndKeepsItsEffectsInTheChild) {
  int touched = 0;
  EXPECT_EQ(kiln::testing::run_in_child_process([&] {
              touched = 7;
              return 0;
            }),
            0);
  EXPECT_EQ(touched, 0);
  EXPECT_EQ(kiln::testing::run_in_child_process([] { return 3; }), 3);
}

TEST(ChildProcess, AThrowIsOneAndASignalIs128PlusItsNumber) {
  EXPECT_EQ(kiln::testing::run_in_child_process([]() -> int { throw std::runtime_error("x"); }), 1);
  EXPECT_EQ(kiln::testing::run_in_child_process([] {
              std::raise(SIGKILL);
              return 0;
            }),
            128 + SIGKILL);
}

}  // namespace
