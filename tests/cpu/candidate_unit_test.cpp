// Splitting a candidate source at its kiln-unit markers (bench/candidate_unit.hpp), and a
// candidate with a unit compiled, linked and loaded (nvcc, no GPU).
#include "bench/candidate_unit.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "bench/candidate_library.hpp"
#include "core/error.hpp"

namespace kiln::bench {
namespace {

TEST(CandidateUnit, SplitsAtTheMarkersKeepingLineNumbers) {
  const std::string source =
      "#include <a>\n"
      "// kiln-unit: begin\n"
      "int unit() { return 1; }\n"
      "  // kiln-unit: end  \n"
      "int rest() { return unit(); }\n";
  const auto split = split_candidate_unit(source, "x.cu");
  ASSERT_TRUE(split.has_value());
  ASSERT_EQ(split->units.size(), 1u);
  EXPECT_EQ(split->units[0],
            "// kiln-unit: begin\nint unit() { return 1; }\n  // kiln-unit: end  \n");
  EXPECT_EQ(split->rest, "#include <a>\n\n\n\nint rest() { return unit(); }\n");
  EXPECT_FALSE(split_candidate_unit("int f();\n// kiln-unit: beginning\n", "x.cu").has_value());
}

TEST(CandidateUnit, SeveralUnitsInOrder) {
  const auto split = split_candidate_unit(
      "// kiln-unit: begin\nint a();\n// kiln-unit: end\nint r;\n// kiln-unit: begin\nint "
      "b();\n// kiln-unit: end\n",
      "x.cu");
  ASSERT_TRUE(split.has_value());
  ASSERT_EQ(split->units.size(), 2u);
  EXPECT_EQ(split->units[0], "// kiln-unit: begin\nint a();\n// kiln-unit: end\n");
  EXPECT_EQ(split->units[1], "// kiln-unit: begin\nint b();\n// kiln-unit: end\n");
  EXPECT_EQ(split->rest, "\n\n\nint r;\n\n\n\n");
}

TEST(CandidateUnit, RefusesUnbalancedOrRepeatedMarkers) {
  const auto message = [](const std::string& source) {
    try {
      (void)split_candidate_unit(source, "--source x.cu");
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_NE(message("// kiln-unit: begin\nint a;\n").find("without a `// kiln-unit: end`"),
            std::string::npos);
  EXPECT_NE(message("int a;\n// kiln-unit: end\n").find("without a `// kiln-unit: begin`"),
            std::string::npos);
  EXPECT_NE(message("// kiln-unit: begin\n// kiln-unit: begin\n// kiln-unit: end\n")
                .find("inside a unit"),
            std::string::npos);
  EXPECT_NE(message("int a;\n// kiln-unit: end\n").find("--source x.cu"), std::string::npos);
  EXPECT_EQ(message("// kiln-unit: begin\n// kiln-unit: end\n"), "(accepted)");
  EXPECT_EQ(message("// kiln-unit: begin\n// kiln-unit: end\n// kiln-unit: begin\n// kiln-unit: "
                    "end\n"),
            "(accepted)");
}

// Two candidates sharing a unit: one object built, both libraries load and run their own rest;
// the unit is compiled on its own (a second translation unit), and the whole file is still one.
TEST(CandidateUnit, SharedUnitIsBuiltOnceAndLinked) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "kiln_candidate_unit";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto candidate = [&](const std::string& name, int returned) {
    const std::filesystem::path file = dir / (name + ".cu");
    std::ofstream(file)
        << "#include \"kiln/candidate.h\"\n"
           "// kiln-unit: begin\n"
           "// a comment that differs: "
        << name
        << "\n"
           "extern \"C\" __attribute__((visibility(\"hidden\"))) int twice(int x) "
           "{ return 2 * x; }\n"
           "// kiln-unit: end\n"
           "extern \"C\" __attribute__((visibility(\"hidden\"))) int twice(int x);\n"
           "extern \"C\" int kiln_candidate_run(const KilnCandidateArgs*) { return "
           "twice("
        << returned << "); }\n";
    return file.string();
  };
  const CandidateBuild one = compile_candidate(candidate("one", 1), (dir / "out").string(),
                                               "sm_90a", 300, (dir / "cache").string());
  const CandidateBuild two = compile_candidate(candidate("two", 3), (dir / "out").string(),
                                               "sm_90a", 300, (dir / "cache").string());
  int objects = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir / "cache" / "units"))
    objects += entry.path().extension() == ".o";
  EXPECT_EQ(objects, 1);
  // The log says which build compiled the unit and which reused it (the command is the recipe).
  EXPECT_EQ(one.log.rfind("(kiln-units: 0 of 1 reused from ", 0), 0u) << one.log;
  EXPECT_NE(one.log.find(", 1 compiled)"), std::string::npos) << one.log;
  EXPECT_EQ(two.log.rfind("(kiln-units: 1 of 1 reused from ", 0), 0u) << two.log;
  EXPECT_NE(two.log.find(", 0 compiled)"), std::string::npos) << two.log;
  CandidateLibrary a(one.library), b(two.library);
  KilnCandidateArgs args{};
  EXPECT_EQ(a.entry()(&args), 2);
  EXPECT_EQ(b.entry()(&args), 6);
  // The unit's object is not exported from the library (hidden), so two loaded candidates never
  // bind to each other's unit.
  EXPECT_NE(two.command.find(" -shared -o "), std::string::npos);
  // Built again from the same source by the same command: reused, also by a caller without the
  // cache (the judge, given the source the engine compiled).
  EXPECT_NE(compile_candidate(candidate("two", 3), (dir / "out").string(), "sm_90a", 300)
                .log.find("reused"),
            std::string::npos);
  // Built again from the same source by the same command: reused.
  EXPECT_NE(compile_candidate(candidate("two", 3), (dir / "out").string(), "sm_90a", 300,
                              (dir / "cache").string())
                .log.find("reused"),
            std::string::npos);
}

// A unit object is named by what its build stands for, not where: the same candidate headers in
// another folder give the same object name (units compiled on one machine serve a device call
// that carries them), and a header whose contents changed gives another.
TEST(CandidateUnit, TheUnitsNameDependsOnTheHeadersContentsNotTheirPlace) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "kiln_candidate_unit_place";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::filesystem::path headers = candidate_include_dir();
  for (const char* copy : {"here", "there", "changed"})
    std::filesystem::copy(headers, dir / copy, std::filesystem::copy_options::recursive);
  std::ofstream(dir / "changed" / "kiln" / "candidate.h", std::ios::app) << "\n// changed\n";
  const std::filesystem::path source = dir / "c.cu";
  std::ofstream(source) << "#include \"kiln/candidate.h\"\n"
                           "// kiln-unit: begin\n"
                           "extern \"C\" __attribute__((visibility(\"hidden\"))) int one() "
                           "{ return 1; }\n"
                           "// kiln-unit: end\n"
                           "extern \"C\" __attribute__((visibility(\"hidden\"))) int one();\n"
                           "extern \"C\" int kiln_candidate_run(const KilnCandidateArgs*) "
                           "{ return one(); }\n";
  const auto unit_name = [&](const char* copy) {
    ::setenv("KILN_INCLUDE_DIR", (dir / copy).c_str(), 1);
    const std::filesystem::path cache = dir / (std::string("cache-") + copy);
    (void)compile_candidate(source.string(), (dir / (std::string("out-") + copy)).string(),
                            "sm_90a", 300, cache.string());
    ::unsetenv("KILN_INCLUDE_DIR");
    std::string name;
    for (const auto& entry : std::filesystem::directory_iterator(cache / "units"))
      if (entry.path().extension() == ".o") name = entry.path().filename().string();
    return name;
  };
  const std::string here = unit_name("here");
  ASSERT_FALSE(here.empty());
  EXPECT_EQ(unit_name("there"), here);
  EXPECT_NE(unit_name("changed"), here);
}

}  // namespace
}  // namespace kiln::bench
