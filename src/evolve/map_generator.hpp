// Strategy-to-kernel translation without an LLM for the map family (issue 20): a genome's
// strategies select the building blocks of an element-wise kernel (load path, work mapping,
// grid) and its knobs fill in the numbers; the result is a readable CUDA source with kiln's
// candidate entry point (include/kiln/candidate.h), judged like any outside candidate.
#pragma once

#include <optional>
#include <string>

#include "evolve/genome.hpp"

namespace kiln::evolve {

// The element-wise function of a kb1 map problem as a CUDA expression of `float x`; none for
// problems outside the map family.
std::optional<std::string> map_expression(const std::string& problem);

// The strategies this generator implements (the search's allowed set).
const StrategySet& map_generated_strategies();

// The candidate source for `problem` (a map problem) built from `genome` (a valid map genome).
// Throws kiln::UsageError when either is not.
std::string generate_map_candidate(const Genome& genome, const std::string& problem);

}  // namespace kiln::evolve
