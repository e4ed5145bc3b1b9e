// `kiln evolve set`'s order: compile-heavy problems spread evenly among the light ones.
#include "evolve/set_order.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kiln::evolve {
namespace {

bool is_heavy(const std::string& name) {
  return name[0] == 'H';
}

TEST(EvolveSetOrder, HeavyProblemsSpreadEvenlyAndEachGroupKeepsItsOrder) {
  EXPECT_EQ(spread_compile_heavy({"H1", "H2", "H3", "L1", "L2", "L3", "L4", "L5", "L6"}, is_heavy),
            (std::vector<std::string>{"L1", "L2", "H1", "L3", "L4", "H2", "L5", "L6", "H3"}));
  // The registry's order of KernelBench level 1: matmuls first.
  EXPECT_EQ(spread_compile_heavy({"H1", "H2", "L1", "L2", "L3"}, is_heavy),
            (std::vector<std::string>{"L1", "L2", "H1", "L3", "H2"}));
  // More heavy than light: no two light ones meet, the first is light.
  EXPECT_EQ(spread_compile_heavy({"H1", "H2", "H3", "L1"}, is_heavy),
            (std::vector<std::string>{"L1", "H1", "H2", "H3"}));
  EXPECT_EQ(spread_compile_heavy({"H1", "H2"}, is_heavy), (std::vector<std::string>{"H1", "H2"}));
  EXPECT_EQ(spread_compile_heavy({"L2", "L1"}, is_heavy), (std::vector<std::string>{"L2", "L1"}));
  EXPECT_TRUE(spread_compile_heavy({}, is_heavy).empty());
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
