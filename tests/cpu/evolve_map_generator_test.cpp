// The map family's generated kernels without a GPU (issue 20): every problem has an expression,
// the source carries the genome's choices, and a sample of genomes compiles with nvcc into a
// candidate library that loads (the judge's own path), here on the CPU machine.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <algorithm>
#include "bench/candidate_library.hpp"
#include "core/error.hpp"
#include "evolve/candidate_evaluator.hpp"
#include "evolve/map_generator.hpp"
#include "evolve/reduce_generator.hpp"
#include "evolve_generator_test_support.hpp"

namespace kiln::evolve {
namespace {

TEST(EvolveMapGenerator, ExpressionsForTheMapProblemsOnly) {
  for (const char* p :
       {"kb1-5-matrix-scalar", "kb1-19-relu", "kb1-26-gelu", "kb1-88-mingpt-new-gelu"})
    EXPECT_TRUE(map_expression(p).has_value()) << p;
  EXPECT_FALSE(map_expression("kb1-23-softmax").has_value());
  Rng rng(1);
  EXPECT_THROW(generate_map_candidate(random_genome(Family::kMap, rng), "kb1-23-softmax"),
               UsageError);
  EXPECT_THROW(generate_map_candidate(random_genome(Family::kScan, rng), "kb1-19-relu"),
               UsageError);
  // A strategy the generator does not implement is refused, not silently ignored.
  Genome fused;
  fused.family = Family::kMap;
  fused.strategies = {"scalar-loads", "grid-stride", "fused-elementwise"};
  ASSERT_TRUE(violations(fused).empty());
  EXPECT_THROW(generate_map_candidate(fused, "kb1-19-relu"), UsageError);
}

TEST(EvolveMapGenerator, SourceFollowsTheGenome) {
  Genome g;
  g.family = Family::kMap;
  g.strategies = {"vector16-loads", "grid-stride"};
  g.knobs = {
      {"vector16-loads.unroll", 2}, {"grid-stride.threads", 512}, {"grid-stride.blocks_per_sm", 4}};
  ASSERT_TRUE(violations(g).empty());
  const std::string src = generate_map_candidate(g, "kb1-19-relu");
  EXPECT_NE(src.find("float4"), std::string::npos);
  EXPECT_NE(src.find("__launch_bounds__(512)"), std::string::npos);
  EXPECT_NE(src.find("static_cast<long long>(sms) * 4"), std::string::npos);
  EXPECT_NE(src.find("x > 0.0f ? x : 0.0f"), std::string::npos);
  g.strategies = {"scalar-loads", "element-per-thread"};
  g.knobs = {{"scalar-loads.unroll", 4}, {"element-per-thread.threads", 128}};
  const std::string one_shot = generate_map_candidate(g, "kb1-19-relu");
  EXPECT_EQ(one_shot.find("float4"), std::string::npos);
  EXPECT_NE(one_shot.find("(n + 512 - 1) / 512"), std::string::npos);  // 128 threads x 4
}

TEST(EvolveMapGenerator, GeneratedCandidatesCompileAndLoad) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "kiln_evolve_map_generator";
  std::filesystem::create_directories(dir);
  Rng rng(3);
  for (int i = 0; i < 3; ++i) {
    const Genome g = random_genome(Family::kMap, rng, 0.6, &map_generated_strategies());
    const std::string problem = i == 0 ? "kb1-26-gelu" : "kb1-19-relu";
    const std::filesystem::path source = dir / fmt::format("map_{}.cu", i);
    std::ofstream(source) << generate_map_candidate(g, problem);
    bench::CandidateBuild build;
    ASSERT_NO_THROW(build = bench::compile_candidate(source.string(), dir.string(), "sm_90a", 300))
        << g.describe();
    bench::CandidateLibrary library(build.library);
    EXPECT_NE(library.entry(), nullptr);
    expect_split_build(source, source.string());
  }
}

TEST(EvolveReduceGenerator, AllowedStrategiesOnlyAndGeneratedCandidatesCompile) {
  const StrategySet& allowed = reduce_generated_strategies();
  Rng rng(8);
  for (int i = 0; i < 200; ++i) {
    const Genome g = random_genome(Family::kReduceAxis, rng, 0.5, &allowed);
    ASSERT_TRUE(violations(g).empty()) << g.describe();
    for (const std::string& s : g.strategies) EXPECT_TRUE(allowed.count(s)) << s;
    for (const std::string& s : mutate_strategy(g, rng, {}, &allowed).strategies)
      EXPECT_TRUE(allowed.count(s)) << s;
  }
  EXPECT_FALSE(middle_reduction_of("kb1-19-relu").has_value());
  EXPECT_EQ(middle_reduction_of("kb1-51-argmax").value(), "argmax");
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "kiln_evolve_reduce_generator";
  std::filesystem::create_directories(dir);
  // One genome per work mapping, on sum, argmax and mean.
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"kb1-47-sum-reduction", {"scalar-loads", "row-per-warp", "shared-tree"}},
      {"kb1-51-argmax", {"scalar-loads", "row-per-block", "shared-tree"}},
      {"kb1-48-mean-reduction", {"scalar-loads", "split-row", "shared-tree"}},
      {"kb1-52-argmin", {"scalar-loads", "split-row", "shared-tree", "column-strips"}}};
  for (std::size_t i = 0; i < cases.size(); ++i) {
    Genome g;
    g.family = Family::kReduceAxis;
    g.strategies = {cases[i].second.begin(), cases[i].second.end()};
    ASSERT_TRUE(violations(g).empty()) << g.describe();
    const std::string source = generate_reduce_candidate(g, cases[i].first);
    EXPECT_NE(
        source.find(i == 1 || i == 3 ? "long long* __restrict__ out" : "float* __restrict__ out"),
        std::string::npos);
    EXPECT_NE(source.find(fmt::format("constexpr int kCols = {};", i == 3 ? 4 : 1)),
              std::string::npos);
    const std::filesystem::path file = dir / fmt::format("reduce_{}.cu", i);
    std::ofstream(file) << source;
    bench::CandidateBuild build;
    ASSERT_NO_THROW(build = bench::compile_candidate(file.string(), dir.string(), "sm_90a", 300))
        << g.describe();
    EXPECT_NE(bench::CandidateLibrary(build.library).entry(), nullptr);
    expect_split_build(file, file.string());
  }
  Genome unsupported;
  unsupported.family = Family::kReduceAxis;
  unsupported.strategies = {"vector16-loads", "row-per-block", "warp-shuffle"};
  EXPECT_THROW(generate_reduce_candidate(unsupported, "kb1-47-sum-reduction"), UsageError);
}

}  // namespace
}  // namespace kiln::evolve

