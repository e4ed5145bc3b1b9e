// The matrix-vector and row-scaling generator (issue 20) on the CPU: the two problems and their
// families and allowed sets, random genomes generate, the source follows the genome, and one
// genome per mapping compiles with nvcc and loads. The GPU test
// (EvolveGpu.Blas2FamilyGeneratesCompilesAndIsJudged) judges them.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "bench/candidate_library.hpp"
#include "core/error.hpp"
#include "evolve/blas2_generator.hpp"
#include "evolve/candidate_evaluator.hpp"
#include "evolve/genome.hpp"
#include "evolve_generator_test_support.hpp"

namespace kiln::evolve {
namespace {

TEST(EvolveBlas2Generator, TheTwoProblemsAndTheirFamilies) {
  EXPECT_EQ(blas2_kind_of("kb1-4-matvec"), "matvec");
  EXPECT_EQ(blas2_kind_of("kb1-12-diag-matmul"), "row-scale");
  EXPECT_FALSE(blas2_kind_of("kb1-1-square-matmul").has_value());
  EXPECT_EQ(generated_family("kb1-4-matvec"), Family::kReduceAxis);
  EXPECT_EQ(generated_family("kb1-12-diag-matmul"), Family::kMap);
  EXPECT_EQ(&generated_strategies("kb1-4-matvec"), &blas2_generated_strategies("kb1-4-matvec"));
  EXPECT_THROW(blas2_generated_strategies("kb1-19-relu"), UsageError);
  // A genome of the wrong family is refused, not translated.
  EXPECT_THROW(generate_blas2_candidate(genome_of(Family::kMap, {"scalar-loads", "grid-stride"}),
                                        "kb1-4-matvec"),
               UsageError);
}

TEST(EvolveBlas2Generator, RandomGenomesGenerateAndFollowTheGenome) {
  Rng rng(37);
  for (const char* p : {"kb1-4-matvec", "kb1-12-diag-matmul"}) {
    const StrategySet& allowed = blas2_generated_strategies(p);
    const Family family = *generated_family(p);
    for (int i = 0; i < 100; ++i) {
      const Genome g = random_genome(family, rng, 0.5, &allowed);
      ASSERT_TRUE(violations(g).empty()) << g.describe();
      EXPECT_NO_THROW((void)generate_blas2_candidate(g, p)) << p << ": " << g.describe();
    }
  }
  const std::string warp = generate_blas2_candidate(
      genome_of(Family::kReduceAxis, {"vector16-loads", "row-per-warp", "shared-tree"},
                {{"row-per-warp.warps_per_block", 8}, {"vector16-loads.unroll", 2}}),
      "kb1-4-matvec");
  EXPECT_NE(warp.find("constexpr int kThreads = 256;"), std::string::npos);
  EXPECT_NE(warp.find("constexpr int kTeam = 32;"), std::string::npos);
  EXPECT_NE(warp.find("constexpr bool kVectorPath = true;"), std::string::npos);
  const std::string stride = generate_blas2_candidate(
      genome_of(Family::kMap, {"scalar-loads", "grid-stride"},
                {{"grid-stride.blocks_per_sm", 4}, {"scalar-loads.unroll", 8}}),
      "kb1-12-diag-matmul");
  EXPECT_NE(stride.find("constexpr int kBlocksPerSm = 4;"), std::string::npos);
  EXPECT_NE(stride.find("constexpr int kVec = 1;"), std::string::npos);
  EXPECT_NE(stride.find("constexpr int kUnroll = 8;"), std::string::npos);
}

TEST(EvolveBlas2Generator, EveryMappingCompilesAndLoads) {
  const std::vector<std::pair<std::string, Genome>> cases = {
      {"kb1-4-matvec",
       genome_of(Family::kReduceAxis, {"vector16-loads", "row-per-warp", "warp-shuffle"})},
      {"kb1-4-matvec",
       genome_of(Family::kReduceAxis, {"scalar-loads", "row-per-block", "shared-tree"})},
      {"kb1-4-matvec",
       genome_of(Family::kReduceAxis, {"scalar-loads", "row-per-block", "warp-shuffle"})},
      {"kb1-12-diag-matmul", genome_of(Family::kMap, {"vector16-loads", "element-per-thread"})},
      {"kb1-12-diag-matmul", genome_of(Family::kMap, {"scalar-loads", "grid-stride"})},
  };
  expect_compiles_and_loads("kiln_evolve_blas2_generator", "blas2", cases,
                            generate_blas2_candidate);
}

}  // namespace
}  // namespace kiln::evolve
