// The evolution engine's search loop without a GPU (issue 20): a synthetic landscape over
// reduce-axis genomes stands in for the judge, with one interaction the catalog does not know
// (cluster-dsmem only compiles with cluster-split-row), which the revision step must handle.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string>

#include "core/error.hpp"
#include "evolve/search.hpp"

namespace kiln::evolve {
namespace {

// U in (0, 1]: products of per-choice factors, each knob with one best value.
Evaluation landscape(const Genome& g) {
  Evaluation e;
  e.roof_us = 100.0;
  e.binding = "memory";
  if (g.has("cluster-dsmem") && !g.has("cluster-split-row")) {
    e.failure = "compile error: distributed shared memory needs a cluster launch";
    return e;
  }
  double u = 0.45;
  if (g.has("vector16-loads")) u = 0.62 * (g.knob("vector16-loads", "unroll") == 4 ? 1.0 : 0.93);
  if (g.has("cp-async-pipeline"))
    u = 0.58 * (g.knob("cp-async-pipeline", "stages") == 3 ? 1.0 : 0.95);
  if (g.has("tma-bulk")) u = 0.55;
  if (g.has("split-row")) u *= g.knob("split-row", "splits") == 8 ? 1.45 : 1.3;
  if (g.has("row-per-block")) u *= g.knob("row-per-block", "threads") == 512 ? 1.25 : 1.15;
  if (g.has("cluster-split-row")) u *= 1.35;
  if (g.has("warp-shuffle")) u *= 1.08;
  if (g.has("last-block-combine")) u *= 1.1;
  if (g.has("persistent-grid")) u *= 1.03;
  e.correct = true;
  e.us = e.roof_us / std::min(u, 1.0);
  return e;
}

double best_after(const SearchOptions& o) {
  return search(Family::kReduceAxis, o, landscape).best.evaluation.fitness();
}

TEST(EvolveSearch, FindsTheLandscapesOptimum) {
  // The optimum: vector16 (unroll 4) + split-row (8) + last-block-combine + persistent grid
  // = 0.62 * 1.45 * 1.1 * 1.03 > 1: capped at 1. Over ten seeds at budget 200: a seed's path
  // shifts with every strategy the catalog gains (2026-11-30, fast-exp: seed 2 stopped at 0.958
  // and seeds 4 and 6 reached the optimum, 8 of 10 before and after), so the test asks for 8 of
  // 10 at the optimum and every seed within 10% of it.
  int at_optimum = 0;
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    SearchOptions o;
    o.budget = 200;
    o.seed = seed;
    const SearchResult r = search(Family::kReduceAxis, o, landscape);
    at_optimum += r.best.evaluation.fitness() >= 0.97;
    EXPECT_GE(r.best.evaluation.fitness(), 0.9)
        << "seed " << seed << ": " << r.best.genome.describe();
    EXPECT_EQ(static_cast<int>(r.history.size()), o.budget);
    EXPECT_FALSE(r.archive.empty());
    for (const Individual& i : r.history) EXPECT_TRUE(violations(i.genome).empty());
  }
  EXPECT_GE(at_optimum, 8);
}

TEST(EvolveSearch, StrategySearchBeatsRandomSearchAtEqualBudget) {
  // Median over 21 seeds of the best U after 60 evaluations. Three seeds at 40 evaluations
  // (the earlier form) was a coin toss: over 21 seeds guided won 12 at 40 evaluations and 15 at
  // 60 before fast-exp joined the catalog, 8 and 10 after (a compute strategy the memory-bound
  // landscape does not reward); the medians at 60: 0.925 / 0.887 before, 0.921 / 0.904 after.
  std::vector<double> guided, random;
  for (std::uint64_t seed = 11; seed < 32; ++seed) {
    SearchOptions o;
    o.budget = 60;
    o.population = 8;
    o.seed = seed;
    guided.push_back(best_after(o));
    o.random_only = true;
    random.push_back(best_after(o));
  }
  std::sort(guided.begin(), guided.end());
  std::sort(random.begin(), random.end());
  const std::size_t mid = guided.size() / 2;
  EXPECT_GT(guided[mid], random[mid]) << "guided " << guided[mid] << ", random " << random[mid];
  std::printf("guided median %.3f (%.3f..%.3f), random median %.3f (%.3f..%.3f)\n", guided[mid],
              guided.front(), guided.back(), random[mid], random.front(), random.back());
}

TEST(EvolveSearch, FailedChildrenAreRevisedAndTheCacheSavesRepeats) {
  // Over three seeds (whether one path draws a failing child depends on the catalog's size).
  long revisions = 0;
  for (std::uint64_t seed : {4, 5, 6}) {
    SearchOptions o;
    o.budget = 200;
    o.seed = seed;
    const SearchResult r = search(Family::kReduceAxis, o, landscape);
    revisions += std::count_if(r.history.begin(), r.history.end(),
                               [](const Individual& i) { return i.origin == "revision"; });
    // Every genome evaluated once.
    std::set<std::uint64_t> hashes;
    for (const Individual& i : r.history) EXPECT_TRUE(hashes.insert(i.genome.hash()).second);
    EXPECT_GT(r.cache_hits, 0) << "seed " << seed;
  }
  EXPECT_GT(revisions, 0);
}

TEST(EvolveSearch, ARevisionDropsTheStrategyTheFailureNames) {
  EXPECT_EQ(find_strategy_name("warp-mma-tiles: not for triangles", "warp-mma-tiles"), 0u);
  EXPECT_EQ(find_strategy_name("needs block-tiles", "block-tiles"), 6u);
  EXPECT_EQ(find_strategy_name("vector16-loads-x failed", "vector16-loads"), std::string::npos);
  EXPECT_EQ(find_strategy_name("xblock-tiles", "block-tiles"), std::string::npos);
  // A genome with at least two optional strategies.
  Rng rng(17);
  Genome g;
  std::vector<std::string> optional;
  for (int i = 0; i < 2000 && optional.size() < 2; ++i) {
    g = random_genome(Family::kReduceAxis, rng, 1.0);
    optional.clear();
    const std::vector<std::string> required = required_groups(g.family);
    for (const std::string& s : g.strategies)
      if (std::find(required.begin(), required.end(), find_strategy(s).group) == required.end())
        optional.push_back(s);
  }
  ASSERT_GE(optional.size(), 2u) << "no reduce-axis genome with two optional strategies";
  const std::string second = optional[1];
  // Named after the genome's own description (which names every strategy): the named one goes.
  for (int i = 0; i < 20; ++i) {
    const Genome r =
        revise(g, g.describe() + ": the generator cannot combine " + second + " here", rng);
    EXPECT_FALSE(r.has(second)) << r.describe();
    EXPECT_TRUE(r.has(optional[0])) << r.describe();
  }
  // Named nowhere: some optional strategy goes, over many draws each of them.
  std::set<std::string> dropped;
  for (int i = 0; i < 200; ++i) {
    const Genome r = revise(g, "max relative error 0.5 at element 7", rng);
    for (const std::string& s : optional)
      if (!r.has(s)) dropped.insert(s);
  }
  EXPECT_EQ(dropped.size(), optional.size());
}

// An individual of one work mapping at fitness u (memory-bound, correct).
Individual of_mapping(const std::string& mapping, double u, int variant = 0) {
  Individual i;
  i.genome.family = Family::kReduceAxis;
  i.genome.strategies = {mapping};
  i.genome.knobs["variant"] = variant;  // tells two genomes of one mapping apart
  i.evaluation.correct = true;
  i.evaluation.roof_us = 100.0;
  i.evaluation.us = 100.0 / u;
  i.evaluation.binding = "memory";
  return i;
}

TEST(EvolveSearch, ArchiveCellsOtherThanTheElitesAreCarriedOver) {
  const Individual a1 = of_mapping("split-row", 0.9), a2 = of_mapping("split-row", 0.85, 1),
                   b1 = of_mapping("row-per-block", 0.6), c1 = of_mapping("cluster-split-row", 0.5);
  const std::vector<Individual> ranked = {a1, a2, b1, c1};
  std::map<std::string, Individual> archive;
  archive["split-row|memory"] = a1;
  archive["row-per-block|memory"] = b1;
  archive["cluster-split-row|memory"] = c1;
  const auto mappings = [](const std::vector<Individual>& v) {
    std::vector<std::string> out;
    for (const Individual& i : v) out.push_back(*i.genome.strategies.begin());
    return out;
  };
  using V = std::vector<std::string>;
  // Two elites, both split-row; then the best other cell.
  EXPECT_EQ(mappings(carried_over(ranked, archive, 2, 1, 16)),
            (V{"split-row", "split-row", "row-per-block"}));
  EXPECT_EQ(mappings(carried_over(ranked, archive, 1, 2, 16)),
            (V{"split-row", "row-per-block", "cluster-split-row"}));
  // None from the archive: the elites alone (the search before archive_elites).
  EXPECT_EQ(mappings(carried_over(ranked, archive, 2, 0, 16)), (V{"split-row", "split-row"}));
  // Room for one child at least.
  EXPECT_EQ(carried_over(ranked, archive, 1, 2, 2).size(), 1u);
  EXPECT_EQ(carried_over(ranked, archive, 1, 2, 3).size(), 2u);
  // The search refuses a negative count.
  SearchOptions o;
  o.archive_elites = -1;
  EXPECT_THROW(search(Family::kReduceAxis, o, landscape), UsageError);
}

TEST(EvolveSearch, ReplayTakesTheRecordedPath) {
  SearchOptions o;
  o.budget = 60;
  o.seed = 9;
  const SearchResult recorded = search(Family::kReduceAxis, o, landscape);
  const nlohmann::json log = history_to_log(recorded.history);
  const SearchResult replayed =
      search(Family::kReduceAxis, o, replay_evaluator(nlohmann::json::parse(log.dump())));
  ASSERT_EQ(replayed.history.size(), recorded.history.size());
  for (std::size_t i = 0; i < recorded.history.size(); ++i) {
    EXPECT_EQ(replayed.history[i].genome, recorded.history[i].genome) << i;
    EXPECT_EQ(replayed.history[i].evaluation.fitness(), recorded.history[i].evaluation.fitness());
  }
  // Another seed leaves the recorded path: the replay says which genome is missing.
  o.seed = 10;
  EXPECT_THROW(search(Family::kReduceAxis, o, replay_evaluator(log)), Error);
}

TEST(EvolveSearch, AResumedRunEqualsAnUninterruptedOne) {
  SearchOptions o;
  o.budget = 60;
  o.seed = 21;
  const SearchResult whole = search(Family::kReduceAxis, o, landscape);
  // Interrupted after 25 evaluations: its log is the checkpoint.
  o.budget = 25;
  const nlohmann::json checkpoint =
      history_to_log(search(Family::kReduceAxis, o, landscape).history);
  int fresh_calls = 0;
  o.budget = 60;
  const SearchResult resumed =
      search(Family::kReduceAxis, o, resuming_evaluator(checkpoint, [&](const Genome& g) {
               ++fresh_calls;
               return landscape(g);
             }));
  ASSERT_EQ(resumed.history.size(), whole.history.size());
  for (std::size_t i = 0; i < whole.history.size(); ++i)
    EXPECT_EQ(resumed.history[i].genome, whole.history[i].genome) << i;
  EXPECT_EQ(fresh_calls, 35);  // only what the checkpoint did not hold
  EXPECT_THROW(resuming_evaluator(nlohmann::json::object(), landscape), UsageError);
}

TEST(EvolveSearch, SeedsJoinTheFirstPopulationAndBadOptionsAreRefused) {
  Genome naive;
  naive.family = Family::kReduceAxis;
  naive.strategies = {"scalar-loads", "row-per-warp", "shared-tree"};
  ASSERT_TRUE(violations(naive).empty());
  SearchOptions o;
  o.budget = 30;
  const SearchResult r = search(Family::kReduceAxis, o, landscape, {naive});
  EXPECT_EQ(r.history.front().genome, naive);
  EXPECT_EQ(r.history.front().origin, "seed");
  Genome wrong = naive;
  wrong.family = Family::kMap;
  EXPECT_THROW(search(Family::kReduceAxis, o, landscape, {wrong}), Error);
  o.elites = o.population;
  EXPECT_THROW(search(Family::kReduceAxis, o, landscape), Error);
}

// Every work mapping of the allowed set enters the first population at its defaults (also one a
// seed uses at other values); a search grown from its seeds alone (the ladder) gets none.
TEST(EvolveSearch, EachWorkMappingStartsAtItsDefaults) {
  SearchOptions o;
  o.budget = 16;
  o.allowed = {"vector16-loads", "row-per-block", "row-per-warp", "shared-tree", "warp-shuffle"};
  Genome seed;
  seed.family = Family::kReduceAxis;
  seed.strategies = {"vector16-loads", "row-per-warp", "warp-shuffle"};
  seed.knobs = {{"vector16-loads.unroll", 4}};
  ASSERT_TRUE(violations(seed).empty());
  const SearchResult r = search(Family::kReduceAxis, o, landscape, {seed});
  std::vector<Genome> defaults;
  for (const Individual& i : r.history)
    if (i.origin == "default") defaults.push_back(i.genome);
  ASSERT_EQ(defaults.size(), 2u);
  EXPECT_TRUE(defaults[0].has("row-per-block") || defaults[1].has("row-per-block"));
  EXPECT_TRUE(defaults[0].has("row-per-warp") || defaults[1].has("row-per-warp"));
  for (const Genome& g : defaults) {
    EXPECT_TRUE(g.knobs.empty());  // every knob at its default
    EXPECT_TRUE(violations(g).empty());
    EXPECT_NE(g, seed);
  }
  o.grow_from_seeds = true;
  for (const Individual& i : search(Family::kReduceAxis, o, landscape, {seed}).history)
    EXPECT_NE(i.origin, "default");
  o.grow_from_seeds = false;
  o.mapping_defaults = false;
  for (const Individual& i : search(Family::kReduceAxis, o, landscape, {seed}).history)
    EXPECT_NE(i.origin, "default");
}

// A problem whose allowed set has a structure strategy (the triangular matmuls) also starts with
// each work mapping's default carrying it, where the two can go together, in each of the
// structure's forms (exploit-structure's grouped and ranged GEMMs).
TEST(EvolveSearch, StructureTheProblemHasIsTriedFromTheStart) {
  SearchOptions o;
  o.budget = 8;
  o.population = 8;
  o.allowed = {"cutlass-sm80-mma", "cutlass-sm90", "tf32x3", "exploit-structure"};
  int structured = 0, defaults = 0, ranged = 0;
  for (const Individual& i : search(Family::kMatmul, o, landscape).history) {
    if (i.origin != "default") continue;
    ++defaults;
    EXPECT_TRUE(violations(i.genome).empty()) << i.genome.describe();
    if (!i.genome.has("exploit-structure")) continue;
    ++structured;
    ranged += i.genome.knob("exploit-structure", "ranged");
    EXPECT_TRUE(i.genome.has("cutlass-sm90")) << i.genome.describe();  // never with sm80
  }
  EXPECT_EQ(defaults, 4);
  EXPECT_EQ(structured, 2);
  EXPECT_EQ(ranged, 1);
  o.allowed.erase("exploit-structure");
  for (const Individual& i : search(Family::kMatmul, o, landscape).history)
    EXPECT_FALSE(i.genome.has("exploit-structure"));
}

TEST(EvolveSearch, GuidanceFavoursTheBindingResource) {
  Evaluation memory_far;
  memory_far.correct = true;
  memory_far.roof_us = 100;
  memory_far.us = 400;
  memory_far.binding = "memory";
  const auto w = guidance_weights(memory_far);
  EXPECT_GT(w.at(Resource::kHbm), w.at(Resource::kCompute));
  // L2 strategies (data read twice kept on chip) gain too, behind HBM ones.
  EXPECT_GT(w.at(Resource::kL2), w.at(Resource::kCompute));
  EXPECT_GT(w.at(Resource::kHbm), w.at(Resource::kL2));
  // At the roof nothing is favoured.
  Evaluation at_roof = memory_far;
  at_roof.us = 100;
  EXPECT_DOUBLE_EQ(guidance_weights(at_roof).at(Resource::kL2),
                   guidance_weights(at_roof).at(Resource::kCompute));
  Evaluation compute_far = memory_far;
  compute_far.binding = "compute";
  EXPECT_GT(guidance_weights(compute_far).at(Resource::kCompute),
            guidance_weights(compute_far).at(Resource::kHbm));
  EXPECT_TRUE(guidance_weights(Evaluation{}).empty());
}

}  // namespace
}  // namespace kiln::evolve
