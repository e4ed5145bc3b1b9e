// The process groups kiln's PyTorch ops run on, by PyTorch's group name: each holds kiln's own NCCL
// communicator (bootstrapped from a unique id that the Python side carries over the group) and the
// state cached per (operation, shape, dtype): the overlap objects with their tuned plans, and the
// all-gather's stream. Ops look their group up and hold its own mutex while they run; a name
// never registered, or released, is an error that says how to register it.
#pragma once

#include <ATen/ATen.h>
#include <c10/cuda/CUDAStream.h>

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "comm/communicator.hpp"
#include "overlap/chunked_reduce_scatter.hpp"
#include "overlap/gemm_collective.hpp"
#include "rank_agreement.hpp"

namespace kiln::torch_ops {

// One overlap object and the row reordering its ReduceScatter needs (padded_m == m: none).
struct CachedCollective {
  std::unique_ptr<overlap::GemmCollective> collective;  // null where `chunked` runs instead
  // ReduceScatter: async-TP's algorithm from kiln's parts (cuBLAS per destination chunk + copy
  // engines), where it timed faster than the plan at creation or was asked for
  // ($KILN_TORCH_RS_ALGORITHM); it writes PyTorch's contiguous row blocks itself.
  std::unique_ptr<overlap::ChunkedReduceScatter> chunked;
  std::string plan_source;       // where the plan came from (the tuner's lookup)
  int padded_m = 0;              // rows of the GEMM's A (ReduceScatter: the reordered A')
  bool contiguous_rows = false;  // ReduceScatter: the runtime writes contiguous row blocks
  // B's layout the object was built for (rank 0's at creation, on every rank): a call whose B
  // comes in the other layout copies it into this one.
  overlap::WeightLayout layout = overlap::WeightLayout::kKN;
};

struct Group {
  std::string name;
  // Held for the whole of one op on this group (its NCCL calls and its cached state), and by a
  // release, which so waits for the op in flight. Ops on different groups do not wait for each
  // other (NCCL's own rule still holds: collectives of two communicators that run at the same
  // time must be issued in the same order on every rank).
  std::mutex mutex;
  std::unique_ptr<comm::Communicator> comm;  // null once released
  std::unique_ptr<RankAgreement> agreement;  // on comm; made with it (see rank_agreement.hpp)
  // Key: op ("rs", "ar"), M, N, K, dtype. B's layout is not part of it: ranks whose B differ in
  // layout must still find (or make, collectively) the same object.
  using Key = std::tuple<std::string, int, int, int, int>;
  std::map<Key, CachedCollective> collectives;
  // The all-gather's communication stream (a pool stream of this device).
  std::unique_ptr<c10::cuda::CUDAStream> gather_stream;
};

// A group held for one op: the group stays alive (a release waits for the lock) and no other op
// of this process runs on it meanwhile.
class LockedGroup {
 public:
  explicit LockedGroup(std::shared_ptr<Group> group);
  Group& operator*() const { return *group_; }
  Group* operator->() const { return group_.get(); }

 private:
  std::shared_ptr<Group> group_;
  std::unique_lock<std::mutex> lock_;
};

class GroupRegistry {
 public:
  static GroupRegistry& instance();
  // Joins `name`'s communicator (collective over the group's ranks). `gpu_slot` numbers the
  // `ranks_per_gpu` ranks that share this GPU (0.. on each GPU: NCCL tells them apart by it).
  // Throws kiln::UsageError when `name` is already registered with another rank or size.
  void add(const std::string& name, int rank, int world_size, int gpu_slot, int ranks_per_gpu,
           const at::Tensor& unique_id, double timeout_seconds);
  // Drops `name`'s cached state and communicator once no op runs on it (collective over the
  // group's ranks: the objects' destructors exchange with the peers). A name not registered (never,
  // or released already) is left alone.
  void remove(const std::string& name);
  // remove() of every group, in name order: the same order on every rank, so that ranks sharing
  // several groups release them without waiting on each other in a cycle.
  void remove_all();
  bool contains(const std::string& name);
  // The group, locked for an op; throws kiln::UsageError naming kiln.init_group when it was never
  // registered or has been released.
  LockedGroup lock(const std::string& name);

 private:
  std::shared_ptr<Group> find(const std::string& name);
  // Guards the maps only; never held across NCCL calls (a group's own mutex is).
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<Group>> groups_;
  std::set<std::string> released_;  // names released and not registered again (for the message)
};

// A fresh NCCL unique id as a CPU uint8 tensor (rank 0 creates it; the Python side broadcasts it).
at::Tensor nccl_unique_id();

}  // namespace kiln::torch_ops
