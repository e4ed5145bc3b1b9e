// Outside candidates judged on 2 GPUs with the allgather problem: a correct one is accepted, and
// every cheating, crashing or hanging one is rejected with the right reason while kiln itself
// survives (each run is a separate `kiln bench candidate` process).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "core/run_command.hpp"
#include "gpu_availability.hpp"

namespace {

struct Verdict {
  int exit_code = -1;
  std::string output;
};

// The build directory holds this test binary and `kiln`; the sources are beside it in the tree
// (the device machines run a copy of the tree at another path than the one it was built at).
std::filesystem::path build_dir() {
  return std::filesystem::read_symlink("/proc/self/exe").parent_path();
}

Verdict judge(const std::string& candidate, const std::string& extra = "") {
  const std::string command =
      (build_dir() / "kiln").string() + " bench candidate --problem allgather --sizes 1M -g 2" +
      kiln::testing::ranks_per_gpu_flag(2) + " --trials 3 -w 2 -n 5 --timeout 20 --source " +
      (build_dir().parent_path() / "tests" / "candidates" / candidate).string() + " " + extra;
  Verdict v;
  v.exit_code = kiln::core::run_command(command, v.output);
  return v;
}

TEST(CandidateGpu, CorrectCandidateIsAccepted) {
  KILN_SKIP_UNLESS_RANKS(2);
  const Verdict v = judge("allgather_pull.cu");
  EXPECT_EQ(v.exit_code, 0) << v.output;
  EXPECT_NE(v.output.find("accepted"), std::string::npos) << v.output;
}

TEST(CandidateGpu, CheatsAreRejectedWithTheRightReason) {
  KILN_SKIP_UNLESS_RANKS(2);
  struct Case {
    const char* file;
    std::vector<std::string> reasons;  // any of them
  };
  const std::vector<Case> cases = {
      {"cheat_previous_output.cu", {"trial 1:"}},
      {"cheat_half_output.cu", {"output byte"}},
      {"cheat_skip_rank.cu", {"rank 1:"}},
      {"cheat_side_stream.cu", {"work outside the given stream", "output byte"}},
  };
  for (const Case& c : cases) {
    const Verdict v = judge(c.file);
    EXPECT_NE(v.exit_code, 0) << c.file << "\n" << v.output;
    EXPECT_NE(v.output.find("REJECTED"), std::string::npos) << c.file << "\n" << v.output;
    bool reason = false;
    for (const std::string& r : c.reasons) reason = reason || v.output.find(r) != std::string::npos;
    EXPECT_TRUE(reason) << c.file << ": none of the expected reasons in\n" << v.output;
  }
}

TEST(CandidateGpu, CrashesAndHangsCostOnlyTheCandidate) {
  KILN_SKIP_UNLESS_RANKS(2);
  const Verdict crash = judge("crashes.cu");
  EXPECT_NE(crash.exit_code, 0) << crash.output;
  EXPECT_NE(crash.output.find("REJECTED"), std::string::npos) << crash.output;
  EXPECT_NE(crash.output.find("signal"), std::string::npos) << crash.output;
  const Verdict hang = judge("hangs.cu");
  EXPECT_NE(hang.exit_code, 0) << hang.output;
  EXPECT_NE(hang.output.find("REJECTED"), std::string::npos) << hang.output;
}

}  // namespace
