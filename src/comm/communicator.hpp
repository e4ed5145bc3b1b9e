// An NCCL communicator with a watchdog, so that no NCCL call or wait can hang the process.
//
// Initialisation is always non-blocking and polled against the deadline (a rank that never joins
// cannot hang the others). By default that bootstrap communicator then carries a fresh unique id
// from rank 0 to all ranks, and a blocking communicator is initialised from it for the data path:
// on the 2xH200 machine a non-blocking communicator hands each call to a background thread and
// costs ~25-35 us more per collective at small sizes (docs/results/). Calls on the blocking
// communicator (its initialisation too) are armed on a watchdog thread: one that has not returned
// by the deadline ends the process with a message naming the rank and operation. Every wait polls
// the stream and ncclCommGetAsyncError against the deadline and aborts (ncclCommAbort) on an error
// or timeout, raising kiln::Error / kiln::TimeoutError naming the rank and the operation.
//
// A world of one rank (a single-GPU judgement: KernelBench's problems) has no peer to wait for,
// and kiln's own exchanges (max over ranks, peer memory, text broadcast) short-circuit there: its
// NCCL communicators are made at the first get(), if ever, as the constructor would have made
// them. On an H200 they and their finalisation were 1.3 s of a 2.0 s judgement (2026-11-28).
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <atomic>
#include <functional>
#include <map>
#include <string>
#include <thread>

#include "comm/launch_env.hpp"

namespace kiln::comm {

enum class NcclMode {
  kBlockingDataPath,  // non-blocking bootstrap, then a blocking data communicator (default)
  kNonBlocking,       // non-blocking throughout: every call is polled, none can block
};

class Communicator {
 public:
  // Bootstraps through NCCL_COMM_ID (see bootstrap_address) and binds the rank to its GPU
  // (gpu_for_rank: several ranks share one when info.ranks_per_gpu > 1). `timeout_seconds` bounds
  // initialisation, every call and wait.
  Communicator(const RankInfo& info, double timeout_seconds,
               NcclMode mode = NcclMode::kBlockingDataPath);
  // Joins the communicator of `id`, which the caller created on rank 0 (ncclGetUniqueId) and
  // carried to every rank its own way (a framework's store or process group: kiln's PyTorch ops),
  // on CUDA device `device`. Otherwise as above (several ranks may share the device when
  // info.ranks_per_gpu > 1).
  Communicator(const RankInfo& info, const ncclUniqueId& id, int device, double timeout_seconds,
               NcclMode mode = NcclMode::kBlockingDataPath);
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const { return info_.rank; }
  int size() const { return info_.world_size; }
  int device() const { return device_; }
  const RankInfo& info() const { return info_; }
  // True when this rank shares its GPU with others: results are for correctness, not speed.
  bool shares_gpu() const { return info_.ranks_per_gpu > 1; }
  // The NCCL communicator (a world of one rank: made here at the first call).
  ncclComm_t get() const {
    if (comm_ == nullptr && deferred_) initialise_single_rank();
    return comm_;
  }
  NcclMode mode() const { return mode_; }
  double timeout_seconds() const { return timeout_seconds_; }

  // Runs one NCCL call on this communicator under the watchdog and checks its result:
  //   comm.call("allreduce", [&] { return ncclAllReduce(..., comm.get(), stream); });
  template <typename NcclCall>
  void call(const std::string& operation, NcclCall&& nccl_call) {
    arm(operation);
    const ncclResult_t result = nccl_call();
    disarm();
    complete(result, operation);
  }
  // Checks the result of an NCCL call made on this communicator; waits out ncclInProgress.
  void complete(ncclResult_t result, const std::string& operation);
  // Blocks until `stream` is idle, watching NCCL's async error and the deadline.
  void wait(cudaStream_t stream, const std::string& operation);
  // Aborts the communicator (idempotent). Later calls on it fail.
  void abort();

  // Work that can leave a stream waiting on a condition no NCCL call knows of (the overlap
  // runtime's stream waits on counters and peer flags) registers a reporter: when wait() times
  // out, each reporter describes what it finds stuck (and may release it, so that the process can
  // still exit) and the description joins the error. Returns an id for remove_stall_reporter.
  int add_stall_reporter(std::function<std::string()> reporter);
  void remove_stall_reporter(int id);

 private:
  // Initialises from `id` (non-blocking, polled), then the blocking data communicator.
  void initialise(const ncclUniqueId& id, const std::string& bootstrap);
  void initialise_single_rank() const;
  [[noreturn]] void fail(const std::string& message, bool timed_out);
  void arm(const std::string& operation);
  void disarm() { armed_deadline_ns_.store(0, std::memory_order_release); }
  void watch_blocking_calls();
  static ncclComm_t wait_for_init(ncclComm_t comm, ncclResult_t result, double timeout_seconds,
                                  const std::string& what, int rank);

  RankInfo info_;
  double timeout_seconds_;
  NcclMode mode_;
  int device_ = 0;
  mutable ncclComm_t comm_ = nullptr;
  mutable bool deferred_ = false;  // one rank, communicator not made yet (see get())
  bool aborted_ = false;
  std::map<int, std::function<std::string()>> stall_reporters_;
  int next_stall_reporter_ = 0;

  // Watchdog of blocking calls: deadline (steady-clock ns, 0 = none) and the call's name.
  std::atomic<long long> armed_deadline_ns_{0};
  char armed_operation_[128] = {};
  std::atomic<bool> stop_watchdog_{false};
  std::thread watchdog_;
};

// "2.28.9" for the NCCL library loaded at run time.
std::string nccl_version();

}  // namespace kiln::comm
