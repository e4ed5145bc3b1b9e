// Strategy-to-kernel translation for the reduce-axis family, first problems (issue 20): the
// reductions over the middle dimension of a (B, D1, D2) tensor (kb1-47..49, 51..53). The
// strategies choose the work mapping (a warp per 32 columns; a block splitting D1 over its warps;
// D1 split over several blocks with a second, ordered combine), the load path (scalar with
// unrolling) and how partials combine (a shared-memory tree); the knobs fill the numbers.
// Strategies without a generator here yet (16-byte loads along a strided axis, cp.async, TMA,
// clusters, the last-block combine) make generate_reduce_candidate throw, which the evaluator
// reports as the genome's failure without compiling anything.
#pragma once

#include <optional>
#include <string>

#include "evolve/genome.hpp"

namespace kiln::evolve {

// "sum", "mean", "max", "min", "argmax", "argmin" for the middle-dimension reduction problems.
std::optional<std::string> middle_reduction_of(const std::string& problem);

// The strategies this generator implements (the search's allowed set).
const StrategySet& reduce_generated_strategies();
std::string generate_reduce_candidate(const Genome& genome, const std::string& problem);

}  // namespace kiln::evolve
