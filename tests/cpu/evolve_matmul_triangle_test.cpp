// exploit-structure for the triangular products (issue 20) on the CPU: only kb1-14 and kb1-15 may
// use it, only with cutlass-sm90; the source follows the triangle and the knobs; a candidate
// compiles (CUTLASS's grouped sm90 GEMM as its unit) and loads. The GPU test
// (EvolveGpu.MatmulTriangleIsJudged) judges them.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "bench/candidate_library.hpp"
#include "core/error.hpp"
#include "evolve/genome.hpp"
#include "evolve/matmul_generator.hpp"
#include "evolve/matmul_triangle_generator.hpp"

namespace kiln::evolve {
namespace {

Genome triangle_genome(std::map<std::string, int> knobs = {}) {
  Genome g;
  g.family = Family::kMatmul;
  g.strategies = {"cutlass-sm90", "tf32x3", "exploit-structure"};
  g.knobs = std::move(knobs);
  return g;
}

TEST(EvolveMatmulTriangle, OnlyTheTriangularProblemsOnlyOnSm90) {
  EXPECT_TRUE(
      matmul_generated_strategies("kb1-14-upper-triangular-matmul").count("exploit-structure"));
  EXPECT_TRUE(
      matmul_generated_strategies("kb1-15-lower-triangular-matmul").count("exploit-structure"));
  EXPECT_FALSE(matmul_generated_strategies("kb1-1-square-matmul").count("exploit-structure"));
  EXPECT_FALSE(matmul_generated_strategies("kb1-13-symmetric-matmul").count("exploit-structure"));
  EXPECT_EQ(matmul_kind_of("kb1-14-upper-triangular-matmul")->triangle, 'U');
  EXPECT_EQ(matmul_kind_of("kb1-15-lower-triangular-matmul")->triangle, 'L');
  EXPECT_EQ(matmul_kind_of("kb1-1-square-matmul")->triangle, 0);
  ASSERT_TRUE(violations(triangle_genome()).empty());
  EXPECT_THROW(generate_matmul_candidate(triangle_genome(), "kb1-1-square-matmul"), UsageError);
  Genome sm80 = triangle_genome();
  sm80.strategies = {"cutlass-sm80-mma", "tf32x3", "exploit-structure"};
  EXPECT_FALSE(violations(sm80).empty());  // declared incompatible in the catalog
  EXPECT_THROW(generate_matmul_candidate(sm80, "kb1-14-upper-triangular-matmul"), UsageError);
  // Without the strategy the triangular problems get the plain sm90 candidate.
  Genome plain = triangle_genome();
  plain.strategies.erase("exploit-structure");
  EXPECT_EQ(generate_matmul_candidate(plain, "kb1-14-upper-triangular-matmul")
                .find("kiln_sm90_tf32_grouped_gemm"),
            std::string::npos);
}

TEST(EvolveMatmulTriangle, SourceFollowsTheTriangleAndTheKnobs) {
  const std::string upper =
      generate_matmul_candidate(triangle_genome(), "kb1-14-upper-triangular-matmul");
  EXPECT_NE(upper.find("constexpr bool kUpper = true;"), std::string::npos);
  EXPECT_NE(upper.find("constexpr long long kBlock = 256;"), std::string::npos);
  EXPECT_NE(upper.find("long long slice_blocks = 4;"), std::string::npos);
  EXPECT_NE(upper.find("KernelPtrArrayTmaWarpSpecializedCooperative"), std::string::npos);
  const std::string lower =
      generate_matmul_candidate(triangle_genome({{"exploit-structure.block", 128},
                                                 {"exploit-structure.slice_blocks", 16},
                                                 {"cutlass-sm90.tile_n", 256}}),
                                "kb1-15-lower-triangular-matmul");
  EXPECT_NE(lower.find("constexpr bool kUpper = false;"), std::string::npos);
  EXPECT_NE(lower.find("constexpr long long kBlock = 128;"), std::string::npos);
  EXPECT_NE(upper.find("constexpr long long kGroupBlocks = 1;"), std::string::npos);
  EXPECT_NE(generate_matmul_candidate(triangle_genome({{"exploit-structure.group_blocks", 4}}),
                                      "kb1-14-upper-triangular-matmul")
                .find("constexpr long long kGroupBlocks = 4;"),
            std::string::npos);
  // Tiles no larger than a block.
  EXPECT_NE(lower.find("cute::Int<128>, cute::Int<128>, cute::Int<32>"), std::string::npos);
  // The grouped unit depends on the configuration only: the same for both triangles.
  const auto unit = [](const std::string& source) {
    const auto begin = source.find("// kiln-unit: begin");
    return source.substr(begin, source.find("// kiln-unit: end") - begin);
  };
  EXPECT_EQ(unit(upper),
            unit(generate_matmul_candidate(triangle_genome(), "kb1-15-lower-triangular-matmul")));
}

TEST(EvolveMatmulTriangle, CandidateCompilesAndLoads) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "kiln_evolve_matmul_triangle";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::filesystem::path file = dir / "triangle.cu";
  std::ofstream(file) << generate_matmul_candidate(triangle_genome(),
                                                   "kb1-15-lower-triangular-matmul");
  bench::CandidateBuild build;
  ASSERT_NO_THROW(build = bench::compile_candidate(file.string(), (dir / "out").string(), "sm_90a",
                                                   900, (dir / "cache").string()));
  EXPECT_NE(bench::CandidateLibrary(build.library).entry(), nullptr);
}

}  // namespace
}  // namespace kiln::evolve
