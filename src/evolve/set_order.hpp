// The order in which `kiln evolve set` takes its problems (issue 20's engine speed). Kernels that
// are CUTLASS instantiations (the matmul and attention families) compile for 20-55 s a unit on
// one core, the others' for 0.3-1.6 s. Taken in the registry's order, the first eight slots of a
// set run were all matmuls (kb1-1..8): every core compiled CUTLASS while the GPU waited. Spread
// evenly among the others, each compile-heavy problem shares the cores with problems whose
// candidates keep the judge busy.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kiln::evolve {

// `names` with the ones `heavy` picks spread evenly among the rest (each group keeps its order);
// the first problem is a light one when there is any.
std::vector<std::string> spread_compile_heavy(const std::vector<std::string>& names,
                                              const std::function<bool(const std::string&)>& heavy);

// The problem a free worker of a set run takes next: the first in `order` not started yet, except
// that a heavy one waits while `max_heavy` heavy ones run, as long as a light one is left to
// take. A heavy problem runs for several times a light one's time, so the spread order alone let
// heavy problems pile up in the workers (H200, 2026-11-29: five matmul searches and three light
// ones at once, the GPU idle most of four minutes). Nothing left to start: none.
std::optional<std::size_t> next_problem(const std::vector<bool>& started,
                                        const std::vector<bool>& heavy, int heavy_running,
                                        int max_heavy);

}  // namespace kiln::evolve