namespace kiln::evolve {
namespace {

TEST(EvolveCandidatePreparer, CompilesABatchAheadAndTheJudgeReusesIt) {
  CandidateEvaluatorOptions o;
  o.problem = "kb1-19-relu";
  o.folder = (std::filesystem::path(::testing::TempDir()) / "kiln_evolve_preparer").string();
  std::filesystem::remove_all(o.folder);
  Rng rng(12);
  std::vector<Genome> batch;
  while (batch.size() < 3) {
    const Genome g = random_genome(Family::kMap, rng, 0.5, &map_generated_strategies());
    if (std::none_of(batch.begin(), batch.end(), [&](const Genome& b) { return b == g; }))
      batch.push_back(g);
  }
  candidate_preparer(o, 3)(batch);
  for (const Genome& g : batch) {
    const std::string stem = fmt::format("{}/{:016x}", o.folder, g.hash());
    ASSERT_TRUE(std::filesystem::exists(stem + ".so")) << g.describe();
    // The judge's compile of the same source is a reuse, not a second nvcc run.
    const bench::CandidateBuild again =
        bench::compile_candidate(stem + ".cu", o.folder, "sm_90a", 300);
    EXPECT_NE(again.log.find("reused"), std::string::npos) << again.log;
  }
  // A changed source is built again.
  const std::string stem = fmt::format("{}/{:016x}", o.folder, batch[0].hash());
  std::ofstream(stem + ".cu", std::ios::app) << "\n// changed\n";
  EXPECT_EQ(bench::compile_candidate(stem + ".cu", o.folder, "sm_90a", 300).log.find("reused"),
            std::string::npos);
}

}  // namespace
}  // namespace kiln::evolve

namespace kiln::evolve {
namespace {

// A genome whose source nvcc rejects gets the verdict the judge would write ("did not compile")
// from the preparer's own build, with no judge launched (the kiln binary named here does not
// exist: a launch would read "no result (exit 127)").
TEST(EvolveCandidatePreparer, ABuildFailureIsTheVerdictWithoutAJudgeLaunch) {
  CandidateEvaluatorOptions o;
  o.kiln = "/nonexistent/kiln";
  o.problem = "kb1-19-relu";
  o.folder = (std::filesystem::path(::testing::TempDir()) / "kiln_evolve_build_failure").string();
  std::filesystem::remove_all(o.folder);
  o.batch = std::make_shared<BatchVerdicts>();
  o.serve = true;
  Rng rng(5);
  const Genome g = random_genome(Family::kMap, rng, 0.5, &map_generated_strategies());
  const char* before = std::getenv("KILN_NVCC");
  const std::string kept = before ? before : "";
  setenv("KILN_NVCC", "/bin/false", 1);  // every build fails
  candidate_preparer(o, 2)({g});
  if (before) {
    setenv("KILN_NVCC", kept.c_str(), 1);
  } else {
    unsetenv("KILN_NVCC");
  }
  EXPECT_EQ(o.batch->compile_failures.count(g.hash()), 1u);
  EXPECT_TRUE(o.batch->judged.empty());
  const Evaluation e = candidate_evaluator(o)(g);
  EXPECT_FALSE(e.correct);
  EXPECT_EQ(e.failure.rfind("did not compile (exit -1)", 0), 0u) << e.failure;
  EXPECT_TRUE(o.batch->compile_failures.empty());  // taken once
  // No judge server was started for a batch with nothing built.
  EXPECT_FALSE(std::filesystem::exists(o.folder + "/serve-" + std::to_string(getpid()) + "-0"));
}

}  // namespace
}  // namespace kiln::evolve
