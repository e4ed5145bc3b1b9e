// Confirmation of a search's best kernels (issue 20). A search ranks its candidates by screened
// timing (bench/screened_timing.hpp: cheap, for kiln's own kernels only); what it reports is
// judged again with the judge's guarded timing, the verdict an outside kernel would get. The
// best confirmed kernel is the run's result; a kernel the guarded judge rejects is not.
#pragma once

#include <vector>

#include "evolve/search.hpp"

namespace kiln::evolve {

// The `count` best accepted individuals of `history` by fitness, one per genome (ties: the
// earliest evaluation first).
std::vector<Individual> best_accepted(const std::vector<Individual>& history, int count);

// The candidates for confirmation, `count` at most, in the order they are confirmed: the best of
// each work mapping first (mappings in the order of their best; those whose best has under half
// the overall best's fitness not promoted), then the rest by fitness. Screened timing
// can misjudge a whole kernel structure: on the H200 (2026-11-29g) the screen put a
// warp-row-separable avgpool-3d at U 0.588 that the guarded judge timed at 0.348, while
// sliding-planes, screened just below it, was 0.547 guarded; confirming only the top genomes
// of one mapping kept the wrong structure.
std::vector<Individual> confirmation_order(const std::vector<Individual>& history, int count);

struct Confirmed {
  Individual screened;   // as the search judged it
  Evaluation confirmed;  // judged again (guarded timing)
};

// Judges each of `candidates` again with `evaluate`, in order.
std::vector<Confirmed> confirm(const std::vector<Individual>& candidates,
                               const Evaluator& evaluate);

// The index of the confirmed kernel with the highest confirmed fitness (ties: the first), or -1
// when the judge accepted none.
int best_confirmed(const std::vector<Confirmed>& confirmed);

}  // namespace kiln::evolve
