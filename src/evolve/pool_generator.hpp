// Strategy-to-kernel translation for the pooling family (issue 20): the kb1 pooling problems
// (kb1-41..46: max and average pooling in 1, 2 and 3 dimensions, PyTorch's nn.MaxPool*d /
// nn.AvgPool*d with their KernelBench kernel, stride, padding and dilation; ceil_mode False,
// count_include_pad True). Each thread computes a run of consecutive outputs along the innermost
// axis. The strategies choose the run (scalar-loads: `unroll` outputs; vector16-loads: `unroll`
// float4s of outputs, stored 16 bytes at a time where aligned) and the work mapping (a one-shot
// grid: element-per-thread; a grid sized to the SMs that walks the outputs: grid-stride, or
// persistent-grid); the knobs fill in the numbers. cp.async and TMA have no generator here: such
// genomes are reported as failures without compiling anything.
#pragma once

#include <optional>
#include <string>

#include "evolve/genome.hpp"

namespace kiln::evolve {

// A kb1 pooling problem's window (the same on every spatial axis).
struct PoolWindow {
  bool max = true;  // max, else average
  int dims = 1;     // spatial dimensions
  int kernel = 1, stride = 1, padding = 0, dilation = 1;
};
// The window of a kb1 pooling problem; none for other problems.
std::optional<PoolWindow> pool_window_of(const std::string& problem);

// The strategies this generator implements (the search's allowed set).
const StrategySet& pool_generated_strategies();

// The candidate source for `problem` (a pooling problem) built from `genome` (a valid pooling
// genome of the allowed set). Throws kiln::UsageError when either is not.
std::string generate_pool_candidate(const Genome& genome, const std::string& problem);

}  // namespace kiln::evolve
