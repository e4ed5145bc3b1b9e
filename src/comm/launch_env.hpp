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
  // Ranks that share one GPU (KILN_RANKS_PER_GPU, or kiln's --ranks-per-gpu). Above 1 the ranks
  // are for correctness runs: the GPU time-slices them and NCCL connects them over sockets.
  int ranks_per_gpu = 1;
};

// The most ranks that may share one GPU (--ranks-per-gpu): each is a CUDA context and an NCCL
// proxy thread on the one device, and the NVLink pull collectives take at most 8 ranks anyway.
inline constexpr int kMaxRanksPerGpu = 16;

// The GPU (index among the visible ones) a rank binds to: consecutive local ranks share a GPU,
// `ranks_per_gpu` to each, wrapping around the visible GPUs (NCCL reports a real duplicate).
int gpu_for_rank(const RankInfo& info, int visible_gpus);

// NCCL_HOSTID for a rank that shares its GPU: NCCL refuses two ranks of one host on one GPU
// ("Duplicate GPU detected": it compares host hash and bus id), so each rank's host id names its
// slot on the GPU (local_rank % ranks_per_gpu). Ranks of one slot sit on distinct GPUs and may
// still use NVLink/P2P among themselves; across slots NCCL uses its network transport (sockets).
std::string shared_gpu_host_id(const RankInfo& info, const std::string& hostname);

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
// Read for every launcher (mpirun -x KILN_RANKS_PER_GPU=4 ... works too).
inline constexpr const char* kRanksPerGpuVariable = "KILN_RANKS_PER_GPU";

}  // namespace kiln::comm
