// Outside candidates judged on 2 GPUs with the allgather problem: a correct one is accepted, and
// every cheating, crashing or hanging one is rejected with the right reason while kiln itself
// survives (each run is a separate `kiln bench candidate` process).
#include <gtest/gtest.h>

#include <chrono>
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
  double seconds = 0;
};

// The build directory holds this test binary and `kiln`; the sources are beside it in the tree
// (the device machines run a copy of the tree at another path than the one it was built at).
std::filesystem::path build_dir() {
  return std::filesystem::read_symlink("/proc/self/exe").parent_path();
}

struct Judgement {
  std::string problem = "allgather", sizes = "1M", extra;
  int world = 2;
  int timeout = 20;
  int trials = 3;
};

Verdict judge(const std::string& candidate, const Judgement& j = {}) {
  const std::string command =
      (build_dir() / "kiln").string() + " bench candidate --problem " + j.problem + " --sizes " +
      j.sizes + " -g " + std::to_string(j.world) + kiln::testing::ranks_per_gpu_flag(j.world) +
      " --trials " + std::to_string(j.trials) + " -w 2 -n 5 --timeout " +
      std::to_string(j.timeout) + " --source " +
      (build_dir().parent_path() / "tests" / "candidates" / candidate).string() + " " + j.extra;
  Verdict v;
  const auto start = std::chrono::steady_clock::now();
  v.exit_code = kiln::core::run_command(command, v.output);
  v.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return v;
}

bool has(const Verdict& v, const std::string& text) {
  return v.output.find(text) != std::string::npos;
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
      // The judge's timing check names it (a device-wide sync sees the side stream's work).
      {"cheat_side_stream.cu", {"work outside the given stream"}},
      {"returns_error.cu", {"the candidate returned 7"}},
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
  EXPECT_TRUE(has(crash, "REJECTED (a rank crashed or was killed")) << crash.output;
  EXPECT_TRUE(has(crash, "killed by signal 11")) << crash.output;
  // A hung kernel: the ranks' stall watchdog ends it --timeout + 10 s after the last progress
  // (after the communicator's own timeouts had their chance), naming the trial.
  const Verdict hang = judge("hangs.cu");
  EXPECT_NE(hang.exit_code, 0) << hang.output;
  EXPECT_TRUE(has(hang, "REJECTED")) << hang.output;
  EXPECT_TRUE(has(hang, "no progress for 30 s")) << hang.output;
  EXPECT_TRUE(has(hang, "hangs trial 0")) << hang.output;
  EXPECT_LT(hang.seconds, 90.0) << hang.output;
}

TEST(CandidateGpu, TimeLimitEndsTheJudgement) {
  KILN_SKIP_UNLESS_RANKS(2);
  // --timeout longer than --time-limit: the launcher's limit kills every rank first.
  Judgement j;
  j.timeout = 120;
  j.extra = "--time-limit 15";
  const Verdict v = judge("hangs.cu", j);
  EXPECT_NE(v.exit_code, 0) << v.output;
  EXPECT_TRUE(has(v, "REJECTED (ran past --time-limit 15 s)")) << v.output;
  EXPECT_LT(v.seconds, 60.0) << v.output;
}

TEST(CandidateGpu, NothingJudgedIsNotAccepted) {
  KILN_SKIP_UNLESS_RANKS(3);
  // reducescatter 16K on 3 ranks: blocks that are not whole 16-byte vectors, so the only row is
  // skipped and the candidate never runs.
  Judgement j;
  j.problem = "reducescatter";
  j.sizes = "16K";
  j.world = 3;
  const Verdict v = judge("allgather_pull.cu", j);
  EXPECT_NE(v.exit_code, 0) << v.output;
  EXPECT_TRUE(has(v, "candidate not judged: every row was skipped")) << v.output;
  EXPECT_TRUE(has(v, "REJECTED")) << v.output;
  EXPECT_FALSE(has(v, "allgather_pull: accepted")) << v.output;
}

// --- The single-GPU problems after KernelBench level 1 (issue 19's hardened judge) ---

Judgement kb1(const std::string& problem) {
  Judgement j;
  j.problem = problem;
  j.sizes = "small";
  j.world = 1;
  return j;
}

TEST(CandidateGpu, Kb1CorrectCandidatesAreAccepted) {
  KILN_SKIP_UNLESS_GPUS(1);
  // The content-keyed cache never hits (every call has fresh contents), so it always computes.
  for (const auto& [file, problem] : std::vector<std::pair<std::string, std::string>>{
           {"kb1_relu_correct.cu", "kb1-19-relu"},
           {"kb1_mse_correct.cu", "kb1-94-mse-loss"},
           {"kb1_cheat_content_cache.cu", "kb1-19-relu"}}) {
    const Verdict v = judge(file, kb1(problem));
    EXPECT_EQ(v.exit_code, 0) << file << "\n" << v.output;
    EXPECT_TRUE(has(v, "accepted")) << file << "\n" << v.output;
  }
}

