// How an overlap call finds its plan without a GPU (plan_lookup.hpp): the cache's exact entry
// (re-read when the file changes), else the built-in profile's prediction, else the nearest tuned
// neighbour whose groups fit, else the default; bad files are named.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.hpp"
#include "overlap/launch_geometry.hpp"
#include "tune/plan_lookup.hpp"

namespace {

using kiln::UsageError;
using namespace kiln::overlap;
using namespace kiln::tune;

class PlanLookupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("kiln-plan-lookup-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ / "empty");
    options_.cache_path = (dir_ / "plans.json").string();
    options_.profiles.cache_dir = (dir_ / "empty").string();  // no saved profiles
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void write_cache(const PlanCache& cache) {
    std::ofstream(options_.cache_path) << cache.to_json().dump();
  }

  std::filesystem::path dir_;
  PlanLookupOptions options_;
};

constexpr GemmShape kShape{4096, 8192, 8192};

TEST_F(PlanLookupTest, ExactCacheEntryFirstAndRereadWhenTheFileChanges) {
  const PlanKey key{"h200-sxm", 2, "rs", "bf16", kShape};
  PlanCache cache;
  cache.put({key, "tile=128x256 cap=128 raster=n swizzle=8 signal=eager comm=ce groups=2,2,2,2",
             800.0, -1.0});
  write_cache(cache);
  PlanLookup found = lookup_plan(key, options_);
  EXPECT_EQ(found.source, "cache " + options_.cache_path);
  EXPECT_EQ(found.plan.partition, (std::vector<int>{2, 2, 2, 2}));
  EXPECT_DOUBLE_EQ(found.predicted_us, 800.0);
  // Another plan written to the same file: the next lookup sees it (no stale parse).
  cache.put({key, "tile=128x256 cap=0 raster=n swizzle=1 signal=eager comm=ce groups=1,3,4", 790.0,
             -1.0});
  write_cache(cache);
  found = lookup_plan(key, options_);
  EXPECT_EQ(found.plan.partition, (std::vector<int>{1, 3, 4}));
  EXPECT_EQ(found.plan.schedule.swizzle, 1);
}

// The file's version is its modification time and size: a rewrite of the same size is seen by its
// time, and one that keeps the time (as a copy preserving it would) by its size.
TEST_F(PlanLookupTest, RereadOnATimeChangeAloneAndOnASizeChangeAlone) {
  const PlanKey key{"h200-sxm", 2, "rs", "bf16", kShape};
  const auto write = [&](const char* groups, double us) {
    PlanCache cache;
    cache.put({key,
               std::string("tile=128x256 cap=128 raster=n swizzle=8 signal=eager comm=ce groups=") +
                   groups,
               us, -1.0});
    write_cache(cache);
  };
  namespace fs = std::filesystem;
  write("2,2,2,2", 800.0);
  EXPECT_EQ(lookup_plan(key, options_).plan.partition, (std::vector<int>{2, 2, 2, 2}));
  const auto first_size = fs::file_size(options_.cache_path);
  const auto first_time = fs::last_write_time(options_.cache_path);

  // Same size, later time.
  write("1,3,2,2", 790.0);
  ASSERT_EQ(fs::file_size(options_.cache_path), first_size);
  fs::last_write_time(options_.cache_path, first_time + std::chrono::seconds(5));
  PlanLookup found = lookup_plan(key, options_);
  EXPECT_EQ(found.plan.partition, (std::vector<int>{1, 3, 2, 2}));
  EXPECT_DOUBLE_EQ(found.predicted_us, 790.0);

  // Same time, another size.
  const auto second_time = fs::last_write_time(options_.cache_path);
  write("1,3,4", 780.0);
  ASSERT_NE(fs::file_size(options_.cache_path), first_size);
  fs::last_write_time(options_.cache_path, second_time);
  found = lookup_plan(key, options_);
  EXPECT_EQ(found.plan.partition, (std::vector<int>{1, 3, 4}));
  EXPECT_DOUBLE_EQ(found.predicted_us, 780.0);
}

TEST_F(PlanLookupTest, BuiltInProfilePredictsWhenTheCacheHasNoEntry) {
  // H200 and H100 SXM hosts of 2 and 4 GPUs (132 SMs both) have built-in profiles.
  for (const std::string device : {"h200-sxm", "h100-sxm"})
    for (const int world : {2, 4})
      for (const std::string op : {"rs", "ar"}) {
        const PlanKey key{device, world, op, "bf16", {3000, 5000, 7000}};  // profiled nowhere
        const PlanLookup found = lookup_plan(key, options_);
        EXPECT_EQ(found.source,
                  fmt::format("profile built-in {}-g{}-{}-bf16.json", device, world, op));
        EXPECT_GT(found.predicted_us, 0.0);
        // The groups cover exactly the waves the GEMM launches on 132 SMs.
        const Plan& p = found.plan;
        int total = 0;
        for (int g : p.partition) total += g;
        EXPECT_EQ(total, host_launch_geometry(key.shape, p.gemm, p.schedule, 132).waves());
      }
}

TEST_F(PlanLookupTest, NearestNeighbourOnlyWhenCloseAndItsGroupsFit) {
  // No profile for 8 ranks (built-in ones exist for 2 and 4): the cache's neighbours decide.
  // 4096x8192x8192 at cap 128 launches 1024 tiles on 128 CTAs = 8 waves; K does not change them.
  const PlanKey tuned{"h200-sxm", 8, "rs", "bf16", kShape};
  PlanCache cache;
  cache.put({tuned, "tile=128x256 cap=128 raster=n swizzle=8 signal=eager comm=ce groups=1,3,3,1",
             700.0, -1.0});
  write_cache(cache);
  PlanKey key = tuned;
  key.shape.k = 4096;  // distance ln 2 = 0.69
  PlanLookup found = lookup_plan(key, options_);
  EXPECT_EQ(found.source, "neighbour 4096x8192x8192 (distance 0.69)");
  EXPECT_EQ(found.plan.partition, (std::vector<int>{1, 3, 3, 1}));
  EXPECT_LT(found.predicted_us, 0.0);
  key.shape.k = 2048;  // distance 1.39: too far
  EXPECT_EQ(lookup_plan(key, options_).source.rfind("default", 0), 0u);
  key.shape = {2048, 8192, 8192};  // close (0.69), but 4 waves: the groups do not fit
  found = lookup_plan(key, options_);
  EXPECT_EQ(found.source.rfind("default", 0), 0u) << found.source;
  EXPECT_TRUE(found.plan.copy_engine);
  EXPECT_TRUE(found.plan.partition.empty());  // one group per wave
}

TEST_F(PlanLookupTest, UnknownSettingGetsTheDefaultAndBadFilesAreNamed) {
  const PlanKey key{"h100-sxm", 8, "ar", "fp16", kShape};
  EXPECT_EQ(lookup_plan(key, options_).source.rfind("default", 0), 0u);
  std::ofstream(options_.cache_path) << "{ not json";
  try {
    lookup_plan(key, options_);
    FAIL() << "accepted a broken plan cache";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(options_.cache_path), std::string::npos) << e.what();
  }
  PlanLookupOptions explicit_profile = options_;
  std::filesystem::remove(options_.cache_path);
  explicit_profile.profiles.explicit_path = (dir_ / "missing.json").string();
  EXPECT_THROW(lookup_plan(key, explicit_profile), UsageError);
}

