#include <gtest/gtest.h>

#include <map>
#include <string>

#include "comm/launch_env.hpp"
#include "core/error.hpp"

using kiln::comm::bootstrap_address;
using kiln::comm::rank_from_environment;

namespace {

kiln::comm::EnvLookup env_of(const std::map<std::string, std::string>& values) {
  return [values](const char* name) -> const char* {
    const auto it = values.find(name);
    return it == values.end() ? nullptr : it->second.c_str();
  };
}

}  // namespace

TEST(LaunchEnv, NoLauncher) {
  EXPECT_FALSE(rank_from_environment(env_of({})).has_value());
}

TEST(LaunchEnv, OpenMpi) {
  const auto info = rank_from_environment(env_of({{"OMPI_COMM_WORLD_RANK", "5"},
                                                  {"OMPI_COMM_WORLD_SIZE", "8"},
                                                  {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                                                  {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}}));
  ASSERT_TRUE(info);
  EXPECT_EQ(info->rank, 5);
  EXPECT_EQ(info->world_size, 8);
  EXPECT_EQ(info->local_rank, 1);
  EXPECT_EQ(info->local_world_size, 4);
  EXPECT_EQ(info->launcher, "mpirun (Open MPI)");
}

TEST(LaunchEnv, SlurmWithRepeatedTasksPerNode) {
  const auto info = rank_from_environment(env_of({{"SLURM_PROCID", "3"},
                                                  {"SLURM_NTASKS", "4"},
                                                  {"SLURM_LOCALID", "1"},
                                                  {"SLURM_NTASKS_PER_NODE", "2(x2)"}}));
  ASSERT_TRUE(info);
  EXPECT_EQ(info->rank, 3);
  EXPECT_EQ(info->local_rank, 1);
  EXPECT_EQ(info->local_world_size, 2);
  EXPECT_EQ(info->launcher, "srun");
}

TEST(LaunchEnv, TorchrunAndHydra) {
  auto info = rank_from_environment(
      env_of({{"RANK", "2"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "2"}, {"LOCAL_WORLD_SIZE", "4"}}));
  ASSERT_TRUE(info);
  EXPECT_EQ(info->launcher, "torchrun");
  EXPECT_EQ(info->local_rank, 2);
  info = rank_from_environment(env_of({{"PMI_RANK", "1"}, {"PMI_SIZE", "2"}}));
  ASSERT_TRUE(info);
  EXPECT_EQ(info->launcher, "mpirun (Hydra)");
  EXPECT_EQ(info->local_rank, 1);  // defaults to the global rank
}

TEST(LaunchEnv, KilnVariablesWinOverGenericOnes) {
  const auto info = rank_from_environment(env_of({{"KILN_RANK", "1"},
                                                  {"KILN_WORLD_SIZE", "2"},
                                                  {"KILN_LOCAL_RANK", "1"},
                                                  {"RANK", "0"},
                                                  {"WORLD_SIZE", "1"}}));
  ASSERT_TRUE(info);
  EXPECT_EQ(info->launcher, "kiln");
  EXPECT_EQ(info->rank, 1);
}

TEST(LaunchEnv, MalformedValuesNameTheVariable) {
  for (const auto& values : std::vector<std::map<std::string, std::string>>{
           {{"RANK", "x"}, {"WORLD_SIZE", "2"}},
           {{"RANK", "2"}, {"WORLD_SIZE", "2"}},
           {{"RANK", "0"}, {"WORLD_SIZE", "0"}},
           {{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "-1"}}}) {
    try {
      rank_from_environment(env_of(values));
      FAIL() << "accepted a malformed environment";
    } catch (const kiln::UsageError& error) {
      const std::string text = error.what();
      EXPECT_TRUE(text.find("RANK") != std::string::npos ||
                  text.find("WORLD_SIZE") != std::string::npos)
          << text;
    }
  }
}

TEST(LaunchEnv, BootstrapAddress) {
  kiln::comm::RankInfo info;
  info.world_size = 8;
  info.local_world_size = 4;  // two hosts
  EXPECT_EQ(bootstrap_address(info, env_of({{"NCCL_COMM_ID", "10.0.0.1:5000"}})), "10.0.0.1:5000");
  EXPECT_EQ(bootstrap_address(info, env_of({{"MASTER_ADDR", "node1"}, {"MASTER_PORT", "29500"}})),
            "node1:29501");
  EXPECT_THROW(bootstrap_address(info, env_of({})), kiln::UsageError);
  EXPECT_THROW(bootstrap_address(info, env_of({{"MASTER_ADDR", "a"}, {"MASTER_PORT", "70000"}})),
               kiln::UsageError);
  // One host: every rank derives the same loopback address from the job id.
  info.local_world_size = 8;
  const auto job = env_of({{"SLURM_JOB_ID", "77"}});
  const std::string address = bootstrap_address(info, job);
  EXPECT_EQ(address.rfind("127.0.0.1:", 0), 0u);
  EXPECT_EQ(address, bootstrap_address(info, job));
  EXPECT_NE(address, bootstrap_address(info, env_of({{"SLURM_JOB_ID", "78"}})));
}
