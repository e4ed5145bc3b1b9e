// `kiln evolve set`'s order: the heaviest problems first, under the cap on heavy ones running.
#include "evolve/set_order.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kiln::evolve {
namespace {

// Weight by the name's first letter: A(ttention) 2, M(atmul) 1, the rest 0.
int weight(const std::string& name) {
  return name[0] == 'A' ? 2 : name[0] == 'M' ? 1 : 0;
}

TEST(EvolveSetOrder, HeaviestFirstAndEqualWeightsKeepTheirOrder) {
  // The registry's order of KernelBench level 1: matmuls first, light ones, attention near the end.
  EXPECT_EQ(longest_first({"M1", "M2", "L1", "L2", "A1", "L3"}, weight),
            (std::vector<std::string>{"A1", "M1", "M2", "L1", "L2", "L3"}));
  EXPECT_EQ(longest_first({"L2", "M2", "L1", "M1"}, weight),
            (std::vector<std::string>{"M2", "M1", "L2", "L1"}));
  EXPECT_EQ(longest_first({"L2", "L1"}, weight), (std::vector<std::string>{"L2", "L1"}));
  EXPECT_TRUE(longest_first({}, weight).empty());
}

// With the cap, the heaviest-first order starts heavy problems up to the cap at once and light
// ones in the other workers (a set of 8 workers, cap 4: the first four taken are heavy).
TEST(EvolveSetOrder, HeavyFirstOrderFillsTheCapThenLightOnes) {
  const std::vector<bool> heavy{true, true, true, true, true, true, false, false, false, false};
  std::vector<bool> started(heavy.size(), false);
  int heavy_running = 0;
  std::vector<std::size_t> taken;
  for (int worker = 0; worker < 8; ++worker) {
    const std::optional<std::size_t> i = next_problem(started, heavy, heavy_running, 4);
    ASSERT_TRUE(i);
    started[*i] = true;
    heavy_running += heavy[*i] ? 1 : 0;
    taken.push_back(*i);
  }
  EXPECT_EQ(taken, (std::vector<std::size_t>{0, 1, 2, 3, 6, 7, 8, 9}));
  // A heavy one ends: the next heavy one takes its place.
  EXPECT_EQ(next_problem(started, heavy, 3, 4), 4u);
}

TEST(EvolveSetOrder, AHeavyProblemWaitsWhileEnoughRunAndALightOneIsLeft) {
  const std::vector<bool> heavy{false, true, false, true, false};
  // In order while under the cap.
  EXPECT_EQ(next_problem({false, false, false, false, false}, heavy, 0, 1), 0u);
  EXPECT_EQ(next_problem({true, false, false, false, false}, heavy, 0, 1), 1u);
  // At the cap the heavy one waits: the next light one goes first.
  EXPECT_EQ(next_problem({true, false, false, false, false}, heavy, 1, 1), 2u);
  EXPECT_EQ(next_problem({true, false, true, false, false}, heavy, 1, 1), 4u);
  // Only heavy ones left: they start, whatever the cap.
  EXPECT_EQ(next_problem({true, false, true, false, true}, heavy, 1, 1), 1u);
  EXPECT_EQ(next_problem({true, true, true, false, true}, heavy, 5, 1), 3u);
  // All started.
  EXPECT_EQ(next_problem({true, true, true, true, true}, heavy, 0, 1), std::nullopt);
  EXPECT_EQ(next_problem({}, {}, 0, 1), std::nullopt);
}

}  // namespace
}  // namespace kiln::evolve
