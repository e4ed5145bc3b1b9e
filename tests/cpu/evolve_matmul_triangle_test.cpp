// exploit-structure for the triangular products (issue 20) on the CPU: only kb1-14 and kb1-15 may
// use it, only with cutlass-sm90; the source follows the triangle and the knobs; a candidate
// compiles (CUTLASS's grouped sm90 GEMM as its unit) and loads. The GPU test
// (EvolveGpu.MatmulTriangleIsJudged) judges them.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
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
  // The grouped GEMM keeps three operand copies: copies = 2 builds the same unit.
  EXPECT_EQ(unit(upper),
            unit(generate_matmul_candidate(triangle_genome({{"cutlass-sm90.copies", 2}}),
                                           "kb1-14-upper-triangular-matmul")));
}

// The ranged form: the plain register-split unit with the triangle's scheduler, whose K range
// starts on the side of the product's row index for an upper product (k from i to j) and of
// its column index for a lower one, the GEMM's M being B's columns where B is split in
// registers (C^T = B^T A^T); the cooperative kernel with square tiles, clusters of one block,
// no split-K, whatever the sm90 knobs ask; the grouped unit is gone.
TEST(EvolveMatmulTriangle, RangedFormSchedulesEachTileItsKRange) {
  for (const char* problem : {"kb1-14-upper-triangular-matmul", "kb1-15-lower-triangular-matmul"})
    for (const int register_b : {0, 1})
      for (const int schedule : {0, 1}) {
        const bool upper = std::string(problem).find("upper") != std::string::npos;
        const std::string source = generate_matmul_candidate(
            triangle_genome({{"exploit-structure.ranged", 1},
                             {"cutlass-sm90.register_operand", register_b},
                             {"cutlass-sm90.schedule", schedule},
                             {"cutlass-sm90.tile_n", 256},
                             {"cutlass-sm90.cluster_m", 2},
                             {"cutlass-sm90.split_k", 4},
                             {"cutlass-sm90.copies", 3},
                             {"cutlass-sm90.shared_split", 2}}),
            problem);
        const int tile = 128;  // cooperative whatever the schedule knob asks
        const std::string what =
            fmt::format("{} register_b {} schedule {}", problem, register_b, schedule);
        EXPECT_NE(source.find(fmt::format("TriangleSchedulerTag<{}, {}>>;",
                                          upper != (register_b == 1) ? "true" : "false", tile)),
                  std::string::npos)
            << what;
        EXPECT_NE(source.find(fmt::format("cute::Int<{}>, cute::Int<{}>, cute::_32", tile, tile)),
                  std::string::npos)
            << what;
        EXPECT_NE(source.find("using Cluster = cute::Shape<cute::Int<1>"), std::string::npos)
            << what;
        EXPECT_NE(source.find("KernelTmaWarpSpecializedCooperative;"), std::string::npos) << what;
        EXPECT_NE(source.find("RegisterSplitMainloop<Base, 1>"), std::string::npos)
            << what << ": the transform warp is the consumers' split here";
        EXPECT_NE(source.find("constexpr bool kTriangleRanges = true;"), std::string::npos) << what;
        // S (the GEMM's N side) split only in its band: from its block on where its block
        // starts the K range (triangle 2), else up to its block's end.
        EXPECT_NE(source.find(fmt::format("kSharedSplit ? 1 : 2, {}LL, {});", tile,
                                          upper != (register_b == 1) ? "false" : "true")),
                  std::string::npos)
            << what;
        EXPECT_NE(source.find("long long want = batch > 1 ? 1 : 1;"), std::string::npos) << what;
        EXPECT_EQ(source.find("kiln_sm90_tf32_grouped_gemm"), std::string::npos) << what;
      }
  // Without ranged: the grouped form, and a plain product's unit has CUTLASS's scheduler.
  EXPECT_EQ(generate_matmul_candidate(triangle_genome(), "kb1-14-upper-triangular-matmul")
                .find("TriangleScheduler"),
            std::string::npos);
  Genome plain = triangle_genome({{"cutlass-sm90.copies", 1}});
  plain.strategies.erase("exploit-structure");
  const std::string square = generate_matmul_candidate(plain, "kb1-1-square-matmul");
  EXPECT_NE(square.find("cutlass::gemm::PersistentScheduler>;"), std::string::npos);
  EXPECT_NE(square.find("constexpr bool kTriangleRanges = false;"), std::string::npos);
  EXPECT_NE(square.find("kSharedSplit ? 1 : 2, 0LL, false);"), std::string::npos);
}

