// The kb1 problems (KernelBench level 1 equivalents, issue 19) without a GPU: the set, names
// carrying the id, fp32, a small and a KernelBench size each, the small one no larger, and a
// floor no slower than T_roof for every row (a legitimate kernel at T_roof must pass the floor).
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "bench/problem.hpp"
#include "core/hardware_profile.hpp"
#include "problems/registry.hpp"
#include "roofline/roofline.hpp"

namespace kiln::bench {
namespace {

std::vector<const Problem*> kb1_problems() {
  std::vector<const Problem*> out;
  for (const auto& p : problems::problem_registry())
    if (p->name().rfind("kb1-", 0) == 0) out.push_back(p.get());
  return out;
}

TEST(Kb1Problems, TheSetIsLevelOneWithoutTheConvolutions) {
  std::set<int> ids;
  const std::regex name("kb1-([0-9]+)-[a-z0-9-]+");
  for (const Problem* p : kb1_problems()) {
    const std::string text = p->name();
    std::smatch m;
    ASSERT_TRUE(std::regex_match(text, m, name)) << text;
    EXPECT_TRUE(ids.insert(std::stoi(m[1])).second) << "id twice: " << p->name();
  }
  // Every id the issue names that is built so far is in 1..100 and not a convolution.
  for (const int id : ids) {
    EXPECT_TRUE(id >= 1 && id <= 100) << id;
    EXPECT_FALSE(id == 50 || (id >= 54 && id <= 87)) << "convolution " << id;
  }
  for (const int id : {1, 5, 19, 23, 33, 40, 47, 51, 88, 94, 97}) EXPECT_TRUE(ids.count(id)) << id;
}

TEST(Kb1Problems, Fp32SmallAndKernelBenchSizesAndAFloorBelowTheRoof) {
  const roofline::Ceilings h100 = roofline::ceilings_from_profile(core::find_profile("h100-sxm"));
  for (const Problem* p : kb1_problems()) {
    EXPECT_EQ(p->fixed_dtype(), core::DType::kFp32) << p->name();
    EXPECT_EQ(p->category(), Category::kSingleGpu) << p->name();
    const std::vector<ProblemSize> sizes = p->sizes();
    ASSERT_EQ(sizes.size(), 2u) << p->name();
    EXPECT_EQ(sizes[0].name, "small");
    EXPECT_EQ(sizes[1].name, "kb");
    for (const auto& [key, value] : sizes[0].dims) {
      EXPECT_GT(value, 0) << p->name() << " " << key;
      EXPECT_LE(value, sizes[1].dim(key)) << p->name() << " " << key;
    }
    for (const ProblemSize& s : sizes) {
      const auto floor = p->floor_cost(s, core::DType::kFp32, 1);
      ASSERT_TRUE(floor.has_value()) << p->name();
      const double roof = roofline::evaluate(p->cost(s, core::DType::kFp32, 1), h100).seconds;
      const double at_floor = roofline::evaluate(*floor, h100).seconds;
      EXPECT_GT(at_floor, 0.0) << p->name() << " " << s.name;
      EXPECT_LE(at_floor, roof * (1 + 1e-12)) << p->name() << " " << s.name;
    }
  }
}

}  // namespace
}  // namespace kiln::bench
