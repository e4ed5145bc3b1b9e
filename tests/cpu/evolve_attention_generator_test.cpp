// The attention generator (issue 20) on the CPU: the problem, the required precision and passes,
// the source following the genome (two CUTLASS GEMMs around the row softmax, K read as a
// column-major operand), and a candidate that compiles against CUTLASS and loads. The GPU test
// (EvolveGpu.AttentionGeneratesCompilesAndIsJudged) judges it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "bench/candidate_library.hpp"
#include "core/error.hpp"
#include "evolve/attention_generator.hpp"
#include "evolve/candidate_evaluator.hpp"
#include "evolve/genome.hpp"

namespace kiln::evolve {
namespace {

Genome attention_genome() {
  Genome g;
  g.family = Family::kAttention;
  g.strategies = {"cutlass-sm80-mma", "tf32x3", "two-pass"};
  return g;
}

TEST(EvolveAttentionGenerator, TheProblemAndItsGenomes) {
  EXPECT_TRUE(is_attention_problem("kb1-97-sdpa"));
  EXPECT_FALSE(is_attention_problem("kb1-23-softmax"));
  EXPECT_EQ(generated_family("kb1-97-sdpa"), Family::kAttention);
  EXPECT_THROW(generate_attention_candidate(attention_genome(), "kb1-1-square-matmul"), UsageError);
  // The fused one-pass kernel is not generated: such a genome is refused, not mistranslated.
  Genome online = attention_genome();
  online.strategies = {"cutlass-sm80-mma", "tf32x3", "online-one-pass"};
  EXPECT_TRUE(violations(online).empty());
  EXPECT_THROW(generate_attention_candidate(online, "kb1-97-sdpa"), UsageError);
  Rng rng(41);
  const StrategySet& allowed = attention_generated_strategies();
  for (int i = 0; i < 100; ++i) {
    const Genome g = random_genome(Family::kAttention, rng, 0.5, &allowed);
    ASSERT_TRUE(violations(g).empty()) << g.describe();
    EXPECT_NO_THROW((void)generate_attention_candidate(g, "kb1-97-sdpa")) << g.describe();
  }
}

TEST(EvolveAttentionGenerator, SourceFollowsTheGenomeAndCompiles) {
  Genome g = attention_genome();
  g.knobs = {{"cutlass-sm80-mma.tile_m", 64}, {"cutlass-sm80-mma.warp", 32}};
  const std::string source = generate_attention_candidate(g, "kb1-97-sdpa");
  EXPECT_NE(source.find("using GemmScores"), std::string::npos);
  EXPECT_NE(source.find("using GemmOutput"), std::string::npos);
  EXPECT_NE(source.find("float, cutlass::layout::RowMajor, float, cutlass::layout::ColumnMajor"),
            std::string::npos);  // K^T
  EXPECT_NE(source.find("cutlass::gemm::GemmShape<64, 128, 16>"), std::string::npos);
  EXPECT_NE(source.find("softmax_rows"), std::string::npos);
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "kiln_evolve_attention_generator";
  std::filesystem::create_directories(dir);
  const std::filesystem::path file = dir / "attention.cu";
  std::ofstream(file) << source;
  bench::CandidateBuild build;
  ASSERT_NO_THROW(build = bench::compile_candidate(file.string(), dir.string(), "sm_90a", 600));
  EXPECT_NE(bench::CandidateLibrary(build.library).entry(), nullptr);
}

}  // namespace
}  // namespace kiln::evolve
