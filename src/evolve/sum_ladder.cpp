// See sum_ladder.hpp. The steps follow kiln's reduction presets (src/kernels/reduce_variant.cpp),
// one strategy added per step.
#include "evolve/sum_ladder.hpp"

#include "evolve/sum_generator.hpp"

namespace kiln::evolve {

std::vector<std::pair<std::string, Genome>> sum_ladder_genomes() {
  std::vector<std::pair<std::string, Genome>> steps;
  Genome g = naive_sum_genome();  // v1: interleaved addressing, tree in global memory
  steps.emplace_back("v1", g);
  g.strategies.erase("interleaved-tree");
  g.knobs.erase("interleaved-tree.in_global");
  g.strategies.insert("global-sequential-tree");  // v2a: sequential addressing
  steps.emplace_back("v2a", g);
  g.strategies.erase("global-sequential-tree");
  g.strategies.insert("shared-tree");  // v2b: the tree in shared memory
  steps.emplace_back("v2b", g);
  g.knobs["scalar-loads.unroll"] = 2;  // v2c: first add during the load
  steps.emplace_back("v2c", g);
  g.strategies.insert("unrolled-last-warp");  // v3a
  steps.emplace_back("v3a", g);
  g.strategies.erase("unrolled-last-warp");
  g.strategies.insert("shuffle-last-warp");  // v3b
  steps.emplace_back("v3b", g);
  g.strategies.insert("complete-unroll");  // v4
  steps.emplace_back("v4", g);
  Genome vec;  // kiln's "vec": 16-byte loads x4, warp shuffles, persistent grid, last block
  vec.family = Family::kReduceAxis;
  vec.strategies = {"vector16-loads",  "block-tiles",        "warp-shuffle",
                    "persistent-grid", "last-block-combine", "complete-unroll"};
  vec.knobs = {{"vector16-loads.unroll", 4},
               {"block-tiles.threads", 256},
               {"persistent-grid.blocks_per_sm", 4}};
  steps.emplace_back("vec", vec);
  vec.strategies.erase("last-block-combine");
  vec.strategies.insert("atomic-combine");
  steps.emplace_back("vec-atomic", vec);
  return steps;
}

}  // namespace kiln::evolve
