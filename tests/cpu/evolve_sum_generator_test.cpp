// The whole-array sum generator without a GPU (issue 20's ladder test): the ladder's genomes are
// valid and their sources carry each step's idea, random genomes of the allowed set generate,
// warp tails refuse interleaved trees, a sample compiles with nvcc into loadable candidates, and
// `kiln evolve export` turns a recorded run's best into a standalone source.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "bench/candidate_library.hpp"
#include "core/error.hpp"
#include "evolve/candidate_evaluator.hpp"
#include "evolve/export.hpp"
#include "evolve/sum_generator.hpp"
#include "evolve/sum_ladder.hpp"
#include "evolve_generator_test_support.hpp"

namespace kiln::evolve {
namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(EvolveSumGenerator, TheLadderStepsCarryTheirIdeas) {
  const auto steps = sum_ladder_genomes();
  ASSERT_EQ(steps.size(), 9u);
  std::map<std::string, std::string> source;
  for (const auto& [name, g] : steps) {
    ASSERT_TRUE(violations(g).empty()) << name << ": " << g.describe();
    for (const std::string& s : g.strategies) EXPECT_TRUE(sum_generated_strategies().count(s));
    source[name] = generate_sum_candidate(g, "reduce-sum-int32");
    EXPECT_EQ(generate_candidate(g, "reduce-sum-int32"), source[name]);
  }
  EXPECT_EQ(steps.front().second, naive_sum_genome());
  EXPECT_TRUE(contains(source["v1"], "t % (2 * s) == 0"));
  EXPECT_TRUE(contains(source["v1"], "scratch + static_cast<long long>(blockIdx.x)"));
  EXPECT_TRUE(contains(source["v1"], "Passes until one value is left"));
  EXPECT_TRUE(contains(source["v2a"], "if (t < s) tree[t] += tree[t + s]"));
  EXPECT_TRUE(contains(source["v2a"], "scratch + static_cast<long long>(blockIdx.x)"));
  EXPECT_TRUE(contains(source["v2b"], "__shared__ unsigned shared_tree[kThreads]"));
  EXPECT_TRUE(contains(source["v2c"], "constexpr int kItems = 2;"));
  EXPECT_TRUE(contains(source["v3a"], "volatile unsigned* v = tree;"));
  EXPECT_TRUE(contains(source["v3b"], "x += __shfl_down_sync"));
  EXPECT_FALSE(contains(source["v3b"], "#pragma unroll\n  for (int s"));
  EXPECT_TRUE(contains(source["v4"], "#pragma unroll\n  for (int s = kThreads / 2;"));
  EXPECT_TRUE(contains(source["vec"], "reinterpret_cast<const uint4*>"));
  EXPECT_TRUE(contains(source["vec"], "atomicAdd(ticket, 1u)"));
  EXPECT_TRUE(contains(source["vec"], "constexpr int kBlocksPerSm = 4;"));
  EXPECT_TRUE(contains(source["vec-atomic"], "atomicAdd(out, total)"));
  EXPECT_TRUE(contains(source["vec-atomic"], "cudaMemsetAsync(out, 0"));
}

TEST(EvolveSumGenerator, RandomGenomesOfTheAllowedSetGenerate) {
  const StrategySet& allowed = sum_generated_strategies();
  EXPECT_EQ(generated_family("reduce-sum-int32"), Family::kReduceAxis);
  EXPECT_EQ(&generated_strategies("reduce-sum-int32"), &allowed);
  Rng rng(11);
  int with_block_tiles = 0;
  for (int i = 0; i < 300; ++i) {
    const Genome g = random_genome(Family::kReduceAxis, rng, 0.5, &allowed);
    ASSERT_TRUE(violations(g).empty()) << g.describe();
    // block-tiles is the only work mapping the generator has, so every genome gets it.
    ASSERT_TRUE(g.has("block-tiles")) << g.describe();
    ++with_block_tiles;
    EXPECT_NO_THROW(generate_sum_candidate(g, "reduce-sum-int32")) << g.describe();
  }
  EXPECT_EQ(with_block_tiles, 300);
  // Warp tails need sequential addressing: the catalog makes the pair incompatible.
  Genome bad = naive_sum_genome();
  bad.strategies.insert("shuffle-last-warp");
  EXPECT_FALSE(violations(bad).empty());
  EXPECT_THROW(generate_sum_candidate(bad, "reduce-sum-int32"), UsageError);
  EXPECT_THROW(generate_sum_candidate(naive_sum_genome(), "kb1-19-relu"), UsageError);
  EXPECT_FALSE(whole_sum_element("kb1-47-sum-reduction").has_value());
}

TEST(EvolveSumGenerator, LadderCandidatesCompileAndLoad) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "kiln_evolve_sum_generator";
  std::filesystem::create_directories(dir);
  for (const auto& [name, g] : sum_ladder_genomes()) {
    if (name != "v1" && name != "v3a" && name != "vec" && name != "vec-atomic") continue;
    const std::filesystem::path file = dir / fmt::format("sum_{}.cu", name);
    std::ofstream(file) << generate_sum_candidate(g, "reduce-sum-int32");
    bench::CandidateBuild build;
    ASSERT_NO_THROW(build = bench::compile_candidate(file.string(), dir.string(), "sm_90a", 300))
        << name << ": " << g.describe();
    EXPECT_NE(bench::CandidateLibrary(build.library).entry(), nullptr) << name;
    expect_split_build(file, file.string());
  }
}

