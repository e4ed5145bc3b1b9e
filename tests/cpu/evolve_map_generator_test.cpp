// The map family's generated kernels without a GPU (issue 20): every problem has an expression,
// the source carries the genome's choices, and a sample of genomes compiles with nvcc into a
// candidate library that loads (the judge's own path), here on the CPU machine.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include "bench/candidate_library.hpp"
#include "core/error.hpp"
#include "evolve/map_generator.hpp"

namespace kiln::evolve {
namespace {

TEST(EvolveMapGenerator, ExpressionsForTheMapProblemsOnly) {
  for (const char* p :
       {"kb1-5-matrix-scalar", "kb1-19-relu", "kb1-26-gelu", "kb1-88-mingpt-new-gelu"})
    EXPECT_TRUE(map_expression(p).has_value()) << p;
  EXPECT_FALSE(map_expression("kb1-23-softmax").has_value());
  Rng rng(1);
  EXPECT_THROW(generate_map_candidate(random_genome(Family::kMap, rng), "kb1-23-softmax"),
               UsageError);
  EXPECT_THROW(generate_map_candidate(random_genome(Family::kScan, rng), "kb1-19-relu"),
               UsageError);
}

TEST(EvolveMapGenerator, SourceFollowsTheGenome) {
  Genome g;
  g.family = Family::kMap;
  g.strategies = {"vector16-loads", "grid-stride"};
  g.knobs = {
      {"vector16-loads.unroll", 2}, {"grid-stride.threads", 512}, {"grid-stride.blocks_per_sm", 4}};
  ASSERT_TRUE(violations(g).empty());
  const std::string src = generate_map_candidate(g, "kb1-19-relu");
  EXPECT_NE(src.find("float4"), std::string::npos);
  EXPECT_NE(src.find("__launch_bounds__(512)"), std::string::npos);
  EXPECT_NE(src.find("static_cast<long long>(sms) * 4"), std::string::npos);
  EXPECT_NE(src.find("x > 0.0f ? x : 0.0f"), std::string::npos);
  g.strategies = {"scalar-loads", "element-per-thread"};
  g.knobs = {{"scalar-loads.unroll", 4}, {"element-per-thread.threads", 128}};
  const std::string one_shot = generate_map_candidate(g, "kb1-19-relu");
  EXPECT_EQ(one_shot.find("float4"), std::string::npos);
  EXPECT_NE(one_shot.find("(n + 512 - 1) / 512"), std::string::npos);  // 128 threads x 4
}

TEST(EvolveMapGenerator, GeneratedCandidatesCompileAndLoad) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "kiln_evolve_map_generator";
  std::filesystem::create_directories(dir);
  Rng rng(3);
  for (int i = 0; i < 3; ++i) {
    const Genome g = random_genome(Family::kMap, rng, 0.6);
    const std::string problem = i == 0 ? "kb1-26-gelu" : "kb1-19-relu";
    const std::filesystem::path source = dir / fmt::format("map_{}.cu", i);
    std::ofstream(source) << generate_map_candidate(g, problem);
    bench::CandidateBuild build;
    ASSERT_NO_THROW(build = bench::compile_candidate(source.string(), dir.string(), "sm_90a", 300))
        << g.describe();
    bench::CandidateLibrary library(build.library);
    EXPECT_NE(library.entry(), nullptr);
  }
}

}  // namespace
}  // namespace kiln::evolve