// The candidate's host plan (its groups: output blocks, K ranges, slices) and its predicates for
// the operand blocks the split kernels write, cut out of the generated source and run on the CPU
// for both triangles, every group width and several block counts and slice lengths: every block
// of the triangle is covered once, by every K block it needs; a K block beyond those multiplies a
// zero block of B, which the split wrote; nothing off the triangle is computed.
TEST(EvolveMatmulTriangle, PlanCoversTheTriangleExactly) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "kiln_evolve_matmul_triangle_plan";
  std::filesystem::create_directories(dir);
  const auto cut = [](const std::string& text, const std::string& from, const std::string& to) {
    const auto begin = text.find(from);
    const auto end = text.find(to, begin);
    EXPECT_NE(begin, std::string::npos) << from;
    EXPECT_NE(end, std::string::npos) << to;
    return begin == std::string::npos || end == std::string::npos ? std::string()
                                                                  : text.substr(begin, end - begin);
  };
  int index = 0;
  for (const char* problem : {"kb1-14-upper-triangular-matmul", "kb1-15-lower-triangular-matmul"}) {
    for (const int width : {1, 2, 4}) {
      const std::string source = generate_matmul_candidate(
          triangle_genome({{"exploit-structure.group_blocks", width}}), problem);
      const std::string harness =
          "#include <algorithm>\n#include <cstdio>\n#include <vector>\n"
          "#define __device__\n#define __forceinline__ inline\n" +
          cut(source, "constexpr long long kBlock", "// Plain wgmma accumulation") +
          cut(source, "// Whether the operand block", "// Element (row, c) of an operand") +
          cut(source, "// One group of the grouped GEMM", "// The slice sums table on the device") +
          R"(
int main() {
  int failures = 0;
  const auto fail = [&](const char* what, long long a, long long b, long long c) {
    if (failures++ < 10) std::printf("%s %lld %lld %lld\n", what, a, b, c);
  };
  for (long long nt : {1, 2, 3, 5, 16}) {
    for (long long slice : {1, 2, 4, 16}) {
      std::vector<Group> groups;
      std::vector<int> sums;
      int units = 0;
      plan(nt, slice, groups, sums, units);
      std::vector<std::vector<int>> terms(nt * nt, std::vector<int>(nt, 0));
      for (const Group& g : groups)
        for (long long j = g.J; j < g.J + g.w; ++j)
          for (long long l = g.lo; l < g.lo + g.len; ++l) {
            if (j < 0 || j >= nt || l < 0 || l >= nt) { fail("outside", g.I, j, l); continue; }
            ++terms[g.I * nt + j][l];
            if (!a_block_read(g.I, l)) fail("A block not written", g.I, l, 0);
            if (!b_block_read(j, l)) fail("B block not written", j, l, 0);
          }
      for (long long i = 0; i < nt; ++i)
        for (long long j = 0; j < nt; ++j)
          for (long long l = 0; l < nt; ++l) {
            const bool inside = kUpper ? j >= i : j <= i;
            const bool needed = kUpper ? (l >= i && l <= j) : (l >= j && l <= i);
            const bool b_zero = kUpper ? l > j : l < j;
            const int n = terms[i * nt + j][l];
            if (!inside && n != 0) fail("off the triangle", i, j, l);
            if (inside && needed && n != 1) fail("needed term not once", i, j, l);
            if (inside && !needed && n != 0 && !b_zero) fail("extra term, B not zero", i, j, l);
            if (n > 1) fail("term twice", i, j, l);
          }
    }
  }
  return failures == 0 ? 0 : 1;
}
)";
      const std::filesystem::path cpp = dir / fmt::format("plan_{}.cpp", index++);
      std::ofstream(cpp) << harness;
      const std::string exe = cpp.string() + ".exe";
      ASSERT_EQ(
          std::system(fmt::format("c++ -std=c++17 -O1 -o '{}' '{}'", exe, cpp.string()).c_str()), 0)
          << problem << " width " << width;
      EXPECT_EQ(std::system(("'" + exe + "'").c_str()), 0) << problem << " width " << width;
    }
  }
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