TEST(EvolveCandidateEvaluator, AGenomeTheGeneratorRefusesIsAFailureNotAnError) {
  CandidateEvaluatorOptions o;
  o.kiln = "/nonexistent/kiln";  // never started: the refusal comes first
  o.problem = "reduce-sum-int32";
  o.size = "1e6";
  o.folder = (std::filesystem::path(::testing::TempDir()) / "kiln_evolve_refused").string();
  Genome bad = naive_sum_genome();
  bad.strategies.insert("shuffle-last-warp");  // incompatible with the interleaved tree
  const Evaluation e = candidate_evaluator(o)(bad);
  EXPECT_FALSE(e.correct);
  EXPECT_NE(e.failure.find("not generated: "), std::string::npos) << e.failure;
}

}  // namespace
}  // namespace kiln::evolve

namespace kiln::evolve {
namespace {

// `kiln evolve export` on run 5's recorded 1e8 ladder run (docs/results/2026-11-24-evolve/): the
// best accepted kernel becomes a .cu that compiles on its own (with the copied header) and a .json
// of its strategies and measurements; folders that hold no run are named in the error.
TEST(EvolveExport, TheBestKernelOfARecordedRunCompilesOnItsOwn) {
  const std::filesystem::path repo(KILN_TEST_SOURCE_DIR);
  const std::string run = (repo / "docs/results/2026-11-24-evolve/h100-run5/ladder-1e8").string();
  const std::filesystem::path out =
      std::filesystem::path(::testing::TempDir()) / "kiln_evolve_export";
  std::filesystem::remove_all(out);
  const std::string header = (repo / "include/kiln/candidate.h").string();
  const std::vector<ExportedKernel> k = export_runs({run}, out.string(), header);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].problem, "reduce-sum-int32");
  EXPECT_EQ(k[0].size, "1e8");
  EXPECT_NEAR(k[0].fitness, 0.9316, 1e-3);  // evaluation 135 of the log
  const nlohmann::json record = nlohmann::json::parse(std::ifstream(k[0].json_path));
  EXPECT_EQ(record.at("device").get<std::string>(), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(record.at("strategies").size(), 6u);
  EXPECT_EQ(record.at("evaluation").at("binding").get<std::string>(), "memory");
  std::ifstream source(k[0].source_path);
  const std::string text((std::istreambuf_iterator<char>(source)),
                         std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("U 0.932"), std::string::npos);
  EXPECT_NE(text.find("atomicAdd(out, total)"), std::string::npos);
  EXPECT_FALSE(record.at("needs_cutlass").get<bool>());
  EXPECT_EQ(record.at("build").get<std::string>().find("CUTLASS"), std::string::npos);
  // Standalone: compiled with only the exported folder on the include path (KILN_INCLUDE_DIR).
  ASSERT_EQ(setenv("KILN_INCLUDE_DIR", out.c_str(), 1), 0);
  bench::CandidateBuild build;
  EXPECT_NO_THROW(
      build = bench::compile_candidate(k[0].source_path, (out / "build").string(), "sm_90a", 300));
  unsetenv("KILN_INCLUDE_DIR");
  EXPECT_NE(build.command.find("-I'" + out.string() + "'"), std::string::npos) << build.command;
  // Errors name the folder.
  try {
    export_runs({out.string()}, (out / "again").string(), header);
    FAIL() << "a folder without a run was exported";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("no run.json"), std::string::npos) << e.what();
  }
  EXPECT_THROW(export_runs({run, run}, (out / "twice").string(), header), UsageError);
  // A bad folder among good ones: nothing is written.
  EXPECT_THROW(export_runs({run, (out / "none").string()}, (out / "partial").string(), header),
               UsageError);
  EXPECT_FALSE(std::filesystem::exists(out / "partial"));
  EXPECT_THROW(export_runs({}, out.string(), header), UsageError);
}

// A matmul run's kernel instantiates CUTLASS: its export says so in the build line and the JSON.
TEST(EvolveExport, AMatmulKernelNamesCutlassInItsBuildLine) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "kiln_evolve_export_matmul";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "run");
  Genome g;
  g.family = Family::kMatmul;
  g.strategies = {"cutlass-sm80-mma", "tf32x3"};
  Evaluation e;
  e.correct = true;
  e.us = 2000.0;
  e.roof_us = 800.0;
  e.binding = "compute";
  std::ofstream(dir / "run" / "run.json")
      << nlohmann::json{{"problem", "kb1-2-matmul"}, {"size", "kb"}, {"device", "test"}}.dump();
  std::ofstream(dir / "run" / "log.json")
      << nlohmann::json::array({{{"genome", g.to_json()}, {"evaluation", e.to_json()}}}).dump();
  const std::filesystem::path repo(KILN_TEST_SOURCE_DIR);
  const std::vector<ExportedKernel> k =
      export_runs({(dir / "run").string()}, (dir / "out").string(),
                  (repo / "include/kiln/candidate.h").string());
  ASSERT_EQ(k.size(), 1u);
  const nlohmann::json record = nlohmann::json::parse(std::ifstream(k[0].json_path));
  EXPECT_TRUE(record.at("needs_cutlass").get<bool>());
  EXPECT_NE(record.at("build").get<std::string>().find("-I<CUTLASS 4.x>/include"),
            std::string::npos);
  std::ifstream source(k[0].source_path);
  const std::string text((std::istreambuf_iterator<char>(source)),
                         std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("Build: nvcc"), std::string::npos);
  EXPECT_NE(text.find("#include \"cutlass/gemm/device/gemm_universal.h\""), std::string::npos);
}

}  // namespace
}  // namespace kiln::evolve
