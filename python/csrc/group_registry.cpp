// kiln's communicators per PyTorch process group (see group_registry.hpp).
#include "group_registry.hpp"

#include <c10/cuda/CUDAFunctions.h>
#include <fmt/format.h>
#include <nccl.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "comm/nccl_check.hpp"
#include "core/error.hpp"

namespace kiln::torch_ops {

GroupRegistry& GroupRegistry::instance() {
  static GroupRegistry registry;
  return registry;
}

at::Tensor nccl_unique_id() {
  // With NCCL_COMM_ID set, ncclGetUniqueId would encode that fixed address and start no root,
  // and the communicator (which clears it) would wait for a root that never comes.
  ncclUniqueId id;
  const char* fixed = std::getenv("NCCL_COMM_ID");
  const std::string saved = fixed != nullptr ? fixed : "";
  if (fixed != nullptr) unsetenv("NCCL_COMM_ID");
  const ncclResult_t made = ncclGetUniqueId(&id);
  if (fixed != nullptr) setenv("NCCL_COMM_ID", saved.c_str(), 1);
  KILN_NCCL_CHECK(made);
  at::Tensor out = at::empty({static_cast<int64_t>(sizeof(id))}, at::kByte);
  std::memcpy(out.data_ptr(), &id, sizeof(id));
  return out;
}

void GroupRegistry::add(const std::string& name, int rank, int world_size, int gpu_slot,
                        int ranks_per_gpu, const at::Tensor& unique_id, double timeout_seconds) {
  std::lock_guard lock(mutex_);
  if (auto it = groups_.find(name); it != groups_.end()) {
    const comm::Communicator& c = *it->second->comm;
    if (c.rank() == rank && c.size() == world_size) return;  // registered already
    throw UsageError(fmt::format("group '{}' is already registered as rank {} of {}, not {} of {}",
                                 name, c.rank(), c.size(), rank, world_size));
  }
  if (unique_id.device().type() != at::kCPU || unique_id.scalar_type() != at::kByte ||
      unique_id.numel() != static_cast<int64_t>(sizeof(ncclUniqueId))) {
    throw UsageError(fmt::format("unique_id: a CPU uint8 tensor of {} bytes (NCCL's unique id)",
                                 sizeof(ncclUniqueId)));
  }
  ncclUniqueId id;
  std::memcpy(&id, unique_id.contiguous().data_ptr(), sizeof(id));
  comm::RankInfo info;
  info.rank = rank;
  info.world_size = world_size;
  info.local_rank = gpu_slot;  // NCCL_HOSTID of a shared GPU: local_rank % ranks_per_gpu
  info.ranks_per_gpu = ranks_per_gpu;
  info.launcher = "torch";
  auto group = std::make_unique<Group>();
  group->name = name;
  group->comm =
      std::make_unique<comm::Communicator>(info, id, c10::cuda::current_device(), timeout_seconds);
  groups_[name] = std::move(group);
}

void GroupRegistry::remove(const std::string& name) {
  std::lock_guard lock(mutex_);
  groups_.erase(name);
}

bool GroupRegistry::contains(const std::string& name) {
  std::lock_guard lock(mutex_);
  return groups_.count(name) != 0;
}

Group& GroupRegistry::get(const std::string& name) {
  auto it = groups_.find(name);
  if (it == groups_.end()) {
    throw UsageError(fmt::format(
        "group_name '{}': not registered with kiln; call kiln.init_group(group) on every rank of "
        "the group first",
        name));
  }
  return *it->second;
}

}  // namespace kiln::torch_ops
