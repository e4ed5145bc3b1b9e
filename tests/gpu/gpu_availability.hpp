// GPU tests run their GPU work in forked ranks and skip with one line where too few GPUs exist.
#pragma once

#include <gtest/gtest.h>

#include "comm/local_launcher.hpp"

namespace kiln::testing {

inline int visible_gpus() {
  static const int count =
      comm::count_visible_gpus();  // counted in a child: this process stays CUDA-free
  return count;
}

}  // namespace kiln::testing

#define KILN_SKIP_UNLESS_GPUS(n)                                                        \
  do {                                                                                  \
    if (::kiln::testing::visible_gpus() < (n))                                          \
      GTEST_SKIP() << "needs " << (n) << " GPU(s), " << ::kiln::testing::visible_gpus() \
                   << " visible";                                                       \
  } while (0)