TEST(FallbackPlan, AllReduceAtThreeOrMoreRanksTakesTheSerialForm) {
  // No profile, cache or neighbour: AllReduce at 3+ ranks runs serial (one group of every wave, no
  // cap, NCCL); ReduceScatter and 2 ranks keep the copy-engine default; an unknown SM count too.
  constexpr GemmShape shape{4096, 8192, 2048};
  const int sms = 132;
  for (int world : {3, 4, 8}) {
    const PlanLookup found = fallback_plan({"h100-sxm", world, "ar", "bf16", shape}, sms);
    EXPECT_TRUE(is_serial_plan(found.plan)) << world << ": " << to_string(found.plan);
    const int waves =
        host_launch_geometry(shape, found.plan.gemm, found.plan.schedule, sms).waves();
    EXPECT_EQ(found.plan.partition, std::vector<int>{waves}) << world;
    EXPECT_EQ(found.source.rfind("default", 0), 0u);
    EXPECT_NE(found.source.find("kiln tune profile -g " + std::to_string(world)), std::string::npos)
        << found.source;
    // The plan is one the runtime accepts: its groups cover this launch's waves.
    EXPECT_EQ(make_wave_groups(found.plan.partition, host_launch_geometry(shape, found.plan.gemm,
                                                                          found.plan.schedule, sms))
                  .groups(),
              1);
  }
  for (const PlanKey& key :
       {PlanKey{"h100-sxm", 2, "ar", "bf16", shape}, PlanKey{"h100-sxm", 4, "rs", "bf16", shape}}) {
    const PlanLookup found = fallback_plan(key, sms);
    EXPECT_TRUE(found.plan.copy_engine) << key.op << key.world;
    EXPECT_TRUE(found.plan.partition.empty());
  }
  EXPECT_TRUE(fallback_plan({"h100-sxm", 4, "ar", "bf16", shape}, 0).plan.copy_engine);
}

}  // namespace
