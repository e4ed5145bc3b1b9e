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
