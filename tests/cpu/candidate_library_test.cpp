// Outside candidates without a GPU: nvcc compiles them into shared libraries and kiln loads them,
// refusing sources that do not compile, lack the entry point or declare another ABI version.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "bench/candidate_library.hpp"
#include "core/error.hpp"

namespace kiln::bench {
namespace {

const std::string kCandidates = std::string(KILN_TEST_SOURCE_DIR) + "/tests/candidates/";

std::string scratch_dir() {
  const auto dir = std::filesystem::temp_directory_path() / "kiln-candidate-test";
  std::filesystem::create_directories(dir);
  return dir.string();
}

std::string usage_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(CandidateLibrary, CompilesAndLoadsACorrectCandidate) {
  const CandidateBuild build =
      compile_candidate(kCandidates + "allgather_pull.cu", scratch_dir(), "sm_90a", 300);
  EXPECT_TRUE(std::filesystem::is_regular_file(build.library)) << build.log;
  // Machine code for the judge's architecture alone (no second compile for PTX).
  EXPECT_NE(build.command.find("-gencode arch=compute_90a,code=sm_90a"), std::string::npos)
      << build.command;
  const CandidateLibrary library(build.library);
  EXPECT_NE(library.entry(), nullptr);
}

TEST(CandidateLibrary, RefusesWhatCannotRunNamingWhy) {
  EXPECT_NE(usage_error_of([] {
              compile_candidate(kCandidates + "does_not_compile.cu", scratch_dir(), "sm_90a", 300);
            }).find("nvcc failed"),
            std::string::npos);
  const CandidateBuild no_entry =
      compile_candidate(kCandidates + "no_entry_point.cu", scratch_dir(), "sm_90a", 300);
  EXPECT_NE(usage_error_of([&] {
              CandidateLibrary library(no_entry.library);
            }).find("no kiln_candidate_run"),
            std::string::npos);
  const CandidateBuild wrong_abi =
      compile_candidate(kCandidates + "wrong_abi.cu", scratch_dir(), "sm_90a", 300);
  EXPECT_NE(
      usage_error_of([&] { CandidateLibrary library(wrong_abi.library); }).find("ABI version"),
      std::string::npos);
  EXPECT_NE(usage_error_of([] {
              compile_candidate(kCandidates + "missing.cu", scratch_dir(), "sm_90a", 300);
            }).find("no such file"),
            std::string::npos);
}

// Two candidates loaded in one process (a batch judgement) keep their own template statics, even
// when both instantiate the same template: with g++'s default STB_GNU_UNIQUE the second library
// would read the first one's (CUTLASS's "device properties initialised" flag, H100 2026-11-25).
TEST(CandidateLibrary, TwoLibrariesOfOneTemplateKeepTheirOwnStatics) {
  const std::filesystem::path dir = std::filesystem::path(scratch_dir()) / "unique";
  std::filesystem::create_directories(dir);
  const std::string source =
      "#include \"kiln/candidate.h\"\n"
      "template <int N> struct Calls { static int count; };\n"
      "template <int N> int Calls<N>::count = 0;\n"
      "extern \"C\" int kiln_candidate_abi_version(void) { return KILN_CANDIDATE_ABI_VERSION; }\n"
      "extern \"C\" int kiln_candidate_run(const KilnCandidateArgs*) { return ++Calls<7>::count; "
      "}\n";
  for (const char* stem : {"first", "second"})
    std::ofstream(dir / (std::string(stem) + ".cu")) << source;
  const CandidateLibrary first(
      compile_candidate((dir / "first.cu").string(), dir.string(), "sm_90a", 300).library);
  const CandidateLibrary second(
      compile_candidate((dir / "second.cu").string(), dir.string(), "sm_90a", 300).library);
  KilnCandidateArgs args{};
  EXPECT_EQ(first.entry()(&args), 1);
  EXPECT_EQ(first.entry()(&args), 2);
  EXPECT_EQ(second.entry()(&args), 1) << "the second library counted on the first one's static";
}

// The shared build cache: the same code under other comments (another problem's name, another
// genome's description) is copied, not compiled; other code is compiled.
TEST(CandidateLibrary, TheSharedCacheReusesTheSameCodeOnly) {
  const std::filesystem::path dir = std::filesystem::path(scratch_dir()) / "shared-cache";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string cache = (dir / "cache").string();
  const auto write = [&](const char* stem, const std::string& comment, int value) {
    std::ofstream(dir / (std::string(stem) + ".cu"))
        << "// " << comment << "\n"
        << "#include \"kiln/candidate.h\"\n"
        << "extern \"C\" int kiln_candidate_abi_version(void) { return KILN_CANDIDATE_ABI_VERSION; "
           "}\n"
        << "  // " << comment << ", indented\n"
        << "extern \"C\" int kiln_candidate_run(const KilnCandidateArgs*) { return " << value
        << "; }\n";
    return (dir / (std::string(stem) + ".cu")).string();
  };
  const CandidateBuild first = compile_candidate(write("square", "for kb1-1", 41),
                                                 (dir / "a").string(), "sm_90a", 300, cache);
  EXPECT_EQ(first.log.find("copied"), std::string::npos) << first.log;
  const CandidateBuild same = compile_candidate(write("symmetric", "for kb1-13", 41),
                                                (dir / "b").string(), "sm_90a", 300, cache);
  EXPECT_NE(same.log.find("copied from the build cache"), std::string::npos) << same.log;
  KilnCandidateArgs args{};
  EXPECT_EQ(CandidateLibrary(same.library).entry()(&args), 41);
  const CandidateBuild other = compile_candidate(write("other", "for kb1-13", 42),
                                                 (dir / "c").string(), "sm_90a", 300, cache);
  EXPECT_EQ(other.log.find("copied"), std::string::npos) << other.log;
  EXPECT_EQ(CandidateLibrary(other.library).entry()(&args), 42);
  // Without the cache nothing is shared.
  const CandidateBuild alone =
      compile_candidate(write("alone", "for kb1-14", 41), (dir / "d").string(), "sm_90a", 300);
  EXPECT_EQ(alone.log.find("copied"), std::string::npos) << alone.log;
}

}  // namespace
}  // namespace kiln::bench
