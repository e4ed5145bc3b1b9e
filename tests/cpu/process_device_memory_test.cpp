// bench/process_device_memory: a process's memory is the sum of its own rows of the driver's list,
// and unknown when it is not listed or a row has no figure (never another process's bytes).
#include "bench/process_device_memory.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace kiln::bench {
namespace {

TEST(ProcessDeviceMemory, OnlyTheProcesssOwnRowsCount) {
  const std::vector<ProcessMemoryRow> rows = {{10, 5000}, {11, 70}, {10, 300}, {12, 9}};
  EXPECT_EQ(memory_of_process(rows, 10), 5300u);  // listed once per GPU instance: summed
  EXPECT_EQ(memory_of_process(rows, 11), 70u);
  EXPECT_FALSE(memory_of_process(rows, 13).has_value());  // not listed (another PID namespace)
  EXPECT_FALSE(memory_of_process({}, 10).has_value());
}

TEST(ProcessDeviceMemory, ARowWithoutAFigureMakesItUnknown) {
  const std::vector<ProcessMemoryRow> rows = {{10, 5000}, {10, kNotAvailable}, {11, 7}};
  EXPECT_FALSE(memory_of_process(rows, 10).has_value());
  EXPECT_EQ(memory_of_process(rows, 11), 7u);
}

TEST(ProcessDeviceMemory, WithoutTheDriverItSaysWhy) {
  // On a machine with a GPU the figure may exist; either way read() answers and why() explains
  // a missing one.
  ProcessDeviceMemory memory(0);
  const auto held = memory.read();
  if (!held)
    EXPECT_FALSE(memory.why().empty());
  else
    EXPECT_TRUE(memory.why().empty());
}

}  // namespace
}  // namespace kiln::bench
