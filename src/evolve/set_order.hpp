// The order in which `kiln evolve set` takes its problems (issue 20's engine speed). Kernels that
// are CUTLASS instantiations (the matmul and attention families) compile for 20-55 s a unit on
// one core, the others' for 0.3-1.6 s. Taken in the registry's order, the first eight slots of a
// set run were all matmuls (kb1-1..8): every core compiled CUTLASS while the GPU waited. Spread
// evenly among the others, each compile-heavy problem shares the cores with problems whose
// candidates keep the judge busy.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace kiln::evolve {

// `names` with the ones `heavy` picks spread evenly among the rest (each group keeps its order);
// the first problem is a light one when there is any.
std::vector<std::string> spread_compile_heavy(const std::vector<std::string>& names,
                                              const std::function<bool(const std::string&)>& heavy);

}  // namespace kiln::evolve
