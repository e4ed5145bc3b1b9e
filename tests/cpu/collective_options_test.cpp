#include <gtest/gtest.h>

#include <string>

#include "benchmarks/collective/collective_bench.hpp"
#include "core/error.hpp"

using kiln::benchmarks::CollectiveBenchOptions;
using kiln::benchmarks::validate;

namespace {

// Expects validate to throw a UsageError whose message contains `flag`.
void expect_rejected(const CollectiveBenchOptions& options, int visible, const std::string& flag) {
  try {
    validate(options, visible);
    FAIL() << "accepted options that should name " << flag;
  } catch (const kiln::UsageError& error) {
    EXPECT_NE(std::string(error.what()).find(flag), std::string::npos) << error.what();
  }
}

CollectiveBenchOptions valid() {
  CollectiveBenchOptions o;
  o.world_size = 4;
  return o;
}

}  // namespace

TEST(CollectiveOptions, DefaultsAreValid) {
  EXPECT_NO_THROW(validate(valid(), 4));
}

TEST(CollectiveOptions, EachBadFlagIsNamed) {
  auto o = valid();
  o.min_bytes = 0;
  expect_rejected(o, 4, "-b 0");
  o = valid();
  o.max_bytes = o.min_bytes - 1;
  expect_rejected(o, 4, "-e");
  o = valid();
  o.factor = 1;
  expect_rejected(o, 4, "-f 1");
  o = valid();
  o.iterations = 0;
  expect_rejected(o, 4, "-n 0");
  o = valid();
  o.warmup = -1;
  expect_rejected(o, 4, "-w -1");
  o = valid();
  o.check = 2;
  expect_rejected(o, 4, "-c 2");
  o = valid();
  o.timeout_seconds = 0;
  expect_rejected(o, 4, "--timeout");
}

TEST(CollectiveOptions, GpuCountIsCheckedAgainstTheHost) {
  auto o = valid();
  o.world_size = 9;
  expect_rejected(o, 4, "-g 9: this host has 4 visible GPU(s); accepted range 1..4");
  o.world_size = 1;
  expect_rejected(o, 0, "no CUDA GPU");
  o.world_size = 9;
  EXPECT_NO_THROW(validate(o, -1));  // external launchers place ranks themselves
}

TEST(CollectiveOptions, FlagErrorsComeBeforeTheGpuCheck) {
  auto o = valid();
  o.min_bytes = 0;
  expect_rejected(o, 0, "-b 0");
}

TEST(CollectiveOptions, SmallestSizeMustHoldOneElementPerRank) {
  auto o = valid();
  o.op = kiln::comm::CollectiveOp::kAllGather;
  o.dtype = kiln::core::DType::kFp32;
  o.min_bytes = 8;  // 2 floats for 4 ranks
  expect_rejected(o, 4, "need at least 16 bytes");
  o.min_bytes = 16;
  EXPECT_NO_THROW(validate(o, 4));
}
