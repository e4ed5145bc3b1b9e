// The order in which `kiln evolve set` takes its problems (issue 20's engine speed). Kernels that
// are CUTLASS instantiations (the matmul and attention families) compile for 20-55 s a unit on
// one core, the others' for 0.3-1.6 s, so a heavy search runs several times a light one's time.
// Longest first (the classic rule for the last worker's finish): the heavy problems are taken
// first, the slowest family first, as many at once as next_problem's cap allows, while light
// ones fill the other workers and keep the judge busy. Spread evenly among the light ones (the
// rule until 2026-11-29e), the last heavy ones started near the end: kb1-97-sdpa (59 CUTLASS
// configurations in 86 evaluations, each built whole) started last and alone took a third call,
// its GPU idle in 65 of 78 samples (H200, docs/results/2026-11-29e-pool-start-set/).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kiln::evolve {

// `names` by `weight` (how long a problem's search is expected to run: 0 light, higher slower),
// heaviest first; equal weights keep their order.
std::vector<std::string> longest_first(const std::vector<std::string>& names,
                                       const std::function<int(const std::string&)>& weight);

// The problem a free worker of a set run takes next: the first in `order` not started yet, except
// that a heavy one waits while `max_heavy` heavy ones run, as long as a light one is left to
// take. Without the cap, heavy problems pile up in the workers (H200, 2026-11-29: five matmul
// searches and three light ones at once, the GPU idle most of four minutes). Nothing left to
// start: none.
std::optional<std::size_t> next_problem(const std::vector<bool>& started,
                                        const std::vector<bool>& heavy, int heavy_running,
                                        int max_heavy);

}  // namespace kiln::evolve
