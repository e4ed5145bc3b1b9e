// Strategy-to-kernel translation for kb1-97, scaled dot-product attention (issue 20):
// O = softmax(Q K^T / sqrt(d)) V for Q, K, V of (batch, heads, seq, d), fp32, no mask. The
// generated candidate takes the two-pass route: the scores of every head are materialised by one
// batched GEMM, softmaxed in place a warp per row (the 1/sqrt(d) scale applied there), then
// multiplied by V in a second batched GEMM. Both GEMMs are CUTLASS 2.x with 3xTF32 on tensor
// cores and the genome's tile configuration: the matmul family's units (matmul_generator.hpp's
// sm80_gemm_unit), so a configuration's GEMMs are built once for both families and can be built
// ahead (scripts/prebuild_*_units.sh); before 2026-11-29e each candidate was built whole, and
// kb1-97 alone took most of a device call to compile. A fused, one-pass (flash) kernel that never
// writes the scores is the online-one-pass strategy, not generated yet.
#pragma once

#include <string>

#include "evolve/genome.hpp"

namespace kiln::evolve {

bool is_attention_problem(const std::string& problem);

// The strategies this generator implements (the search's allowed set).
const StrategySet& attention_generated_strategies();

// The candidate source for kb1-97 from `genome`. Throws kiln::UsageError when either the problem
// or the genome is not one this generator translates.
std::string generate_attention_candidate(const Genome& genome, const std::string& problem);

}  // namespace kiln::evolve
