// The reduction study's ladder as genomes of the whole-array sum generator (sum_generator.hpp):
// v1 (the naive seed) ... v4, and kiln's own single-pass kernels. The ladder test compares what
// the search finds with these steps; the tests judge each of them.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "evolve/genome.hpp"

namespace kiln::evolve {

// (step name, genome) in the study's order: v1, v2a, v2b, v2c, v3a, v3b, v4, vec, vec-atomic.
std::vector<std::pair<std::string, Genome>> sum_ladder_genomes();

}  // namespace kiln::evolve
