// Which rank this process is, read from the launcher's environment: kiln's own `-g N` launcher,
// mpirun (Open MPI, MPICH/Hydra), srun (Slurm) or torchrun. Host logic only, unit-tested.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace kiln::comm {

struct RankInfo {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;
  std::string launcher;  // "kiln", "mpirun (Open MPI)", "mpirun (Hydra)", "srun", "torchrun"
};

// Looks a variable up; returns nullptr when unset. Tests pass a map instead of the real
// environment.
using EnvLookup = std::function<const char*(const char*)>;
EnvLookup process_environment();

// The rank as set by a recognised launcher, or nullopt when none set one. Throws
// kiln::UsageError naming the variable when a launcher's variables are malformed or inconsistent.
std::optional<RankInfo> rank_from_environment(const EnvLookup& env);

// host:port that NCCL's bootstrap root listens on (NCCL_COMM_ID). Taken from NCCL_COMM_ID if set;
// else MASTER_ADDR and MASTER_PORT + 1 (torchrun's store owns MASTER_PORT); else, when every rank
// is on this host, 127.0.0.1 and a port derived from the launcher's job id so all ranks agree.
// Throws kiln::UsageError explaining what to set when none applies.
std::string bootstrap_address(const RankInfo& info, const EnvLookup& env);

// Names of the environment variables kiln's own launcher sets in each child.
inline constexpr const char* kRankVariable = "KILN_RANK";
inline constexpr const char* kWorldSizeVariable = "KILN_WORLD_SIZE";
inline constexpr const char* kLocalRankVariable = "KILN_LOCAL_RANK";

}  // namespace kiln::comm
