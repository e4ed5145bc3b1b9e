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

}  // namespace
}  // namespace kiln::evolve
