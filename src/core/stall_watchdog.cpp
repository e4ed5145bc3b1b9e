#include "core/stall_watchdog.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>

#include "core/error.hpp"

namespace kiln::core {
namespace {

long long now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

StallWatchdog::StallWatchdog(double limit_seconds, int rank)
    : limit_seconds_(limit_seconds), rank_(rank), last_progress_ns_(now_ns()) {
  if (!(limit_seconds > 0)) {
    throw UsageError("stall limit " + std::to_string(limit_seconds) + ": must be > 0 seconds");
  }
  std::snprintf(doing_, sizeof(doing_), "%s", "starting");
  watcher_ = std::thread([this] { watch(); });
}

StallWatchdog::~StallWatchdog() {
  stop_.store(true);
  if (watcher_.joinable()) watcher_.join();
}

void StallWatchdog::progress(const std::string& doing) {
  while (name_lock_.test_and_set(std::memory_order_acquire)) {
  }
  std::snprintf(doing_, sizeof(doing_), "%s", doing.c_str());
  name_lock_.clear(std::memory_order_release);
  last_progress_ns_.store(now_ns(), std::memory_order_release);
}

void StallWatchdog::watch() {
  while (!stop_.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const double idle = (now_ns() - last_progress_ns_.load(std::memory_order_acquire)) * 1e-9;
    if (idle > limit_seconds_) {
      char doing[sizeof(doing_)];
      while (name_lock_.test_and_set(std::memory_order_acquire)) {
      }
      std::memcpy(doing, doing_, sizeof(doing));
      name_lock_.clear(std::memory_order_release);
      std::fprintf(stderr,
                   "kiln: rank %d: error: no progress for %.0f s during '%s' (a kernel may be "
                   "hung); exiting\n",
                   rank_, limit_seconds_, doing);
      std::fflush(stdout);
      std::fflush(stderr);
      _exit(1);
    }
  }
}

}  // namespace kiln::core
