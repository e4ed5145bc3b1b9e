// The whole-array sum generator without a GPU (issue 20's ladder test): the ladder's genomes are
// valid and their sources carry each step's idea, random genomes of the allowed set generate,
// warp tails refuse interleaved trees, and a sample compiles with nvcc into loadable candidates.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "bench/candidate_library.hpp"
#include "core/error.hpp"
#include "evolve/candidate_evaluator.hpp"
#include "evolve/sum_generator.hpp"
#include "evolve/sum_ladder.hpp"

namespace kiln::evolve {
namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(EvolveSumGenerator, TheLadderStepsCarryTheirIdeas) {
  const auto steps = sum_ladder_genomes();
  ASSERT_EQ(steps.size(), 9u);
  std::map<std::string, std::string> source;
  for (const auto& [name, g] : steps) {
    ASSERT_TRUE(violations(g).empty()) << name << ": " << g.describe();
    for (const std::string& s : g.strategies) EXPECT_TRUE(sum_generated_strategies().count(s));
    source[name] = generate_sum_candidate(g, "reduce-sum-int32");
    EXPECT_EQ(generate_candidate(g, "reduce-sum-int32"), source[name]);
  }
  EXPECT_EQ(steps.front().second, naive_sum_genome());
  EXPECT_TRUE(contains(source["v1"], "t % (2 * s) == 0"));
  EXPECT_TRUE(contains(source["v1"], "scratch + static_cast<long long>(blockIdx.x)"));
  EXPECT_TRUE(contains(source["v1"], "Passes until one value is left"));
  EXPECT_TRUE(contains(source["v2a"], "if (t < s) tree[t] += tree[t + s]"));
  EXPECT_TRUE(contains(source["v2a"], "scratch + static_cast<long long>(blockIdx.x)"));
  EXPECT_TRUE(contains(source["v2b"], "__shared__ unsigned shared_tree[kThreads]"));
  EXPECT_TRUE(contains(source["v2c"], "constexpr int kItems = 2;"));
  EXPECT_TRUE(contains(source["v3a"], "volatile unsigned* v = tree;"));
  EXPECT_TRUE(contains(source["v3b"], "x += __shfl_down_sync"));
  EXPECT_FALSE(contains(source["v3b"], "#pragma unroll\n  for (int s"));
  EXPECT_TRUE(contains(source["v4"], "#pragma unroll\n  for (int s = kThreads / 2;"));
  EXPECT_TRUE(contains(source["vec"], "reinterpret_cast<const uint4*>"));
  EXPECT_TRUE(contains(source["vec"], "atomicAdd(ticket, 1u)"));
  EXPECT_TRUE(contains(source["vec"], "constexpr int kBlocksPerSm = 4;"));
  EXPECT_TRUE(contains(source["vec-atomic"], "atomicAdd(out, total)"));
  EXPECT_TRUE(contains(source["vec-atomic"], "cudaMemsetAsync(out, 0"));
}

TEST(EvolveSumGenerator, RandomGenomesOfTheAllowedSetGenerate) {
  const StrategySet& allowed = sum_generated_strategies();
  EXPECT_EQ(generated_family("reduce-sum-int32"), Family::kReduceAxis);
  EXPECT_EQ(&generated_strategies("reduce-sum-int32"), &allowed);
  Rng rng(11);
  int with_block_tiles = 0;
  for (int i = 0; i < 300; ++i) {
    const Genome g = random_genome(Family::kReduceAxis, rng, 0.5, &allowed);
    ASSERT_TRUE(violations(g).empty()) << g.describe();
    // block-tiles is the only work mapping the generator has, so every genome gets it.
    ASSERT_TRUE(g.has("block-tiles")) << g.describe();
    ++with_block_tiles;
    EXPECT_NO_THROW(generate_sum_candidate(g, "reduce-sum-int32")) << g.describe();
  }
  EXPECT_EQ(with_block_tiles, 300);
  // Warp tails need sequential addressing: the catalog makes the pair incompatible.
  Genome bad = naive_sum_genome();
  bad.strategies.insert("shuffle-last-warp");
  EXPECT_FALSE(violations(bad).empty());
  EXPECT_THROW(generate_sum_candidate(bad, "reduce-sum-int32"), UsageError);
  EXPECT_THROW(generate_sum_candidate(naive_sum_genome(), "kb1-19-relu"), UsageError);
  EXPECT_FALSE(whole_sum_element("kb1-47-sum-reduction").has_value());
}

TEST(EvolveSumGenerator, LadderCandidatesCompileAndLoad) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "kiln_evolve_sum_generator";
  std::filesystem::create_directories(dir);
  for (const auto& [name, g] : sum_ladder_genomes()) {
    if (name != "v1" && name != "v3a" && name != "vec" && name != "vec-atomic") continue;
    const std::filesystem::path file = dir / fmt::format("sum_{}.cu", name);
    std::ofstream(file) << generate_sum_candidate(g, "reduce-sum-int32");
    bench::CandidateBuild build;
    ASSERT_NO_THROW(build = bench::compile_candidate(file.string(), dir.string(), "sm_90a", 300))
        << name << ": " << g.describe();
    EXPECT_NE(bench::CandidateLibrary(build.library).entry(), nullptr) << name;
  }
}

TEST(EvolveCandidateEvaluator, AGenomeTheGeneratorRefusesIsAFailureNotAnError) {
  CandidateEvaluatorOptions o;
  o.kiln = "/nonexistent/kiln";  // never started: the refusal comes first
  o.problem = "reduce-sum-int32";
  o.size = "1e6";
  o.folder = (std::filesystem::path(::testing::TempDir()) / "kiln_evolve_refused").string();
  Genome bad = naive_sum_genome();
  bad.strategies.insert("shuffle-last-warp");  // incompatible with the interleaved tree
  const Evaluation e = candidate_evaluator(o)(bad);
  EXPECT_FALSE(e.correct);
  EXPECT_NE(e.failure.find("not generated: "), std::string::npos) << e.failure;
}

}  // namespace
}  // namespace kiln::evolve
