// The kb1 problems (KernelBench level 1 equivalents, issue 19) without a GPU: the set, names
// carrying the id, fp32, a small and a KernelBench size each, the small one no larger, and a
// floor no slower than T_roof for every row (a legitimate kernel at T_roof must pass the floor).
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <stdexcept>

#include "bench/problem.hpp"
#include "core/hardware_profile.hpp"
#include "problems/kb1_common.hpp"
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

// The host checks' chunked sum (kb1::sum_over_chunks): the chunks run on several threads, but the
// partial sums are added in chunk order, so the result is the serial sum's bits; a chunk's
// exception reaches the caller.
TEST(Kb1HostCheck, ChunkSumsAddInOrderOnAnyThreadAndRethrow) {
  // Terms of very different magnitudes: any other order of addition gives other bits.
  const auto term = [](std::int64_t c) {
    return (c % 3 == 0 ? 1e16 : 1.0) * (c % 2 == 0 ? 1.0 : -1.0) + 0.1 * static_cast<double>(c);
  };
  for (const std::int64_t chunks :
       {std::int64_t{0}, std::int64_t{1}, std::int64_t{7}, std::int64_t{1001}}) {
    double serial = 0.0;
    for (std::int64_t c = 0; c < chunks; ++c) serial += term(c);
    EXPECT_EQ(kiln::problems::kb1::sum_over_chunks(chunks, term), serial) << chunks << " chunks";
  }
  EXPECT_THROW(kiln::problems::kb1::sum_over_chunks(500,
                                                    [](std::int64_t c) -> double {
                                                      if (c == 321) throw std::runtime_error("x");
                                                      return 1.0;
                                                    }),
               std::runtime_error);
}

namespace kiln::problems::kb1 {
namespace {

// The verdict's wording from a comparison: element mismatches first; where every element is
// within atol + rtol but the output is wrong as a whole (values below atol, 2026-11-30), the
// relative L2 error names it; a small relative error passes.
TEST(Kb1Compare, ARelativeL2ErrorAboveItsToleranceRejectsWhatTheElementTestPasses) {
  Mismatch ok;
  ok.relative_l2 = kRelativeL2Tolerance / 2;
  EXPECT_EQ(describe(ok, 100, kTolerance), "");
  Mismatch scaled;  // every value 1% high, each within atol
  scaled.relative_l2 = 0.01;
  const std::string why = describe(scaled, 100, kTolerance);
  EXPECT_NE(why.find("relative L2 error is 0.01"), std::string::npos) << why;
  EXPECT_NE(why.find("at most 0.001"), std::string::npos) << why;
  Mismatch elements;
  elements.count = 3;
  elements.first = 7;
  elements.relative_l2 = 0.5;
  EXPECT_NE(describe(elements, 100, kTolerance).find("3 of 100 elements differ"), std::string::npos);
}

}  // namespace
}  // namespace kiln::problems::kb1
