// A progress bar for long measurements (`kiln tune profile`, `kiln tune validate`): one line on
// stderr, redrawn in place on a terminal and printed every 10% otherwise (logs stay short), with
// the step being done, the time spent and an estimate of the time left from the rate so far.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

namespace kiln::core {

class ProgressBar {
 public:
  // `total` units of work; `enabled` false makes every call a no-op (e.g. ranks other than 0).
  ProgressBar(std::string what, double total, bool enabled, std::FILE* out = stderr);
  // Marks `units` more done and names the next step.
  void advance(double units, const std::string& step);
  // Ends the line.
  void finish();
  ~ProgressBar();

  // The line for `done` of `total` after `elapsed_s` (exposed for tests).
  static std::string line(const std::string& what, double done, double total, double elapsed_s,
                          const std::string& step, int width = 30);

 private:
  std::string what_;
  double total_ = 1.0, done_ = 0.0;
  bool enabled_ = false, terminal_ = false, finished_ = false;
  int last_decile_ = -1;
  std::FILE* out_ = nullptr;
  std::chrono::steady_clock::time_point start_;
};

// "12 s", "3 min 05 s".
std::string format_duration(double seconds);

}  // namespace kiln::core
