// Rank layout of the CLI's multi-rank subcommands (-g, --ranks-per-gpu, outside launchers) and
// the shared-GPU pieces of the launch environment, without a GPU.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <string>

#include "comm/launch_env.hpp"
#include "comm/local_launcher.hpp"
#include "comm/rank_launch.hpp"
#include "core/error.hpp"

namespace {

using kiln::comm::plan_ranks;
using kiln::comm::RankInfo;
using kiln::comm::RankLayout;
using kiln::comm::RankRequest;

RankRequest request(int gpus, int ranks_per_gpu) {
  RankRequest r;
  r.command = "kiln test";
  r.gpus = gpus;
  r.ranks_per_gpu = ranks_per_gpu;
  return r;
}

std::string usage_error_of(const RankRequest& r, const std::optional<RankInfo>& launched,
                           int visible) {
  try {
    (void)plan_ranks(r, launched, visible);
  } catch (const kiln::UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(RankLaunch, OneRankPerGpuByDefault) {
  const RankLayout all = plan_ranks(request(0, 0), std::nullopt, 4);
  EXPECT_EQ(all.world_size, 4);
  EXPECT_EQ(all.ranks_per_gpu, 1);
  EXPECT_EQ(all.gpus_used, 4);
  EXPECT_FALSE(all.shares_gpus());
  const RankLayout two = plan_ranks(request(2, 0), std::nullopt, 4);
  EXPECT_EQ(two.world_size, 2);
  EXPECT_EQ(two.gpus_used, 2);
}

TEST(RankLaunch, SeveralRanksShareOneGpu) {
  const RankLayout four = plan_ranks(request(4, 4), std::nullopt, 1);
  EXPECT_EQ(four.world_size, 4);
  EXPECT_EQ(four.ranks_per_gpu, 4);
  EXPECT_EQ(four.gpus_used, 1);
  EXPECT_TRUE(four.shares_gpus());
  // -g 0 fills every GPU with ranks_per_gpu ranks.
  EXPECT_EQ(plan_ranks(request(0, 2), std::nullopt, 2).world_size, 4);
  // Three ranks, two per GPU: GPUs 0 and 1.
  EXPECT_EQ(plan_ranks(request(3, 2), std::nullopt, 2).gpus_used, 2);
  // More ranks per GPU than ranks: one rank alone does not share.
  const RankLayout one = plan_ranks(request(1, 4), std::nullopt, 1);
  EXPECT_EQ(one.ranks_per_gpu, 1);
  EXPECT_FALSE(one.shares_gpus());
}

TEST(RankLaunch, TooManyRanksNameTheFlagAndTheWayOut) {
  const std::string plain = usage_error_of(request(4, 0), std::nullopt, 1);
  EXPECT_NE(plain.find("-g 4"), std::string::npos) << plain;
  EXPECT_NE(plain.find("accepted range 1..1"), std::string::npos) << plain;
  EXPECT_NE(plain.find("--ranks-per-gpu 4"), std::string::npos) << plain;
  const std::string shared = usage_error_of(request(5, 2), std::nullopt, 2);
  EXPECT_NE(shared.find("accepted range 1..4"), std::string::npos) << shared;
  EXPECT_NE(usage_error_of(request(-1, 0), std::nullopt, 1).find("-g -1"), std::string::npos);
  EXPECT_NE(usage_error_of(request(2, 17), std::nullopt, 1).find("--ranks-per-gpu 17"),
            std::string::npos);
  EXPECT_NE(usage_error_of(request(2, 0), std::nullopt, 0).find("no CUDA GPU"), std::string::npos);
}

TEST(RankLaunch, SpeedMeasurementsThatAreKeptRefuseSharedGpus) {
  RankRequest r = request(2, 2);
  r.allow_shared_gpus = false;
  EXPECT_NE(usage_error_of(r, std::nullopt, 1).find("timings mean nothing"), std::string::npos);
  r.ranks_per_gpu = 0;
  EXPECT_EQ(plan_ranks(r, std::nullopt, 2).world_size, 2);
}

TEST(RankLaunch, OutsideLauncherDecidesTheRanks) {
  RankInfo launched;
  launched.rank = 1;
  launched.world_size = 4;
  launched.local_rank = 1;
  launched.launcher = "torchrun";
  launched.ranks_per_gpu = 4;  // KILN_RANKS_PER_GPU=4 in its environment
  const RankLayout layout = plan_ranks(request(0, 0), launched, 0);
  ASSERT_TRUE(layout.launched);
  EXPECT_EQ(layout.world_size, 4);
  EXPECT_EQ(layout.launched->ranks_per_gpu, 4);
  EXPECT_TRUE(layout.shares_gpus());
  // The flag wins over the variable.
  EXPECT_EQ(plan_ranks(request(4, 1), launched, 0).launched->ranks_per_gpu, 1);
  EXPECT_NE(usage_error_of(request(2, 0), launched, 0).find("already started 4"),
            std::string::npos);
  RankRequest supervised = request(0, 0);
  supervised.allow_outside_launcher = false;
  EXPECT_NE(usage_error_of(supervised, launched, 0).find("supervises its own ranks"),
            std::string::npos);
}

TEST(RankLaunch, NoteSaysTimingsAreNotMeaningful) {
  const std::string note = kiln::comm::shared_gpu_note(plan_ranks(request(4, 4), std::nullopt, 1));
  EXPECT_NE(note.find("4 ranks share 1 GPU(s), 4 per GPU"), std::string::npos) << note;
  EXPECT_NE(note.find("NOT meaningful"), std::string::npos) << note;
}

TEST(SharedGpu, ConsecutiveLocalRanksShareAGpu) {
  RankInfo info;
  info.ranks_per_gpu = 2;
  const int expected[] = {0, 0, 1, 1, 0, 0};  // two GPUs; local ranks 4, 5 wrap around
  for (int local = 0; local < 6; ++local) {
    info.local_rank = local;
    EXPECT_EQ(kiln::comm::gpu_for_rank(info, 2), expected[local]) << "local rank " << local;
  }
  info.ranks_per_gpu = 1;
  info.local_rank = 3;
  EXPECT_EQ(kiln::comm::gpu_for_rank(info, 4), 3);
  EXPECT_EQ(kiln::comm::gpu_for_rank(info, 1), 0);  // each rank sees only its own GPU
  EXPECT_THROW(kiln::comm::gpu_for_rank(info, 0), kiln::Error);
}

TEST(SharedGpu, RanksOfOneGpuGetDistinctNcclHostIds) {
  // Ranks on one GPU must differ (NCCL rejects a duplicate GPU within a host); ranks in the same
  // slot of different GPUs may share a host id (NCCL then uses P2P between them).
  RankInfo info;
  info.ranks_per_gpu = 4;
  std::map<std::string, int> ids;
  for (int local = 0; local < 8; ++local) {
    info.local_rank = local;
    ++ids[kiln::comm::shared_gpu_host_id(info, "node7")];
  }
  EXPECT_EQ(ids.size(), 4u);
  for (const auto& [id, count] : ids) {
    EXPECT_EQ(count, 2) << id;
    EXPECT_EQ(id.rfind("node7:", 0), 0u) << id;
  }
}

TEST(SharedGpu, EnvironmentVariableIsReadForEveryLauncherAndChecked) {
  const auto env = [](std::map<std::string, std::string> values) {
    return [values](const char* name) -> const char* {
      const auto it = values.find(name);
      return it == values.end() ? nullptr : it->second.c_str();
    };
  };
  auto info = kiln::comm::rank_from_environment(
      env({{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"KILN_RANKS_PER_GPU", "2"}}));
  ASSERT_TRUE(info);
  EXPECT_EQ(info->ranks_per_gpu, 2);
  info = kiln::comm::rank_from_environment(env({{"RANK", "1"}, {"WORLD_SIZE", "2"}}));
  EXPECT_EQ(info->ranks_per_gpu, 1);
  for (const char* bad : {"0", "17", "two"}) {
    try {
      (void)kiln::comm::rank_from_environment(
          env({{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"KILN_RANKS_PER_GPU", bad}}));
      ADD_FAILURE() << "KILN_RANKS_PER_GPU=" << bad << " was accepted";
    } catch (const kiln::UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("KILN_RANKS_PER_GPU"), std::string::npos) << e.what();
    }
  }
}

TEST(SharedGpu, LauncherExportsRanksPerGpuToEveryRank) {
  kiln::comm::LaunchOptions options;
  options.ranks_per_gpu = 3;
  const int code = kiln::comm::launch_local_ranks(
      3,
      [](const RankInfo& info) {
        const char* exported = std::getenv("KILN_RANKS_PER_GPU");
        const bool ok =
            info.ranks_per_gpu == 3 && exported != nullptr && std::string(exported) == "3";
        return ok ? 0 : 10 + info.rank;
      },
      options);
  EXPECT_EQ(code, 0);
  options.ranks_per_gpu = 0;
  EXPECT_THROW(kiln::comm::launch_local_ranks(
                   1, [](const RankInfo&) { return 0; }, options),
               kiln::UsageError);
}

}  // namespace
