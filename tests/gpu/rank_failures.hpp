// The failed checks of one rank in a multi-rank GPU test: each prints "rank R: what" to stderr
// (the launcher's log says which rank) and counts; exit_code() is the rank's exit status.
#pragma once

#include <cstdio>
#include <string>

namespace kiln::testing {

class RankFailures {
 public:
  explicit RankFailures(int rank) : rank_(rank) {}
  void operator()(const std::string& what) {
    std::fprintf(stderr, "rank %d: %s\n", rank_, what.c_str());
    ++count_;
  }
  int count() const { return count_; }
  int exit_code() const { return count_ == 0 ? 0 : 1; }

 private:
  int rank_;
  int count_ = 0;
};

}  // namespace kiln::testing
