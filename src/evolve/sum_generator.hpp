// Strategy-to-kernel translation for whole-array reductions (issue 20's ladder test,
// reduce-sum-int32): the steps of the tensor-reduction study (Harris, "Optimizing Parallel
// Reduction in CUDA") and the modern ones, each a strategy of the reduce-axis family:
//   reduction:   interleaved-tree (v1; in a global scratch array or shared memory),
//                global-sequential-tree (v2a), shared-tree (v2b), warp-shuffle (whole block);
//   warp-tail:   unrolled-last-warp (v3a), shuffle-last-warp (v3b);
//   unrolling:   complete-unroll (v4: block size a compile-time constant);
//   load-path:   scalar-loads / vector16-loads, `unroll` = items per thread (v2c: first add
//                during the load);
//   work:        block-tiles (threads per block), persistent-grid (blocks per SM);
//   completion:  none (relaunch on the partials until one value is left: multi-pass),
//                atomic-combine, last-block-combine.
// The generated source holds only the parts a genome selects. Sums wrap in 32 bits (unsigned
// arithmetic), which makes int32 sums exact in any order.
#pragma once

#include <optional>
#include <string>

#include "evolve/genome.hpp"

namespace kiln::evolve {

// The element type ("int") of a whole-array sum problem kiln generates kernels for; none else.
std::optional<std::string> whole_sum_element(const std::string& problem);

// The strategies this generator implements (the search's allowed set).
const StrategySet& sum_generated_strategies();
// The study's first kernel as a genome: interleaved addressing, tree in global memory, one item
// per thread, 256 threads, multi-pass (the ladder test's only seed).
Genome naive_sum_genome();
std::string generate_sum_candidate(const Genome& genome, const std::string& problem);

}  // namespace kiln::evolve
