// Strategy-to-kernel translation for the scan family (issue 20): the cumulative problems of
// KernelBench level 1 (kb1-89..93: cumsum, cumprod, reverse and exclusive cumsum, masked cumsum,
// each along the rows of a rows x cols fp32 tensor). A team (a warp: row-per-warp; a block:
// row-per-block) scans one row in chunks, each thread a run of consecutive elements per chunk,
// carrying the row's running value from chunk to chunk. The strategies choose the team, the load
// path (scalar, or 16-byte vectors with a scalar fallback) and how the threads' partial results
// are combined (a Hillis-Steele scan in shared memory: shared-tree; warp shuffles, shared memory
// only between warps: warp-shuffle); the knobs fill in the numbers. Other strategies of the family
// (split-row, cp.async, TMA) make generate_scan_candidate throw, which the evaluator reports as
// the genome's failure without compiling anything.
#pragma once

#include <optional>
#include <string>

#include "evolve/genome.hpp"

namespace kiln::evolve {

// What a cumulative kb1 problem computes: the combine ("sum" or "prod") and its variant.
struct ScanKind {
  std::string op = "sum";
  bool reverse = false;    // suffix scan (kb1-91)
  bool exclusive = false;  // y[j] = x[0] + ... + x[j-1], y[0] = 0 (kb1-92)
  bool masked = false;     // x * mask, mask one byte per element as inputs[1] (kb1-93)
};
// The scan of a cumulative kb1 problem; none for other problems.
std::optional<ScanKind> scan_kind_of(const std::string& problem);

// The strategies this generator implements (the search's allowed set).
const StrategySet& scan_generated_strategies();

// The candidate source for `problem` (a cumulative problem) built from `genome` (a valid scan
// genome of the allowed set). Throws kiln::UsageError when either is not.
std::string generate_scan_candidate(const Genome& genome, const std::string& problem);

}  // namespace kiln::evolve
