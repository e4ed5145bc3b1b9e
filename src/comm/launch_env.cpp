#include "comm/launch_env.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>

#include "core/error.hpp"
#include "core/test_values.hpp"

namespace kiln::comm {
namespace {

struct LauncherVariables {
  const char* launcher;
  const char* rank;
  const char* size;
  const char* local_rank;  // may be nullptr
  const char* local_size;  // may be nullptr
};

// Order matters: our own variables first, then MPI flavours, then Slurm, then torchrun (whose
// RANK/WORLD_SIZE are generic names other tools may also set).
constexpr LauncherVariables kLaunchers[] = {
    {"kiln", kRankVariable, kWorldSizeVariable, kLocalRankVariable, kWorldSizeVariable},
    {"mpirun (Open MPI)", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
     "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"},
    {"mpirun (Hydra)", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"},
    {"srun", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"},
    {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"},
};

int parse_int(const char* name, const char* text) {
  const std::string_view view(text);
  int value = 0;
  std::size_t used = 0;
  try {
    value = std::stoi(std::string(view), &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (view.empty() || used != view.size()) {
    throw UsageError(fmt::format("environment variable {}='{}' is not an integer", name, text));
  }
  return value;
}

}  // namespace

EnvLookup process_environment() {
  return [](const char* name) -> const char* { return std::getenv(name); };
}

std::optional<RankInfo> rank_from_environment(const EnvLookup& env) {
  for (const LauncherVariables& vars : kLaunchers) {
    const char* rank_text = env(vars.rank);
    const char* size_text = env(vars.size);
    if (rank_text == nullptr || size_text == nullptr) continue;
    RankInfo info;
    info.launcher = vars.launcher;
    info.rank = parse_int(vars.rank, rank_text);
    info.world_size = parse_int(vars.size, size_text);
    if (info.world_size < 1) {
      throw UsageError(
          fmt::format("environment variable {}={} must be at least 1", vars.size, info.world_size));
    }
    if (info.rank < 0 || info.rank >= info.world_size) {
      throw UsageError(fmt::format("environment variable {}={} is outside [0, {}) given by {}",
                                   vars.rank, info.rank, info.world_size, vars.size));
    }
    const char* local_rank_text = vars.local_rank ? env(vars.local_rank) : nullptr;
    info.local_rank = local_rank_text ? parse_int(vars.local_rank, local_rank_text) : info.rank;
    // SLURM_NTASKS_PER_NODE may read "4(x2)"; take the leading number only for Slurm.
    const char* local_size_text = vars.local_size ? env(vars.local_size) : nullptr;
    if (local_size_text != nullptr) {
      std::string text(local_size_text);
      if (std::string_view(vars.launcher) == "srun") text = text.substr(0, text.find('('));
      info.local_world_size = parse_int(vars.local_size, text.c_str());
    } else {
      info.local_world_size = local_rank_text ? 0 : info.world_size;  // 0: unknown
    }
    if (info.local_rank < 0) {
      throw UsageError(fmt::format("environment variable {}={} must not be negative",
                                   vars.local_rank, info.local_rank));
    }
    if (const char* shared = env(kRanksPerGpuVariable)) {
      info.ranks_per_gpu = parse_int(kRanksPerGpuVariable, shared);
      if (info.ranks_per_gpu < 1 || info.ranks_per_gpu > kMaxRanksPerGpu) {
        throw UsageError(
            fmt::format("environment variable {}={} is outside the accepted range 1..{}",
                        kRanksPerGpuVariable, info.ranks_per_gpu, kMaxRanksPerGpu));
      }
    }
    return info;
  }
  return std::nullopt;
}

int gpu_for_rank(const RankInfo& info, int visible_gpus) {
  if (visible_gpus < 1) throw Error("no CUDA device is visible to this rank");
  // Modulo: a launcher that gives each rank only its own GPU (CUDA_VISIBLE_DEVICES per task)
  // leaves one visible device whatever the local rank.
  return (info.local_rank / std::max(info.ranks_per_gpu, 1)) % visible_gpus;
}

std::string shared_gpu_host_id(const RankInfo& info, const std::string& hostname) {
  return fmt::format("{}:kiln-gpu-slot-{}", hostname,
                     info.local_rank % std::max(info.ranks_per_gpu, 1));
}

std::string bootstrap_address(const RankInfo& info, const EnvLookup& env) {
  if (const char* comm_id = env("NCCL_COMM_ID"); comm_id != nullptr && *comm_id != '\0') {
    return comm_id;
  }
  const char* master_addr = env("MASTER_ADDR");
  const char* master_port = env("MASTER_PORT");
  if (master_addr != nullptr && master_port != nullptr) {
    const int port = parse_int("MASTER_PORT", master_port);
    if (port < 1 || port > 65534) {
      throw UsageError(fmt::format("MASTER_PORT={} is outside [1, 65534]", port));
    }
    return fmt::format("{}:{}", master_addr, port + 1);
  }
  if (info.world_size == 1 || info.local_world_size == info.world_size) {
    // One host: every rank derives the same port from the launcher's job identity.
    std::string job;
    for (const char* name : {"OMPI_MCA_ess_base_jobid", "OMPI_MCA_orte_ess_jobid", "PMI_ID_JOBID",
                             "SLURM_JOB_ID", "SLURM_STEP_ID", "TORCHELASTIC_RUN_ID"}) {
      if (const char* value = env(name)) job += std::string(name) + "=" + value + ";";
    }
    std::uint64_t hash = 0xC0FFEE;
    for (char c : job) hash = core::mix64(hash ^ static_cast<unsigned char>(c));
    return fmt::format("127.0.0.1:{}", 20000 + hash % 30000);
  }
  throw UsageError(
      "ranks span several hosts: set NCCL_COMM_ID=<host of rank 0>:<free port> (or MASTER_ADDR and "
      "MASTER_PORT) so NCCL's bootstrap can find rank 0");
}

}  // namespace kiln::comm
