// The verdict on an outside candidate in its JSON (bench/candidate_verdict.hpp) without a GPU: the
// reason from the ranks' exit and report, added to the ranks' report, or written alone where the
// ranks left none or something unreadable.
#include "bench/candidate_verdict.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace kiln::bench {
namespace {

const nlohmann::json kIncorrect = {
    {"rows",
     {{{"size", "64K"}, {"correct", true}, {"skipped", ""}},
      {{"size", "1M"}, {"correct", false}, {"skipped", "needs 4 ranks"}},
      {{"size", "16M"}, {"correct", false}, {"skipped", ""}, {"failure", "byte 7 is 0x7f"}}}}};

TEST(CandidateVerdict, ReasonNamesTheFirstIncorrectRowElseTheExit) {
  EXPECT_EQ(rejection_reason(1, kIncorrect, 120), "incorrect at 16M: byte 7 is 0x7f");
  EXPECT_EQ(rejection_reason(124, nullptr, 120), "ran past --time-limit 120 s");
  EXPECT_NE(rejection_reason(137, nullptr, 120).find("crashed or was killed"), std::string::npos);
  EXPECT_NE(rejection_reason(1, nullptr, 120).find("without a report"), std::string::npos);
  const nlohmann::json all_correct = {{"rows", {{{"size", "64K"}, {"correct", true}}}}};
  EXPECT_NE(rejection_reason(1, all_correct, 120).find("nothing was judged"), std::string::npos);
}

class CandidateVerdictFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("kiln-verdict-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    verdict_.name = "crashes";
    verdict_.source = "tests/candidates/crashes.cu";
    verdict_.problem = "allgather";
    verdict_.exit_code = 139;
    verdict_.reason = "a rank crashed";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path() const { return (dir_ / "verdict.json").string(); }

  std::filesystem::path dir_;
  CandidateVerdict verdict_;
  core::Provenance provenance_;
};

TEST_F(CandidateVerdictFile, AddedToTheRanksReport) {
  std::ofstream(path()) << kIncorrect.dump();
  record_candidate_verdict(path(), verdict_, provenance_);
  const nlohmann::json report = read_report(path());
  ASSERT_TRUE(report.is_object());
  EXPECT_EQ(report["rows"].size(), 3u);  // the ranks' rows kept
  EXPECT_EQ(report["verdict"]["candidate"], "crashes");
  EXPECT_EQ(report["verdict"]["accepted"], false);
  EXPECT_EQ(report["verdict"]["exit_code"], 139);
  EXPECT_FALSE(report["verdict"].contains("build_log"));
  EXPECT_FALSE(std::filesystem::exists(path() + ".partial"));
}

TEST_F(CandidateVerdictFile, WrittenAloneWhereTheRanksLeftNoneOrGarbage) {
  record_candidate_verdict(path(), verdict_, provenance_);
  nlohmann::json report = read_report(path());
  ASSERT_TRUE(report.is_object());
  EXPECT_EQ(report["benchmark"], "candidate");
  EXPECT_TRUE(report["rows"].empty());
  EXPECT_TRUE(report.contains("provenance"));
  EXPECT_EQ(report["verdict"]["reason"], "a rank crashed");
  std::ofstream(path()) << "{ half a report";  // a rank killed while writing
  EXPECT_TRUE(read_report(path()).is_null());
  EXPECT_NE(rejection_reason(137, read_report(path()), 60).find("crashed"), std::string::npos);
  EXPECT_NE(rejection_reason(1, read_report(path()), 60).find("without a report"),
            std::string::npos);
  verdict_.build_log = std::string(20000, 'x');
  record_candidate_verdict(path(), verdict_, provenance_);
  report = read_report(path());
  ASSERT_TRUE(report.is_object());
  EXPECT_EQ(report["verdict"]["build_log"].get<std::string>().size(), 8192u);
  record_candidate_verdict("", verdict_, provenance_);  // no --json: nothing, no throw
}

}  // namespace
}  // namespace kiln::bench
