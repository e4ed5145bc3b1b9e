// The process groups kiln's PyTorch ops run on, by PyTorch's group name: each holds kiln's own NCCL
// communicator (bootstrapped from a unique id that the Python side carries over the group) and the
// state cached per (operation, shape, dtype, layout): the overlap objects with their tuned plans,
// and the all-gather's stream and events. Ops look their group up; a name never registered is an
// error that says how to register it.
#pragma once

#include <ATen/ATen.h>
#include <c10/cuda/CUDAStream.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "comm/communicator.hpp"
#include "overlap/gemm_collective.hpp"

namespace kiln::torch_ops {

// One overlap object and the row reordering its ReduceScatter needs (padded_m == m: none).
struct CachedCollective {
  std::unique_ptr<overlap::GemmCollective> collective;
  std::string plan_source;  // where the plan came from (the tuner's lookup)
  int padded_m = 0;         // rows of the GEMM's A (ReduceScatter: the reordered A')
};

struct Group {
  std::string name;
  std::unique_ptr<comm::Communicator> comm;
  // Key: op ("rs", "ar"), M, N, K, dtype, layout.
  using Key = std::tuple<std::string, int, int, int, int, int>;
  std::map<Key, CachedCollective> collectives;
  // The all-gather's communication stream (a pool stream of this device).
  std::unique_ptr<c10::cuda::CUDAStream> gather_stream;
};

class GroupRegistry {
 public:
  static GroupRegistry& instance();
  // Joins `name`'s communicator (collective over the group's ranks). `gpu_slot` numbers the
  // `ranks_per_gpu` ranks that share this GPU (0.. on each GPU: NCCL tells them apart by it).
  // Throws kiln::UsageError when `name` is already registered with another rank or size.
  void add(const std::string& name, int rank, int world_size, int gpu_slot, int ranks_per_gpu,
           const at::Tensor& unique_id, double timeout_seconds);
  void remove(const std::string& name);
  bool contains(const std::string& name);
  // The group; throws kiln::UsageError naming kiln.init_group when it was never registered.
  Group& get(const std::string& name);
  std::mutex& mutex() { return mutex_; }

 private:
  std::mutex mutex_;
  std::map<std::string, std::unique_ptr<Group>> groups_;
};

// A fresh NCCL unique id as a CPU uint8 tensor (rank 0 creates it; the Python side broadcasts it).
at::Tensor nccl_unique_id();

}  // namespace kiln::torch_ops
