// The flag that every multi-rank subcommand shares beside its -g: several ranks on one GPU.
#pragma once

#include <CLI/CLI.hpp>

#include "comm/launch_env.hpp"

namespace kiln::app {

inline void add_ranks_per_gpu_flag(CLI::App* cmd, int& ranks_per_gpu) {
  cmd->add_option("--ranks-per-gpu", ranks_per_gpu,
                  "ranks that share each GPU, for correctness runs on fewer GPUs than ranks (the "
                  "GPU time-slices them, NCCL connects them over loopback sockets: timings are "
                  "not meaningful); default 1, or KILN_RANKS_PER_GPU under mpirun/srun/torchrun")
      ->check(CLI::Range(1, comm::kMaxRanksPerGpu));
}

}  // namespace kiln::app
