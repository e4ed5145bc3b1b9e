// The sm90 3xTF32 matmuls' operand splits and slice sums run on the CPU (issue 20; no GPU
// needed): the kernels of a generated candidate (without the CUTLASS GEMM and the host code) are
// compiled with the host compiler into a harness of tests/emulation/ (matmul_split_harness.cpp
// for the plain products, matmul_triangle_harness.cpp for the triangular ones), where
// tests/emulation/cuda_fibers.h runs every block's threads as fibers, under AddressSanitizer and
// UBSan, compared bit for bit with the host's split and sum: the index logic of the transposing
// tiles and of the 16-byte vector paths (2026-11-30b) in CI, beyond the GPU tests' shapes.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "emulation_support.hpp"
#include "evolve/matmul_generator.hpp"
#include "evolve_generator_test_support.hpp"  // genome_of

namespace kiln::evolve {
namespace {

// The text of `source` from `from` up to `to` (exclusive); "" if either is missing.
std::string between(const std::string& source, const std::string& from, const std::string& to) {
  const std::size_t a = source.find(from);
  const std::size_t b = a == std::string::npos ? a : source.find(to, a);
  return b == std::string::npos ? "" : source.substr(a, b - a);
}

// The split and sum kernels of an sm90 candidate: from put3's comment to the entry point.
std::string split_kernels(const std::string& source) {
  return between(source, "// One element of the operand, written to its",
                 "extern \"C\" int kiln_candidate_abi_version");
}

TEST(EvolveMatmulSplitEmulation, SplitsAndSlicesSumsAreExactOnTheCpu) {
  if (const std::string missing = missing_host_compiler(); !missing.empty())
    GTEST_SKIP() << missing;
  const Genome g = genome_of(Family::kMatmul, {"cutlass-sm90", "tf32x3"}, {});
  const std::string source = generate_matmul_candidate(g, "kb1-16-matmul-transposed-a");
  const std::string kernels = split_kernels(source);
  ASSERT_FALSE(kernels.empty()) << "the candidate's split kernels were not found";
  // The emulation stands in for the device's cvt.rna.tf32.f32 (the harness's tf32_big).
  ASSERT_NE(kernels.find("split_rows_contiguous"), std::string::npos);
  ASSERT_EQ(kernels.find("tf32_big(float x) {"), std::string::npos);
  const std::string output = run_emulation("matmul_split_harness.cpp", kernels, "sm90-split",
                                           fresh_emulation_dir("kiln_matmul_split_emulation"));
  EXPECT_NE(output.find("sm90-split: 0 bad of 576 runs"), std::string::npos) << output;
}

// The two-copy GEMM's load schedule (the unit's for_each_phase_run, as PhasedMainloop::load
// calls it): every K slice's tiles, whole and in pieces, load each of the three products' tile
// pairs exactly once and nothing past the two stored copies.
TEST(EvolveMatmulSplitEmulation, TwoCopyLoadsAreTheThreeProductsOnce) {
  if (const std::string missing = missing_host_compiler(); !missing.empty())
    GTEST_SKIP() << missing;
  const Genome g = genome_of(Family::kMatmul, {"cutlass-sm90", "tf32x3"},
                             {{"cutlass-sm90.copies", 2}, {"cutlass-sm90.split_k", 2}});
  const std::string runs = between(generate_matmul_candidate(g, "kb1-2-matmul"),
                                   "// kiln-phase-runs: begin", "// kiln-phase-runs: end");
  ASSERT_NE(runs.find("for_each_phase_run"), std::string::npos)
      << "the unit's phase schedule was not found";
  const std::string output = run_emulation("phase_runs_harness.cpp", runs, "phase-runs",
                                           fresh_emulation_dir("kiln_phase_runs_emulation"));
  EXPECT_NE(output.find("phase-runs: 0 bad of"), std::string::npos) << output;
}

// The ranged triangle's scheduler (exploit-structure ranged = 1; its unit's kiln-triangle-tiles
// text, as TriangleScheduler calls it): every tile once, the ranged ones longest first, and
// each tile's K range exactly the k-tiles holding a non-zero term, for tiles of 32, 64 and 128
// and sizes that are not multiples of them.
TEST(EvolveMatmulSplitEmulation, RangedTriangleTilesAndKRangesAreExact) {
  if (const std::string missing = missing_host_compiler(); !missing.empty())
    GTEST_SKIP() << missing;
  const Genome g = genome_of(Family::kMatmul, {"cutlass-sm90", "tf32x3", "exploit-structure"},
                             {{"exploit-structure.ranged", 1}});
  const std::string tiles = between(generate_matmul_candidate(g, "kb1-15-lower-triangular-matmul"),
                                    "// kiln-triangle-tiles: begin", "// kiln-triangle-tiles: end");
  ASSERT_NE(tiles.find("triangle_k_count"), std::string::npos)
      << "the unit's triangle tile order was not found";
  const std::string output = run_emulation("triangle_tiles_harness.cpp", tiles, "triangle-tiles",
                                           fresh_emulation_dir("kiln_triangle_tiles_emulation"));
  EXPECT_NE(output.find("triangle-tiles: 0 bad of"), std::string::npos) << output;
}

TEST(EvolveMatmulSplitEmulation, TriangleSplitsAndSlicesSumsAreExactOnTheCpu) {
  if (const std::string missing = missing_host_compiler(); !missing.empty())
    GTEST_SKIP() << missing;
  const std::filesystem::path dir = fresh_emulation_dir("kiln_matmul_triangle_emulation");
  // Blocks of 128 (the knob's smallest: the emulated sizes stay small), upper and lower, groups
  // of one and two column blocks (B' then holds the zeros a group's widest K range reads).
  for (const char* problem : {"kb1-14-upper-triangular-matmul", "kb1-15-lower-triangular-matmul"})
    for (const int group : {1, 2}) {
      const Genome g =
          genome_of(Family::kMatmul, {"cutlass-sm90", "tf32x3", "exploit-structure"},
                    {{"exploit-structure.block", 128}, {"exploit-structure.group_blocks", group}});
      const std::string source = generate_matmul_candidate(g, problem);
      const std::string constants =
          between(source, "constexpr long long kBlock", "constexpr long long kMaxTerms");
      const std::string kernels = between(source, "// Whether the operand block (row block R",
                                          "// One group of the grouped GEMM");
      ASSERT_FALSE(constants.empty() || kernels.empty()) << problem << ": kernels not found";
      ASSERT_NE(kernels.find("split_b"), std::string::npos);
      const std::string tag =
          std::string(problem).substr(0, 6) + "-g" + std::to_string(group);  // "kb1-14-g1"
      const std::string output =
          run_emulation("matmul_triangle_harness.cpp", constants + "\n" + kernels, tag, dir);
      const int runs = 8;  // four sizes, each its splits and its slice sums
      EXPECT_NE(output.find(tag + ": 0 bad of " + std::to_string(runs) + " runs"),
                std::string::npos)
          << output;
    }
}

}  // namespace
}  // namespace kiln::evolve
