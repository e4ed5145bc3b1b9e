// The strategy pool without a GPU (issue 20): the best entry per key and genome is kept,
// retrieval orders by fitness and backs off field by field, files round-trip.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <set>

#include "core/error.hpp"
#include "evolve/strategy_pool.hpp"

namespace kiln::evolve {
namespace {

PoolKey key(const std::string& binding, const std::string& arch) {
  return {"single-gpu", binding, "large", "fp32", arch};
}

TEST(EvolvePool, KeepsTheBestAndRetrievesWithBackOff) {
  Rng rng(2);
  StrategyPool pool;
  const Genome a = random_genome(Family::kMap, rng), b = random_genome(Family::kMap, rng);
  const Genome c = random_genome(Family::kScan, rng);
  ASSERT_NE(a, b);
  pool.add({key("memory", "sm_90"), a, 0.7, 1.2, "kb1-19-relu"});
  pool.add({key("memory", "sm_90"), a, 0.9, 1.3, "kb1-19-relu"});        // same genome: better kept
  pool.add({key("memory", "sm_90"), a, 0.5, 1.0, "kb1-20-leaky-relu"});  // another problem's
  pool.add({key("memory", "sm_80"), b, 0.95, 1.4, "kb1-21-sigmoid"});
  pool.add({key("memory", "sm_90"), c, 0.8, 2.0, "kb1-89-cumsum"});
  EXPECT_EQ(pool.size(), 4u);
  // Exact key first (a), then the other architecture (b); never another family.
  const std::vector<Genome> found = pool.retrieve(key("memory", "sm_90"), Family::kMap, 5);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0], a);
  EXPECT_EQ(found[1], b);
  EXPECT_EQ(pool.retrieve(key("memory", "sm_90"), Family::kMap, 1).size(), 1u);
  // A compute-bound problem backs off all the way to the category.
  EXPECT_EQ(pool.retrieve(key("compute", "sm_100"), Family::kMap, 5).size(), 2u);
  PoolKey other = key("memory", "sm_90");
  other.category = "collective";
  EXPECT_TRUE(pool.retrieve(other, Family::kMap, 5).empty());
}

// Pools of separate runs (a set run's and an earlier family study's) become one seed source.
TEST(EvolvePool, MergedPoolsKeepEachEntryOnceAtItsBest) {
  Rng rng(5);
  const Genome a = random_genome(Family::kReduceAxis, rng), b = random_genome(Family::kMap, rng);
  ASSERT_NE(a, b);
  StrategyPool first, second;
  first.add({key("memory", "sm_90"), a, 0.6, 1.2, "kb1-23-softmax"});
  first.add({key("memory", "sm_90"), b, 0.9, 1.1, "kb1-19-relu"});
  second.add({key("memory", "sm_90"), a, 0.79, 1.8, "kb1-23-softmax"});  // better, same entry
  second.add({key("memory", "sm_90"), a, 0.5, 1.1, "kb1-24-log-softmax"});
  first.merge(second);
  EXPECT_EQ(first.size(), 3u);
  const std::vector<Genome> softmax =
      first.retrieve(key("memory", "sm_90"), Family::kReduceAxis, 1, "kb1-23-softmax");
  ASSERT_EQ(softmax.size(), 1u);
  EXPECT_EQ(softmax[0], a);
  const nlohmann::json j = first.to_json();
  double best = 0.0;
  for (const auto& e : j.at("entries"))
    if (e.value("problem", "") == "kb1-23-softmax") best = std::max(best, e.value("fitness", 0.0));
  EXPECT_DOUBLE_EQ(best, 0.79);
}

