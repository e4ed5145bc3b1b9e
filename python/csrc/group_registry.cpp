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

namespace {

// Values each agreement carries per rank (overlap_ops.cpp: B's layout, the plan choice and the
// ReduceScatter's layout).
constexpr std::size_t kAgreementValues = 3;

std::string unknown_group_message(const std::string& name, bool released) {
  if (released) {
    return fmt::format(
        "group_name '{}': released from kiln (kiln.release_group or kiln.release_all); call "
        "kiln.init_group(group) on every rank of the group to use it again",
        name);
  }
  return fmt::format(
      "group_name '{}': not registered with kiln; call kiln.init_group(group) on every rank of "
      "the group first",
      name);
}

ncclUniqueId checked_unique_id(const at::Tensor& unique_id) {
  if (unique_id.device().type() != at::kCPU || unique_id.scalar_type() != at::kByte ||
      unique_id.numel() != static_cast<int64_t>(sizeof(ncclUniqueId))) {
    throw UsageError(fmt::format("unique_id: a CPU uint8 tensor of {} bytes (NCCL's unique id)",
                                 sizeof(ncclUniqueId)));
  }
  ncclUniqueId id;
  std::memcpy(&id, unique_id.contiguous().data_ptr(), sizeof(id));
  return id;
}

// Destroys the group's state in the same order on every rank, since destructors may be
// collective (a copy-engine exchange's peer-memory handshake, communicator finalisation): the
// cached objects in key order (the keys are the same on every rank: they are made collectively),
// then the communicator they use. Waits for an op in flight on the group (its mutex).
void release(Group& group) {
  std::lock_guard lock(group.mutex);
  while (!group.collectives.empty()) group.collectives.erase(group.collectives.begin());
  group.gather_stream.reset();
  group.agreement.reset();
  group.comm.reset();
}

}  // namespace

LockedGroup::LockedGroup(std::shared_ptr<Group> group)
    : group_(std::move(group)), lock_(group_->mutex) {}

GroupRegistry& GroupRegistry::instance() {
  static GroupRegistry registry;
  return registry;
}

// Environment writes in a multithreaded process. ncclGetUniqueId reads NCCL_COMM_ID, so it is
// unset around the call below (unsetenv, then setenv to restore it); GroupRegistry::add's
// Communicator does the same for the whole of its initialisation (comm/communicator.cpp's
// ScopedEnv, up to seconds) and, when ranks share a GPU, sets NCCL_HOSTID for good. POSIX does not
// make setenv/unsetenv safe against another thread's getenv/setenv (glibc may move or shift the
// environment array under a reader), and a PyTorch process has many threads. Acceptable only
// because these run in kiln.init_group alone, which is documented to be called at setup from one
// thread, not while another thread initialises NCCL (e.g. a ProcessGroupNCCL's lazy first
// collective: it would also find NCCL_COMM_ID missing) or changes the environment. Not acceptable
// as a per-op path; none of the ops touch the environment.
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
  {
    std::lock_guard lock(mutex_);
    if (auto it = groups_.find(name); it != groups_.end()) {
      const comm::Communicator& c = *it->second->comm;  // a group in the map has its communicator
      if (c.rank() == rank && c.size() == world_size) return;  // registered already
      throw UsageError(
          fmt::format("group '{}' is already registered as rank {} of {}, not {} of {}", name,
                      c.rank(), c.size(), rank, world_size));
    }
  }
  const ncclUniqueId id = checked_unique_id(unique_id);
  comm::RankInfo info;
  info.rank = rank;
  info.world_size = world_size;
  info.local_rank = gpu_slot;  // NCCL_HOSTID of a shared GPU: local_rank % ranks_per_gpu
  info.ranks_per_gpu = ranks_per_gpu;
  info.launcher = "torch";
  // NCCL's initialisation waits for every rank (seconds): without the registry's mutex, so that
  // ops on the other groups go on meanwhile. It writes the environment (see nccl_unique_id).
  auto group = std::make_shared<Group>();
  group->name = name;
  group->comm =
      std::make_unique<comm::Communicator>(info, id, c10::cuda::current_device(), timeout_seconds);
  group->agreement = std::make_unique<RankAgreement>(*group->comm, kAgreementValues);
  std::lock_guard lock(mutex_);
  if (groups_.count(name) != 0) {
    throw UsageError(fmt::format(
        "group '{}' was registered by another thread meanwhile; call kiln.init_group once per "
        "group (from one thread)",
        name));
  }
  groups_[name] = std::move(group);
  released_.erase(name);
}

void GroupRegistry::remove(const std::string& name) {
  std::shared_ptr<Group> group;
  {
    std::lock_guard lock(mutex_);
    auto it = groups_.find(name);
    if (it == groups_.end()) return;
    group = std::move(it->second);
    groups_.erase(it);
    released_.insert(name);
  }
  release(*group);
}

void GroupRegistry::remove_all() {
  std::map<std::string, std::shared_ptr<Group>> all;
  {
    std::lock_guard lock(mutex_);
    all.swap(groups_);
    for (const auto& entry : all) released_.insert(entry.first);
  }
  for (auto& entry : all) release(*entry.second);  // in name order (std::map)
}

bool GroupRegistry::contains(const std::string& name) {
  std::lock_guard lock(mutex_);
  return groups_.count(name) != 0;
}

std::shared_ptr<Group> GroupRegistry::find(const std::string& name) {
  std::lock_guard lock(mutex_);
  if (auto it = groups_.find(name); it != groups_.end()) return it->second;
  throw UsageError(unknown_group_message(name, released_.count(name) != 0));
}

LockedGroup GroupRegistry::lock(const std::string& name) {
  LockedGroup locked(find(name));
  // Released between find() and the lock (the release held the group's mutex meanwhile).
  if (!locked->comm) throw UsageError(unknown_group_message(name, true));
  return locked;
}

}  // namespace kiln::torch_ops
