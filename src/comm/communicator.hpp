// An NCCL communicator with a watchdog. It is created non-blocking so that no NCCL call can hang
// the process: every wait polls the stream and ncclCommGetAsyncError against a deadline, and on an
// error or a timeout the communicator is aborted (ncclCommAbort) and kiln::TimeoutError /
// kiln::Error names the rank and the operation. A rank that dies therefore ends its peers within
// the timeout instead of leaving them spinning in a collective kernel.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <string>

#include "comm/launch_env.hpp"

namespace kiln::comm {

class Communicator {
 public:
  // Bootstraps through NCCL_COMM_ID (see bootstrap_address) and binds the rank to GPU
  // local_rank % visible devices. `timeout_seconds` bounds initialisation and every wait.
  // `blocking` = true creates a blocking communicator: lower launch overhead for small messages,
  // but initialisation and first point-to-point connections are then not bounded by the watchdog
  // (waits on the stream still are).
  Communicator(const RankInfo& info, double timeout_seconds, bool blocking = false);
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const { return info_.rank; }
  int size() const { return info_.world_size; }
  int device() const { return device_; }
  const RankInfo& info() const { return info_; }
  ncclComm_t get() const { return comm_; }
  double timeout_seconds() const { return timeout_seconds_; }

  // Checks the result of an NCCL call made on this communicator; waits out ncclInProgress.
  void complete(ncclResult_t result, const std::string& operation);
  // Blocks until `stream` is idle, watching NCCL's async error and the deadline.
  void wait(cudaStream_t stream, const std::string& operation);
  // Aborts the communicator (idempotent). Later calls on it fail.
  void abort();

 private:
  [[noreturn]] void fail(const std::string& message, bool timed_out);

  RankInfo info_;
  double timeout_seconds_;
  int device_ = 0;
  ncclComm_t comm_ = nullptr;
  bool aborted_ = false;
};

// "2.28.9" for the NCCL library loaded at run time.
std::string nccl_version();

}  // namespace kiln::comm
