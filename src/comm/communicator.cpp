#include "comm/communicator.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "comm/nccl_check.hpp"
#include "core/cuda_check.hpp"
#include "core/error.hpp"

namespace kiln::comm {
namespace {

using Clock = std::chrono::steady_clock;

Clock::time_point deadline_after(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(
                            std::chrono::duration<double>(seconds));
}

// Polling back-off for ncclInProgress. A non-blocking communicator hands most calls to a
// background thread and returns ncclInProgress; the call is usually done within microseconds, so
// sleeping at once (a sleep overshoots to ~100 us) would put a host gap between back-to-back
// collectives. Spin with yields for the first 2 ms, then sleep with a growing interval.
class Backoff {
 public:
  void pause() {
    if (Clock::now() - start_ < std::chrono::milliseconds(2)) {
      std::this_thread::yield();
      return;
    }
    std::this_thread::sleep_for(interval_);
    if (interval_ < std::chrono::microseconds(1000)) interval_ *= 2;
  }

 private:
  Clock::time_point start_ = Clock::now();
  std::chrono::microseconds interval_{10};
};

}  // namespace

std::string nccl_version() {
  int version = 0;
  KILN_NCCL_CHECK(ncclGetVersion(&version));
  // Since 2.9 the code is major*10000 + minor*100 + patch.
  return fmt::format("{}.{}.{}", version / 10000, (version % 10000) / 100, version % 100);
}

Communicator::Communicator(const RankInfo& info, double timeout_seconds, bool blocking)
    : info_(info), timeout_seconds_(timeout_seconds) {
  if (timeout_seconds_ <= 0) {
    throw UsageError(fmt::format("--timeout {}: must be positive (seconds)", timeout_seconds_));
  }
  int devices = 0;
  KILN_CUDA_CHECK(cudaGetDeviceCount(&devices));
  device_ = info_.local_rank % devices;
  KILN_CUDA_CHECK(cudaSetDevice(device_));

  const std::string address = bootstrap_address(info_, process_environment());
  setenv("NCCL_COMM_ID", address.c_str(), 1);  // ncclGetUniqueId reads it; rank 0 hosts the root
  ncclUniqueId id;
  KILN_NCCL_CHECK(ncclGetUniqueId(&id));

  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = blocking ? 1 : 0;
  complete(ncclCommInitRankConfig(&comm_, info_.world_size, id, info_.rank, &config),
           fmt::format("communicator initialisation ({} ranks, bootstrap {})", info_.world_size,
                       address));
}

Communicator::~Communicator() {
  if (comm_ == nullptr) return;
  if (aborted_) return;
  // Finalize flushes outstanding work; bounded like everything else, abort if it does not end.
  ncclResult_t result = ncclCommFinalize(comm_);
  const auto deadline = deadline_after(timeout_seconds_);
  Backoff backoff;
  while (result == ncclInProgress && Clock::now() < deadline) {
    backoff.pause();
    ncclCommGetAsyncError(comm_, &result);
  }
  if (result == ncclSuccess) {
    ncclCommDestroy(comm_);
  } else {
    ncclCommAbort(comm_);
  }
}

void Communicator::abort() {
  if (comm_ != nullptr && !aborted_) {
    aborted_ = true;
    ncclCommAbort(comm_);
  }
}

void Communicator::fail(const std::string& message, bool timed_out) {
  abort();
  const std::string text = fmt::format("rank {}: {}; communicator aborted", info_.rank, message);
  if (timed_out) throw TimeoutError(text);
  throw Error(text);
}

void Communicator::complete(ncclResult_t result, const std::string& operation) {
  if (aborted_) throw Error(fmt::format("rank {}: {} on an aborted communicator", info_.rank, operation));
  const auto deadline = deadline_after(timeout_seconds_);
  Backoff backoff;
  while (result == ncclInProgress) {
    if (Clock::now() > deadline) {
      fail(fmt::format("{} did not complete within {:.0f} s", operation, timeout_seconds_), true);
    }
    backoff.pause();
    if (comm_ == nullptr) break;
    ncclCommGetAsyncError(comm_, &result);
  }
  if (result != ncclSuccess) {
    fail(fmt::format("{} failed: {}", operation, nccl_error_detail(result)), false);
  }
}

void Communicator::wait(cudaStream_t stream, const std::string& operation) {
  if (aborted_) throw Error(fmt::format("rank {}: {} on an aborted communicator", info_.rank, operation));
  const auto deadline = deadline_after(timeout_seconds_);
  Backoff backoff;
  for (;;) {
    const cudaError_t query = cudaStreamQuery(stream);
    if (query == cudaSuccess) return;
    if (query != cudaErrorNotReady) {
      fail(fmt::format("{}: CUDA error {}", operation, core::cuda_error_detail(query)), false);
    }
    ncclResult_t async = ncclSuccess;
    ncclCommGetAsyncError(comm_, &async);
    if (async != ncclSuccess && async != ncclInProgress) {
      fail(fmt::format("{} failed: {}", operation, nccl_error_detail(async)), false);
    }
    if (Clock::now() > deadline) {
      fail(fmt::format("{} did not complete within {:.0f} s (a peer rank may have died or "
                       "stopped calling it)",
                       operation, timeout_seconds_),
           true);
    }
    backoff.pause();
  }
}

}  // namespace kiln::comm
