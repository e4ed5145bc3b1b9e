// Strategy-to-kernel translation for the loss problems of KernelBench level 1 (issue 20): MSE
// (kb1-94), cross entropy (95), Huber (96), KL divergence (98), triplet margin (99) and hinge
// (100), each one fp32 scalar from a rows x cols problem. Element losses (94, 96, 98, 100) sum a
// term per element; row losses (95, 99) first gather statistics per row (an online max and sum of
// exp; two sums of squares), then sum a term per row.
//
// The strategies choose who walks the data (a warp per row, a block per row, or, for the element
// losses whose term needs no column, tiles of the flat array), whether the grid is one-shot or
// persistent, the load path (scalar, or 16-byte vectors where rows allow), the block's combine (a
// shared-memory tree or warp shuffles) and how the block partials become the scalar (the last
// block to finish adds them, or a second kernel does). Partials are doubles combined in a fixed
// order, so the result is deterministic, as the judge requires.
#pragma once

#include <optional>
#include <string>

#include "evolve/genome.hpp"

namespace kiln::evolve {

struct LossKind {
  std::string loss;           // "mse", "cross-entropy", "huber", "kl-div", "triplet", "hinge"
  bool per_row = false;       // a term per row (95, 99) rather than per element
  bool needs_column = false;  // the term reads a per-column input (100's targets)
};
// The loss of a kb1 loss problem; none for other problems.
std::optional<LossKind> loss_kind_of(const std::string& problem);

// The strategies this generator implements for `problem` (the search's allowed set).
const StrategySet& loss_generated_strategies(const std::string& problem);

// The candidate source for `problem` built from `genome` (a valid reduce-axis genome of the
// problem's allowed set). Throws kiln::UsageError when either is not.
std::string generate_loss_candidate(const Genome& genome, const std::string& problem);

}  // namespace kiln::evolve