TEST(CandidateGpu, Kb1CheatsAreRejectedWithTheirReason) {
  KILN_SKIP_UNLESS_GPUS(1);
  struct Case {
    const char* file;
    const char* problem;
    std::vector<std::string> reasons;  // any of them
  };
  const std::vector<Case> cases = {
      {"kb1_cheat_zero_inputs.cu", "kb1-19-relu", {"changed its inputs"}},
      // Work on some calls only: a later call's output is poison (or differs from the first).
      {"kb1_cheat_first_calls.cu", "kb1-19-relu", {"trial 1:", "trial 2:", "timed call"}},
      {"kb1_cheat_far_apart.cu", "kb1-19-relu", {"trial 0:", "trial 1:", "timed call"}},
      {"kb1_cheat_pointer_cache.cu", "kb1-19-relu", {"trial 1:"}},
      {"kb1_cheat_side_stream.cu", "kb1-19-relu", {"work outside the given stream", "trial 0:"}},
      {"kb1_cheat_host_thread.cu", "kb1-19-relu", {"work outside the given stream", "trial 0:"}},
      {"kb1_cheat_l2_persist.cu", "kb1-19-relu", {"L2 persisting"}},
      {"kb1_cheat_nondeterministic.cu", "kb1-19-relu", {"nondeterministic"}},
      // The reference's output is poisoned while a candidate runs: a copy of it is garbage.
      {"kb1_cheat_reference_read.cu", "kb1-19-relu", {"trial 0:"}},
      {"kb1_cheat_sampling_mse.cu", "kb1-94-mse-loss", {"trial 0:", "faster than the hardware"}},
      // Every value 1% high, most of them within atol (2026-11-30): the whole output's relative
      // L2 error, or a spike's element where its value is large.
      {"kb1_cheat_frobenius_scaled.cu", "kb1-37-frobenius-norm", {"relative L2 error", "elements differ"}},
  };
  for (const Case& c : cases) {
    const Verdict v = judge(c.file, kb1(c.problem));
    EXPECT_NE(v.exit_code, 0) << c.file << "\n" << v.output;
    EXPECT_TRUE(has(v, "REJECTED")) << c.file << "\n" << v.output;
    bool reason = false;
    for (const std::string& r : c.reasons) reason = reason || has(v, r);
    EXPECT_TRUE(reason) << c.file << ": none of the expected reasons in\n" << v.output;
  }
}

// Screened timing (a search's ranking of its own kernels): a correct kernel is accepted with a
// time, and one that stops working after its correctness trial is caught by the comparison of
// the last screened call's output (one trial: the first-calls cheat passes it).
TEST(CandidateGpu, Kb1ScreenedTimingAcceptsTheCorrectAndChecksTheLastCall) {
  KILN_SKIP_UNLESS_GPUS(1);
  Judgement j = kb1("kb1-19-relu");
  j.trials = 1;
  j.extra = "--timing screen --skip-reference-timing";
  const Verdict correct = judge("kb1_relu_correct.cu", j);
  EXPECT_EQ(correct.exit_code, 0) << correct.output;
  EXPECT_TRUE(has(correct, "accepted")) << correct.output;
  const Verdict cheat = judge("kb1_cheat_first_calls.cu", j);
  EXPECT_NE(cheat.exit_code, 0) << cheat.output;
  EXPECT_TRUE(has(cheat, "screened calls:")) << cheat.output;
}

// --in-process (for Nsight Compute, which cannot follow the supervisor's fork) judges with the
// same rank code in kiln's own process: the correct candidate accepted, a cheat still rejected.
TEST(CandidateGpu, Kb1InProcessJudgesLikeTheSupervisedRank) {
  KILN_SKIP_UNLESS_GPUS(1);
  Judgement j = kb1("kb1-19-relu");
  j.extra = "--in-process";
  const Verdict correct = judge("kb1_relu_correct.cu", j);
  EXPECT_EQ(correct.exit_code, 0) << correct.output;
  EXPECT_TRUE(has(correct, "accepted")) << correct.output;
  const Verdict cheat = judge("kb1_cheat_zero_inputs.cu", j);
  EXPECT_NE(cheat.exit_code, 0) << cheat.output;
  EXPECT_TRUE(has(cheat, "REJECTED")) << cheat.output;
}

TEST(CandidateGpu, Kb1TimeBelowTheFloorIsRejected) {
  KILN_SKIP_UNLESS_GPUS(1);
  // A correct candidate against a floor raised 10^5 times: the judge must call it impossible.
  Judgement j = kb1("kb1-19-relu");
  j.extra = "--floor-scale 100000";
  const Verdict v = judge("kb1_relu_correct.cu", j);
  EXPECT_NE(v.exit_code, 0) << v.output;
  EXPECT_TRUE(has(v, "faster than the hardware allows")) << v.output;
}

TEST(CandidateGpu, Kb1SmallProblemsPassWithKilnsSolutions) {
  KILN_SKIP_UNLESS_GPUS(1);
  std::string output;
  const int code = kiln::core::run_command(
      (build_dir() / "kiln").string() +
          " bench suite -g 1 --problems 'kb1-*' --sizes small --trials 3 -w 2 -n 5",
      output);
  EXPECT_EQ(code, 0) << output;
  EXPECT_TRUE(output.find("# correctness: OK") != std::string::npos) << output;
  EXPECT_EQ(output.find("REFERENCE CHECK FAILED"), std::string::npos) << output;
}

}  // namespace
