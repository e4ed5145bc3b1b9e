// evolve::HeavyBuildSlots: half the cores for CUTLASS builds while a light search runs, every
// core when none does, and a raised limit starts the builds that were waiting.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "evolve/build_slots.hpp"

namespace kiln::evolve {
namespace {

using namespace std::chrono_literals;

TEST(EvolveBuildSlots, HalfTheCoresWhileALightSearchRunsEveryCoreWithout) {
  HeavyBuildSlots slots(8);
  EXPECT_EQ(slots.limit(), 8);
  slots.set_light_searches(3);
  EXPECT_EQ(slots.limit(), 4);
  slots.set_light_searches(0);
  EXPECT_EQ(slots.limit(), 8);
  HeavyBuildSlots one(1);
  one.set_light_searches(1);
  EXPECT_EQ(one.limit(), 1);  // never zero
}

TEST(EvolveBuildSlots, WaitingBuildsStartWhenTheLightSearchesEnd) {
  HeavyBuildSlots slots(4);
  slots.set_light_searches(1);  // 2 at once
  std::atomic<int> running{0}, most{0}, finished{0};
  std::atomic<bool> go_on{false};
  std::vector<std::thread> builds;
  for (int b = 0; b < 4; ++b)
    builds.emplace_back([&] {
      const HeavyBuildSlots::Held held(slots, true);
      const int now = ++running;
      for (int seen = most; now > seen && !most.compare_exchange_weak(seen, now);) {
      }
      while (!go_on) std::this_thread::sleep_for(1ms);
      --running;
      ++finished;
    });
  // Two hold slots; two wait.
  for (int i = 0; i < 2000 && slots.in_use() < 2; ++i) std::this_thread::sleep_for(1ms);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(slots.in_use(), 2);
  EXPECT_EQ(running.load(), 2);
  slots.set_light_searches(0);  // every core: the waiting two start
  for (int i = 0; i < 2000 && slots.in_use() < 4; ++i) std::this_thread::sleep_for(1ms);
  EXPECT_EQ(slots.in_use(), 4);
  go_on = true;
  for (std::thread& t : builds) t.join();
  EXPECT_EQ(finished.load(), 4);
  EXPECT_EQ(most.load(), 4);
  EXPECT_EQ(slots.in_use(), 0);
  // A light build holds nothing.
  {
    const HeavyBuildSlots::Held light(slots, false);
    EXPECT_EQ(slots.in_use(), 0);
  }
}

}  // namespace
}  // namespace kiln::evolve
