// Replays a recorded `kiln evolve run` on the CPU: the search re-run from the folder's run.json
// (problem, seed, population, random, seed_naive), seeds.json and log.json, every evaluation
// taken from the log instead of the judge. It takes the recorded path only if the search logic
// and the strategy catalog are the ones that recorded it: a check of search changes against real
// device runs, no GPU needed (the replay mode). Runs recorded by an older kiln leave the
// path at the first generation whose draws the changes reach (the 2026-11-25 structure-strips
// runs leave it after their first population, 9-12 of 16 evaluations, with the catalog and the
// search of 2026-11-28, before and after that day's search changes alike).
#pragma once

#include <cstddef>
#include <string>

namespace kiln::evolve {

struct RunReplay {
  std::size_t recorded = 0;  // evaluations in the log
  std::size_t replayed = 0;  // evaluations the replay took before it ended or left the path
  bool same_path = false;    // every evaluation in the recorded order
  std::string divergence;    // where it left the path ("" when it did not)
};

// Throws kiln::UsageError naming the file when `folder` holds no run (run.json, seeds.json,
// log.json) or a file is not what a run writes.
RunReplay replay_run(const std::string& folder);

}  // namespace kiln::evolve
