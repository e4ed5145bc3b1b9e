// The plan cache: exact hits, the nearest tuned neighbour in log-shape distance (same device,
// world, op and dtype only), replacement, a JSON round trip and clear errors for bad files.
#include "tune/plan_cache.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "core/error.hpp"

namespace kiln::tune {
using namespace kiln::overlap;  // the runtime's values (shapes, plans, geometry)
namespace {

CachedPlan entry(int world, const std::string& op, GemmShape shape, const std::string& plan) {
  return {{"h200-sxm", world, op, "bf16", shape}, plan, 100.0, -1.0};
}

TEST(PlanCache, ShapeDistanceIsLogarithmic) {
  EXPECT_DOUBLE_EQ(shape_distance({4096, 8192, 2048}, {4096, 8192, 2048}), 0.0);
  EXPECT_NEAR(shape_distance({8192, 8192, 2048}, {4096, 8192, 2048}), std::log(2.0), 1e-12);
  EXPECT_NEAR(shape_distance({4096, 8192, 2048}, {8192, 4096, 4096}), 3 * std::log(2.0), 1e-12);
  EXPECT_THROW(shape_distance({0, 1, 1}, {1, 1, 1}), UsageError);
}

TEST(PlanCache, ExactThenNearestWithinTheSameSetting) {
  PlanCache cache;
  cache.put(entry(2, "rs", {4096, 8192, 8192}, "tile=128x256 groups=1,1,2"));
  cache.put(entry(2, "rs", {16384, 8192, 4096}, "tile=128x256 groups=2,2"));
  cache.put(entry(4, "rs", {6144, 8192, 8192}, "from 4 ranks"));
  cache.put(entry(2, "ar", {6144, 8192, 8192}, "from all-reduce"));
  const PlanKey seen{"h200-sxm", 2, "rs", "bf16", {4096, 8192, 8192}};
  ASSERT_NE(cache.exact(seen), nullptr);
  EXPECT_EQ(cache.exact(seen)->plan, "tile=128x256 groups=1,1,2");
  // 6144x8192x8192: ln 1.5 = 0.405 from the first, ln(16384/6144) + ln 2 = 1.67 from the second;
  // the 4-rank and all-reduce entries are closer but do not count.
  const PlanKey unseen{"h200-sxm", 2, "rs", "bf16", {6144, 8192, 8192}};
  EXPECT_EQ(cache.exact(unseen), nullptr);
  double distance = -1;
  const CachedPlan* near = cache.nearest(unseen, 1.0, &distance);
  ASSERT_NE(near, nullptr);
  EXPECT_EQ(near->plan, "tile=128x256 groups=1,1,2");
  EXPECT_NEAR(distance, std::log(1.5), 1e-12);
  EXPECT_EQ(cache.nearest(unseen, 0.1), nullptr);  // too far
  EXPECT_EQ(cache.nearest({"h100-sxm", 2, "rs", "bf16", {6144, 8192, 8192}}, 10.0), nullptr);
}

TEST(PlanCache, PutReplacesTheSameKey) {
  PlanCache cache;
  cache.put(entry(2, "rs", {4096, 8192, 8192}, "old"));
  cache.put(entry(2, "rs", {4096, 8192, 8192}, "new"));
  ASSERT_EQ(cache.entries().size(), 1u);
  EXPECT_EQ(cache.entries()[0].plan, "new");
}

TEST(PlanCache, JsonRoundTripAndBadFiles) {
  PlanCache cache;
  CachedPlan measured = entry(2, "ar", {8192, 8192, 8192}, "tile=128x256 cap=128 comm=ce");
  measured.measured_us = 1689.4;
  cache.put(measured);
  cache.put(entry(4, "rs", {4096, 8192, 2048}, "tile=128x128"));
  const PlanCache back = PlanCache::from_json(cache.to_json(), "test");
  ASSERT_EQ(back.entries().size(), 2u);
  EXPECT_EQ(back.entries()[0].plan, measured.plan);
  EXPECT_DOUBLE_EQ(back.entries()[0].measured_us, 1689.4);
  EXPECT_EQ(back.entries()[1].key.shape.k, 2048);
  EXPECT_THROW(PlanCache::from_json(nlohmann::json::array(), "f.json"), UsageError);
  nlohmann::json bad = cache.to_json();
  bad["entries"][1]["shape"] = {1, 2};
  try {
    PlanCache::from_json(bad, "f.json");
    FAIL() << "a two-number shape was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("f.json: entry 1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kiln::tune
