// The sm90 3xTF32 matmul's operand splits and slice sums run on the CPU (issue 20; no GPU
// needed): the kernels of a generated candidate (from put3 to the entry point; the rest is the
// CUTLASS GEMM and host code) are compiled with the host compiler into
// tests/emulation/matmul_split_harness.cpp, where tests/emulation/cuda_fibers.h runs every
// block's threads as fibers, under AddressSanitizer and UBSan. Both source layouts, 1-3 K slices,
// batches, aligned and unaligned sources, shapes off every tile, compared bit for bit with the
// host's split and sum: the index logic of the transposing tile and of the 16-byte vector paths
// (2026-11-30b) in CI, besides the GPU tests' problem shapes.
#include <gtest/gtest.h>

#include <string>

#include "emulation_support.hpp"
#include "evolve/matmul_generator.hpp"
#include "evolve_generator_test_support.hpp"  // genome_of

namespace kiln::evolve {
namespace {

// The split and sum kernels of an sm90 candidate: from put3's comment to the entry point.
std::string split_kernels(const std::string& source) {
  const std::size_t from =
      source.find("// One element of the operand, written to its three blocks");
  const std::size_t to = source.find("extern \"C\" int kiln_candidate_abi_version");
  if (from == std::string::npos || to == std::string::npos || to < from) return "";
  return source.substr(from, to - from);
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
  EXPECT_NE(output.find("sm90-split: 0 bad of 288 runs"), std::string::npos) << output;
}

}  // namespace
}  // namespace kiln::evolve
