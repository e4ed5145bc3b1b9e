#include "core/startup_trace.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace kiln::core {

bool startup_trace_enabled() {
  static const bool enabled = std::getenv("KILN_TRACE_STARTUP") != nullptr;
  return enabled;
}

void trace_point(const char* what) {
  if (!startup_trace_enabled()) return;
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);  // one clock for every process of the launch
  std::fprintf(stderr, "kiln-trace %lld.%06ld %d %s\n", static_cast<long long>(now.tv_sec),
               now.tv_nsec / 1000, static_cast<int>(getpid()), what);
  std::fflush(stderr);
}

}  // namespace kiln::core
