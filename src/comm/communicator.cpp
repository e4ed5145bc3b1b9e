#include "comm/communicator.hpp"
#include "core/startup_trace.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "comm/nccl_check.hpp"
#include "core/cuda_check.hpp"
#include "core/error.hpp"

namespace kiln::comm {
namespace {

using Clock = std::chrono::steady_clock;

Clock::time_point deadline_after(double seconds) {
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

long long now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

// Polling back-off. A non-blocking communicator returns ncclInProgress and finishes the call on a
// background thread, usually within microseconds; sleeping at once (a sleep overshoots to ~100 us)
// would put a host gap between back-to-back collectives. Spin with yields for the first 2 ms, then
// sleep with a growing interval.
class Backoff {
 public:
  void pause() {
    if (Clock::now() - start_ < std::chrono::milliseconds(2)) {
      std::this_thread::yield();
      return;
    }
    std::this_thread::sleep_for(interval_);
    // At most 200 us: a rank that waits out a peer's longer host work (a 16 MiB check) wakes
    // that late after the peer arrives, and every later step of the ranks pays it (1 ms cost
    // the 4-rank suite ~20 s a row on 4xH200, 2026-11-27).
    interval_ = std::min(interval_ * 2, std::chrono::microseconds(200));
  }

 private:
  Clock::time_point start_ = Clock::now();
  std::chrono::microseconds interval_{10};
};

// Flushes outstanding work and frees `comm`; aborts it instead when finalisation reports an error
// or, on a non-blocking communicator, does not finish within `timeout_seconds`.
void finalize_or_abort(ncclComm_t comm, double timeout_seconds) {
  const auto deadline = deadline_after(timeout_seconds);
  Backoff backoff;
  ncclResult_t result = ncclCommFinalize(comm);
  while (result == ncclInProgress && Clock::now() < deadline) {
    backoff.pause();
    ncclCommGetAsyncError(comm, &result);
  }
  if (result == ncclSuccess) {
    ncclCommDestroy(comm);
  } else {
    ncclCommAbort(comm);
  }
}

// Several ranks on one GPU (launch_env.hpp): each rank gets its own NCCL host id, so that NCCL
// connects the ranks of one GPU through its network transport instead of refusing them as
// duplicates. kiln's own launcher puts every rank on this host, so that transport runs over
// loopback unless the user chose an interface. NCCL reads NCCL_HOSTID once per process, at its
// first call, which in a rank is the one below.
void prepare_nccl_for_a_shared_gpu(const RankInfo& info) {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) std::snprintf(host, sizeof(host), "localhost");
  setenv("NCCL_HOSTID", shared_gpu_host_id(info, host).c_str(), 1);
  if (info.launcher == "kiln" && std::getenv("NCCL_SOCKET_IFNAME") == nullptr) {
    setenv("NCCL_SOCKET_IFNAME", "lo", 1);
  }
}

}  // namespace

std::string nccl_version() {
  int version = 0;
  KILN_NCCL_CHECK(ncclGetVersion(&version));
  // Since 2.9 the code is major*10000 + minor*100 + patch.
  return fmt::format("{}.{}.{}", version / 10000, (version % 10000) / 100, version % 100);
}

ncclComm_t Communicator::wait_for_init(ncclComm_t comm, ncclResult_t result, double timeout_seconds,
                                       const std::string& what, int rank) {
  const auto deadline = deadline_after(timeout_seconds);
  Backoff backoff;
  while (result == ncclInProgress && comm != nullptr) {
    if (Clock::now() > deadline) {
      ncclCommAbort(comm);
      throw TimeoutError(
          fmt::format("rank {}: {} did not complete within {:.0f} s (a rank did not "
                      "join); communicator aborted",
                      rank, what, timeout_seconds));
    }
    backoff.pause();
    ncclCommGetAsyncError(comm, &result);
  }
  if (result != ncclSuccess) {
    if (comm != nullptr) ncclCommAbort(comm);
    // NCCL answers "invalid usage" to two ranks of one host on one GPU ("Duplicate GPU
    // detected", printed only under NCCL_DEBUG=WARN): name kiln's way to run them so.
    const char* hint = result == ncclInvalidUsage
                           ? "; if several ranks share one GPU, run them with --ranks-per-gpu "
                             "(kiln's -g launcher) or KILN_RANKS_PER_GPU (other launchers)"
                           : "";
    throw Error(
        fmt::format("rank {}: {} failed: {}{}", rank, what, nccl_error_detail(result), hint));
  }
  return comm;
}

namespace {

void check_timeout(double timeout_seconds) {
  if (timeout_seconds <= 0) {
    throw UsageError(fmt::format("--timeout {}: must be positive (seconds)", timeout_seconds));
  }
}

// Several ranks on one GPU need a compute mode that lets several contexts in, and NCCL told they
// are on different "hosts".
void allow_shared_gpu(const RankInfo& info, int device) {
  if (info.ranks_per_gpu <= 1) return;
  int mode = 0;
  KILN_CUDA_CHECK(cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, device));
  if (mode == cudaComputeModeExclusiveProcess || mode == cudaComputeModeProhibited) {
    throw Error(fmt::format(
        "rank {}: GPU {} is in {} compute mode, so {} ranks cannot share it (--ranks-per-gpu)",
        info.rank, device, mode == cudaComputeModeProhibited ? "prohibited" : "exclusive-process",
        info.ranks_per_gpu));
  }
  prepare_nccl_for_a_shared_gpu(info);
}

// Sets (or, with nullopt, unsets) an environment variable for the lifetime of the object and
// restores what was there before.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::optional<std::string>& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      setenv(name, value->c_str(), 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace

Communicator::Communicator(const RankInfo& info, double timeout_seconds, NcclMode mode)
    : info_(info), timeout_seconds_(timeout_seconds), mode_(mode) {
  check_timeout(timeout_seconds_);
  int devices = 0;
  KILN_CUDA_CHECK(cudaGetDeviceCount(&devices));
  device_ = gpu_for_rank(info_, devices);
  core::trace_point("communicator: setting the device");
  KILN_CUDA_CHECK(cudaSetDevice(device_));
  core::trace_point("communicator: device set");
  allow_shared_gpu(info_, device_);
  if (info_.world_size == 1 && mode_ == NcclMode::kBlockingDataPath) {
    deferred_ = true;  // no peer to wait for: made at the first get(), if any
    return;
  }

  const std::string address = bootstrap_address(info_, process_environment());
  ncclUniqueId id;
  {
    ScopedEnv root("NCCL_COMM_ID", address);  // ncclGetUniqueId reads it; rank 0 hosts the root
    KILN_NCCL_CHECK(ncclGetUniqueId(&id));
    initialise(id, fmt::format("bootstrap {}", address));
  }
}

Communicator::Communicator(const RankInfo& info, const ncclUniqueId& id, int device,
                           double timeout_seconds, NcclMode mode)
    : info_(info), timeout_seconds_(timeout_seconds), mode_(mode), device_(device) {
  check_timeout(timeout_seconds_);
  if (info_.world_size < 1 || info_.rank < 0 || info_.rank >= info_.world_size) {
    throw UsageError(fmt::format("rank {} of world size {}: need 0 <= rank < world size >= 1",
                                 info_.rank, info_.world_size));
  }
  KILN_CUDA_CHECK(cudaSetDevice(device_));
  allow_shared_gpu(info_, device_);
  ScopedEnv no_root("NCCL_COMM_ID", std::nullopt);  // the id names its root; no fixed address
  initialise(id, "unique id given by the caller");
}

void Communicator::initialise(const ncclUniqueId& id, const std::string& bootstrap) {
  core::trace_point("communicator: NCCL initialising");
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclComm_t initial = nullptr;
  const ncclResult_t started =
      ncclCommInitRankConfig(&initial, info_.world_size, id, info_.rank, &config);
  wait_for_init(
      initial, started, timeout_seconds_,
      fmt::format("communicator initialisation ({} ranks, {})", info_.world_size, bootstrap),
      info_.rank);
  core::trace_point("communicator: bootstrap communicator up");
  if (mode_ == NcclMode::kNonBlocking) {
    comm_ = initial;
    return;
  }
  // The data-path communicator: blocking, initialised from a fresh id that rank 0 creates and
  // broadcasts over the (proven, bounded) non-blocking one. (ncclCommSplit of a non-blocking parent
  // into a blocking child failed with an internal error on NCCL 2.28.3, 2026-11-22.)
  ncclUniqueId data_id{};
  // With NCCL_COMM_ID set, rank 0 would host a root on that (still bound) address again, both in
  // ncclGetUniqueId and in ncclCommInitRank: clear it so the new root takes an ephemeral port.
  ScopedEnv no_root("NCCL_COMM_ID", std::nullopt);
  if (info_.rank == 0) KILN_NCCL_CHECK(ncclGetUniqueId(&data_id));
  {
    comm_ = initial;  // complete()/wait() act on the bootstrap communicator for the broadcast
    cudaStream_t stream = nullptr;
    KILN_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    void* buffer = nullptr;
    KILN_CUDA_CHECK(cudaMalloc(&buffer, sizeof(data_id)));
    KILN_CUDA_CHECK(cudaMemcpy(buffer, &data_id, sizeof(data_id), cudaMemcpyHostToDevice));
    complete(ncclBroadcast(buffer, buffer, sizeof(data_id), ncclUint8, 0, initial, stream),
             "data communicator id broadcast");
    wait(stream, "data communicator id broadcast");
    KILN_CUDA_CHECK(cudaMemcpy(&data_id, buffer, sizeof(data_id), cudaMemcpyDeviceToHost));
    KILN_CUDA_CHECK(cudaFree(buffer));
    KILN_CUDA_CHECK(cudaStreamDestroy(stream));
  }
  finalize_or_abort(initial, timeout_seconds_);
  comm_ = nullptr;
  // Blocking init: bounded by the watchdog thread (every rank was alive a moment ago).
  watchdog_ = std::thread([this] { watch_blocking_calls(); });
  ncclComm_t data = nullptr;
  arm("data communicator initialisation");
  const ncclResult_t data_started = ncclCommInitRank(&data, info_.world_size, data_id, info_.rank);
  disarm();
  if (data_started != ncclSuccess) {
    stop_watchdog_.store(true);
    watchdog_.join();  // a constructor that throws runs no destructor
    throw Error(fmt::format("rank {}: data communicator initialisation failed: {}", info_.rank,
                            nccl_error_detail(data_started)));
  }
  comm_ = data;
  core::trace_point("communicator: data communicator up");
}

void Communicator::initialise_single_rank() const {
  deferred_ = false;
  core::trace_point("communicator: one-rank NCCL initialising");
  // The constructor's own path (bootstrap communicator, then the blocking data one), only later.
  // A direct one-step ncclCommInitRank failed on an H200 (2026-11-28: "Call to bind failed:
  // Address already in use", with NCCL_COMM_ID set for the second call); this path is the one every
  // one-rank run took before.
  auto* self = const_cast<Communicator*>(this);
  const std::string address = bootstrap_address(info_, process_environment());
  ncclUniqueId id;
  ScopedEnv root("NCCL_COMM_ID", address);
  KILN_NCCL_CHECK(ncclGetUniqueId(&id));
  self->initialise(id, fmt::format("bootstrap {}", address));
  core::trace_point("communicator: one-rank NCCL up");
}

Communicator::~Communicator() {
  core::trace_point("communicator: finalising");
  if (comm_ != nullptr && !aborted_) {
    arm("communicator finalisation");  // a blocking finalize waits for peers: keep it bounded
    finalize_or_abort(comm_, timeout_seconds_);
    disarm();
  }
  core::trace_point("communicator: finalised");
  stop_watchdog_.store(true);
  if (watchdog_.joinable()) watchdog_.join();
}

void Communicator::arm(const std::string& operation) {
  if (mode_ != NcclMode::kBlockingDataPath) return;
  std::snprintf(armed_operation_, sizeof(armed_operation_), "%s", operation.c_str());
  armed_deadline_ns_.store(now_ns() + static_cast<long long>(timeout_seconds_ * 1e9),
                           std::memory_order_release);
}

void Communicator::watch_blocking_calls() {
  while (!stop_watchdog_.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const long long deadline = armed_deadline_ns_.load(std::memory_order_acquire);
    if (deadline != 0 && now_ns() > deadline) {
      // The calling thread is stuck inside NCCL (e.g. connecting to a dead peer); it cannot be
      // unwound, so the process ends here, loudly, rather than hanging.
      std::fprintf(stderr,
                   "kiln: rank %d: error: NCCL call '%s' did not return within %.0f s (a peer rank "
                   "may have died); exiting\n",
                   info_.rank, armed_operation_, timeout_seconds_);
      std::fflush(stderr);
      _exit(1);
    }
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
  if (aborted_)
    throw Error(fmt::format("rank {}: {} on an aborted communicator", info_.rank, operation));
  const auto deadline = deadline_after(timeout_seconds_);
  Backoff backoff;
  while (result == ncclInProgress) {
    if (Clock::now() > deadline) {
      fail(fmt::format("{} did not complete within {:.0f} s", operation, timeout_seconds_), true);
    }
    backoff.pause();
    ncclCommGetAsyncError(comm_, &result);
  }
  if (result != ncclSuccess) {
    fail(fmt::format("{} failed: {}", operation, nccl_error_detail(result)), false);
  }
}

void Communicator::wait(cudaStream_t stream, const std::string& operation) {
  if (aborted_)
    throw Error(fmt::format("rank {}: {} on an aborted communicator", info_.rank, operation));
  const auto deadline = deadline_after(timeout_seconds_);
  Backoff backoff;
  for (;;) {
    const cudaError_t query = cudaStreamQuery(stream);
    if (query == cudaSuccess) return;
    if (query != cudaErrorNotReady) {
      fail(fmt::format("{}: CUDA error {}", operation, core::cuda_error_detail(query)), false);
    }
    ncclResult_t async = ncclSuccess;
    if (comm_ != nullptr) ncclCommGetAsyncError(comm_, &async);  // none yet: one rank, no NCCL
    if (async != ncclSuccess && async != ncclInProgress) {
      fail(fmt::format("{} failed: {}", operation, nccl_error_detail(async)), false);
    }
    if (Clock::now() > deadline) {
      std::string stuck;
      for (const auto& [id, reporter] : stall_reporters_) {
        try {
          const std::string found = reporter();
          if (!found.empty()) stuck += "; " + found;
        } catch (const std::exception& e) {
          stuck += fmt::format("; (a stall reporter failed: {})", e.what());
        }
      }
      fail(fmt::format("{} did not complete within {:.0f} s (a peer rank may have died or "
                       "stopped calling it){}",
                       operation, timeout_seconds_, stuck),
           true);
    }
    backoff.pause();
  }
}

int Communicator::add_stall_reporter(std::function<std::string()> reporter) {
  const int id = next_stall_reporter_++;
  stall_reporters_.emplace(id, std::move(reporter));
  return id;
}

void Communicator::remove_stall_reporter(int id) {
  stall_reporters_.erase(id);
}

}  // namespace kiln::comm