// Call 7 of docs/results/2026-11-25-norm-family: batch-norm's seeds were four other problems'
// winners, ranked above its own entry by U measured elsewhere.
TEST(EvolvePool, TheProblemsOwnEntriesComeFirstAndSeedsFitTheGenerator) {
  auto reduce = [](std::set<std::string> strategies, std::map<std::string, int> knobs) {
    Genome g;
    g.family = Family::kReduceAxis;
    g.strategies = std::move(strategies);
    g.knobs = std::move(knobs);
    return g;
  };
  const Genome softmax_best =
      reduce({"vector16-loads", "cluster-split-row", "warp-shuffle", "keep-on-chip"},
             {{"cluster-split-row.cluster", 16}, {"keep-on-chip.max_row_kib", 64}});
  const Genome batchnorm_best =
      reduce({"vector16-loads", "cluster-split-row", "warp-shuffle", "online-one-pass"},
             {{"cluster-split-row.cluster", 2}});
  StrategyPool pool;
  pool.add({key("memory", "sm_90"), softmax_best, 0.79, 1.8, "kb1-23-softmax"});
  pool.add({key("memory", "sm_90"), batchnorm_best, 0.59, 2.1, "kb1-33-batchnorm"});
  const std::vector<Genome> own =
      pool.retrieve(key("memory", "sm_90"), Family::kReduceAxis, 2, "kb1-33-batchnorm");
  ASSERT_EQ(own.size(), 2u);
  EXPECT_EQ(own[0], batchnorm_best);  // its own, though another problem's U is higher
  EXPECT_EQ(own[1], softmax_best);
  EXPECT_EQ(pool.retrieve(key("memory", "sm_90"), Family::kReduceAxis, 2)[0], softmax_best);
  // Another key of the same problem still counts as its own.
  EXPECT_EQ(pool.retrieve(key("compute", "sm_100"), Family::kReduceAxis, 1, "kb1-33-batchnorm")[0],
            batchnorm_best);

  // A middle-dimension reduction's generator has no cluster, vector or keep strategies: the
  // seeds are repaired into its set, reproducibly, and duplicates after repair are dropped.
  const StrategySet middle = {"scalar-loads", "row-per-warp", "row-per-block", "split-row",
                              "shared-tree"};
  const std::vector<Genome> seeds = pool_seeds(pool, key("memory", "sm_90"), Family::kReduceAxis, 4,
                                               "kb1-47-sum-reduction", middle, 7);
  ASSERT_FALSE(seeds.empty());
  for (const Genome& g : seeds) {
    EXPECT_TRUE(violations(g).empty()) << g.describe();
    for (const std::string& s : g.strategies) EXPECT_TRUE(middle.count(s)) << g.describe();
  }
  EXPECT_EQ(seeds, pool_seeds(pool, key("memory", "sm_90"), Family::kReduceAxis, 4,
                              "kb1-47-sum-reduction", middle, 7));
  for (std::size_t i = 0; i < seeds.size(); ++i)
    for (std::size_t j = i + 1; j < seeds.size(); ++j) EXPECT_NE(seeds[i], seeds[j]);
  // No allowed set: the pool's genomes as they are.
  EXPECT_EQ(
      pool_seeds(pool, key("memory", "sm_90"), Family::kReduceAxis, 2, "kb1-23-softmax", {}, 7)[0],
      softmax_best);
}

TEST(EvolvePool, FilesRoundTripAndBrokenOnesAreNamed) {
  Rng rng(4);
  StrategyPool pool;
  pool.add({key("memory", "sm_90"), random_genome(Family::kReduceAxis, rng), 0.6, 1.1, "p"});
  const std::string path = ::testing::TempDir() + "kiln_pool_test/pool.json";
  pool.save(path);
  const StrategyPool back = StrategyPool::load(path);
  EXPECT_EQ(back.to_json(), pool.to_json());
  EXPECT_EQ(StrategyPool::load(path + ".missing").size(), 0u);
  std::ofstream(path) << "{";
  EXPECT_THROW(StrategyPool::load(path), UsageError);
  std::ofstream(path) << R"({"kiln_strategy_pool": 2, "entries": []})";
  EXPECT_THROW(StrategyPool::load(path), UsageError);
  std::remove(path.c_str());
  EXPECT_EQ(size_class_of(50), "small");
  EXPECT_EQ(size_class_of(5000), "large");
}

}  // namespace
}  // namespace kiln::evolve
