// The excerpts the engine quotes from judge and compiler output.
#include "evolve/judge_output.hpp"

#include <gtest/gtest.h>

#include <string>

namespace kiln::evolve {
namespace {

TEST(EvolveJudgeOutput, TheLastLineNamingAnErrorOrElseTheLastLine) {
  // The launcher's account comes last; an earlier error line (a rank's) loses to it.
  EXPECT_EQ(last_error_line("# judging\nrank 0: CUDA error: out of memory\n\n"
                            "kiln: rank 0 ended with exit code 1 (error above)\n  \n"),
            "kiln: rank 0 ended with exit code 1 (error above)");
  EXPECT_EQ(last_error_line("start\nrank 0 killed by SIGKILL\ndone\n"), "rank 0 killed by SIGKILL");
  EXPECT_EQ(last_error_line("Terminated by Signal 9\r\n"), "Terminated by Signal 9\r");
  EXPECT_EQ(last_error_line("one\ntwo\n\n"), "two");
  EXPECT_EQ(last_error_line(""), "");
  EXPECT_EQ(last_error_line(std::string(500, 'e') + " error").size(), 300u);
}

TEST(EvolveJudgeOutput, ErrorExcerptStartsAtTheFirstError) {
  EXPECT_EQ(error_excerpt("a.cu(3): error: x\nmore"), "error: x\nmore");
  EXPECT_EQ(error_excerpt("no problem here"), "no problem here");
}

TEST(EvolveJudgeOutput, JudgedNothingOnlyWhenTheJudgeLeftNoJudgement) {
  EXPECT_TRUE(judged_nothing("the ranks ended without a report (the log says why) (exit 1): x"));
  EXPECT_TRUE(judged_nothing("no result (exit 1): error: cannot start"));
  EXPECT_FALSE(judged_nothing("trial 0: 3 of 100 elements differ"));
  EXPECT_FALSE(
      judged_nothing("a rank crashed or was killed (the log says which and how) (exit 139)"));
  EXPECT_FALSE(judged_nothing("did not compile (exit -1): error: x"));
  EXPECT_FALSE(judged_nothing(""));
}

}  // namespace
}  // namespace kiln::evolve
