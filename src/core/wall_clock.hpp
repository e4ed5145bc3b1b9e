// Host wall-clock spans, for reports of where a program's time went (not for timing kernels:
// those use CUDA events, core/event_timer.hpp).
#pragma once

#include <chrono>

namespace kiln::core {

using WallTime = std::chrono::steady_clock::time_point;

inline WallTime wall_now() {
  return std::chrono::steady_clock::now();
}

// Seconds from `start` to now.
inline double seconds_since(WallTime start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace kiln::core
