// Strategy-to-kernel translation for KernelBench level 1's two matrix-vector problems (issue 20):
// kb1-4, y = A x (A of M x K, row-major), a dot product per row, and kb1-12, diag(a) @ B, every
// row of B scaled by its element of a. Both read their matrix once, so memory bounds them.
//  - matrix-vector (reduce-axis family): a warp or a block per row, scalar or 16-byte loads of A
//    and x (x stays in L2: every row reads it), the block's partial sums combined by a
//    shared-memory tree or warp shuffles, in a fixed order (deterministic).
//  - row scaling (map family): an element (or four, with 16-byte loads) per thread, in a one-shot
//    grid or a grid-stride walk; each thread finds its row's factor from its index.
#pragma once

#include <optional>
#include <string>

#include "evolve/genome.hpp"

namespace kiln::evolve {

// "matvec" (kb1-4), "row-scale" (kb1-12); none for other problems.
std::optional<std::string> blas2_kind_of(const std::string& problem);

// The strategies this generator implements for `problem` (the search's allowed set).
const StrategySet& blas2_generated_strategies(const std::string& problem);

// The candidate source for `problem` from `genome`. Throws kiln::UsageError when either is not
// one this generator translates.
std::string generate_blas2_candidate(const Genome& genome, const std::string& problem);

}  // namespace kiln::evolve
