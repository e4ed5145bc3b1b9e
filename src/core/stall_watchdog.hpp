// A per-process stall watchdog: the owner marks progress at points it must pass regularly; when
// none comes for `limit_seconds`, the process prints what it was doing and ends at once with
// _exit(1). Used where a wait can block forever inside CUDA (a hung kernel of an outside
// candidate under a synchronous copy): no exception can unwind such a thread, and destructors
// would block on the same hung kernel, so ending the process is the only way out. The launcher
// then reports the rank and stops the others.
#pragma once

#include <atomic>
#include <string>
#include <thread>

namespace kiln::core {

class StallWatchdog {
 public:
  // `rank` only names the process in the message; limit_seconds must be > 0.
  StallWatchdog(double limit_seconds, int rank);
  ~StallWatchdog();
  StallWatchdog(const StallWatchdog&) = delete;
  StallWatchdog& operator=(const StallWatchdog&) = delete;

  // Progress: the clock restarts; `doing` (copied) names the step for the message.
  void progress(const std::string& doing);

 private:
  void watch();

  double limit_seconds_;
  int rank_;
  std::atomic<long long> last_progress_ns_;
  std::atomic<bool> stop_{false};
  // The step's name, written under a tiny spin lock so the watcher reads a whole string.
  std::atomic_flag name_lock_ = ATOMIC_FLAG_INIT;
  char doing_[160] = {};
  std::thread watcher_;
};

}  // namespace kiln::core
