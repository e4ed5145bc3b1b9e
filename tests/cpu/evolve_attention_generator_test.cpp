// The attention generator (issue 20) on the CPU: the problem, the required precision and passes,
// the source following the genome (two CUTLASS GEMMs around the row softmax, K read as a
// column-major operand; the GEMMs the matmul family's units), and a candidate that compiles
// against CUTLASS, split and whole, and loads. The GPU test
// (EvolveGpu.AttentionGeneratesCompilesAndIsJudged) judges it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "bench/candidate_library.hpp"
#include "bench/candidate_unit.hpp"
#include "core/error.hpp"
#include "evolve/attention_generator.hpp"
#include "evolve/candidate_evaluator.hpp"
#include "evolve/genome.hpp"
#include "evolve/matmul_generator.hpp"

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

// The two GEMMs are the matmul family's units of the same configuration: Q K^T is kb1-17's
// (B stored n x k), P V is kb1-2's (both row-major), so one build serves all three problems.
TEST(EvolveAttentionGenerator, TheGemmsAreTheMatmulUnitsOfTheConfiguration) {
  Genome g = attention_genome();
  g.knobs = {{"cutlass-sm80-mma.tile_m", 64},
             {"cutlass-sm80-mma.warp", 32},
             {"cutlass-sm80-mma.stages", 4},
             {"cutlass-sm80-mma.swizzle", 2}};
  Genome matmul = g;
  matmul.family = Family::kMatmul;
  matmul.strategies = {"cutlass-sm80-mma", "tf32x3"};
  const auto units = [](const std::string& source) {
    return bench::split_candidate_unit(source, "test")->units;
  };
  const std::vector<std::string> attention = units(generate_attention_candidate(g, "kb1-97-sdpa"));
  ASSERT_EQ(attention.size(), 2u);
  const std::vector<std::string> transposed_b =
      units(generate_matmul_candidate(matmul, "kb1-17-matmul-transposed-b"));
  const std::vector<std::string> plain = units(generate_matmul_candidate(matmul, "kb1-2-matmul"));
  ASSERT_EQ(transposed_b.size(), 1u);
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_EQ(attention[0], transposed_b[0]);
  EXPECT_EQ(attention[1], plain[0]);
  EXPECT_NE(attention[0], attention[1]);
  // Another configuration: other units.
  Genome other = g;
  other.knobs["cutlass-sm80-mma.stages"] = 3;
  EXPECT_NE(units(generate_attention_candidate(other, "kb1-97-sdpa"))[1], plain[0]);
}

// Built as a search builds it (the two units, then the rest, linked) and whole, as a verdict and
// `kiln evolve export` build it (the units' names must not collide in one translation unit).
TEST(EvolveAttentionGenerator, SourceFollowsTheGenomeAndCompilesSplitAndWhole) {
  Genome g = attention_genome();
  g.knobs = {{"cutlass-sm80-mma.tile_m", 64}, {"cutlass-sm80-mma.warp", 32}};
  const std::string source = generate_attention_candidate(g, "kb1-97-sdpa");
  EXPECT_NE(source.find("float, cutlass::layout::RowMajor, float, cutlass::layout::ColumnMajor"),
            std::string::npos);  // K^T
  EXPECT_NE(source.find("cutlass::gemm::GemmShape<64, 128, 16>"), std::string::npos);
  EXPECT_NE(source.find("softmax_rows"), std::string::npos);
  EXPECT_NE(source.find("(r[j] - m) * scale"), std::string::npos);  // the scale in the softmax
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "kiln_evolve_attention_generator";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "split.cu") << source;
  bench::CandidateBuild split;
  ASSERT_NO_THROW(split = bench::compile_candidate((dir / "split.cu").string(),
                                                   (dir / "split").string(), "sm_90a", 600));
  EXPECT_NE(split.command.find(".rest.cu"), std::string::npos) << split.command;
  std::size_t unit_objects = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir / "split" / "units"))
    unit_objects += entry.path().extension() == ".o" ? 1 : 0;
  EXPECT_EQ(unit_objects, 2u);
  EXPECT_NE(bench::CandidateLibrary(split.library).entry(), nullptr);
  // Whole: the same code without the unit markers.
  std::string whole = source;
  for (const std::string marker : {"// kiln-unit: begin\n", "// kiln-unit: end\n"})
    for (std::size_t at; (at = whole.find(marker)) != std::string::npos;)
      whole.erase(at, marker.size());
  ASSERT_FALSE(bench::split_candidate_unit(whole, "whole").has_value());
  std::ofstream(dir / "whole.cu") << whole;
  bench::CandidateBuild built_whole;
  ASSERT_NO_THROW(built_whole = bench::compile_candidate((dir / "whole.cu").string(),
                                                         (dir / "whole").string(), "sm_90a", 600));
  EXPECT_NE(bench::CandidateLibrary(built_whole.library).entry(), nullptr);
}

}  // namespace
}  // namespace kiln::evolve
