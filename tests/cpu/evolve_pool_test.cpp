// The strategy pool without a GPU (issue 20): the best entry per key and genome is kept,
// retrieval orders by fitness and backs off field by field, files round-trip.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

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
  pool.add({key("memory", "sm_90"), a, 0.9, 1.3, "kb1-19-relu"});  // same genome: better kept
  pool.add({key("memory", "sm_90"), a, 0.5, 1.0, "kb1-20-leaky-relu"});
  pool.add({key("memory", "sm_80"), b, 0.95, 1.4, "kb1-21-sigmoid"});
  pool.add({key("memory", "sm_90"), c, 0.8, 2.0, "kb1-89-cumsum"});
  EXPECT_EQ(pool.size(), 3u);
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
